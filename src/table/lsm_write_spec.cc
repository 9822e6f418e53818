#include "table/lsm_write_spec.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "format/bucket_hash.h"
#include "table/writer_config.h"

namespace strata::table {
namespace {

using nlohmann::json;

Result<ShardingMode> ModeFromName(const std::string& name) {
  if (name == "unsharded") return ShardingMode::kUnsharded;
  if (name == "bucket") return ShardingMode::kBucket;
  if (name == "identity") return ShardingMode::kIdentity;
  return Status::Invalid("sharding.mode must be one of unsharded, bucket, identity, got '" + name +
                         "'");
}

/// The MemWAL spec's identity source types.
bool IdentitySupports(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::TypeId::kBool:
    case arrow::TypeId::kInt8:
    case arrow::TypeId::kInt16:
    case arrow::TypeId::kInt32:
    case arrow::TypeId::kInt64:
    case arrow::TypeId::kUInt8:
    case arrow::TypeId::kUInt16:
    case arrow::TypeId::kUInt32:
    case arrow::TypeId::kUInt64:
    case arrow::TypeId::kUtf8:
    case arrow::TypeId::kLargeUtf8:
      return true;
    default:
      return false;
  }
}

Status ParseSharding(const json& s, LsmWriteSpec* out) {
  if (!s.is_object()) {
    return Status::Invalid(std::string("sharding must be an object, got ") + s.type_name());
  }
  for (const auto& [key, value] : s.items()) {
    (void)value;
    if (key != "mode" && key != "column" && key != "num_buckets") {
      return Status::Invalid("sharding." + key +
                             " is not a field of the sharding spec (mode, column, num_buckets)");
    }
  }
  auto mode = s.find("mode");
  if (mode == s.end() || !mode->is_string()) {
    return Status::Invalid("sharding.mode is required: unsharded, bucket or identity");
  }
  STRATA_ASSIGN_OR_RETURN(out->mode, ModeFromName(mode->get<std::string>()));
  auto column = s.find("column");
  auto buckets = s.find("num_buckets");
  const bool has_column = column != s.end() && !column->is_null();
  const bool has_buckets = buckets != s.end() && !buckets->is_null();
  const std::string mode_name = ShardingModeName(out->mode);
  if (out->mode == ShardingMode::kUnsharded) {
    if (has_column) return Status::Invalid("sharding.column is not allowed for mode unsharded");
    if (has_buckets) {
      return Status::Invalid("sharding.num_buckets is not allowed for mode unsharded");
    }
    return Status::OK();
  }
  if (!has_column || !column->is_string() || column->get<std::string>().empty()) {
    return Status::Invalid("sharding.column (a column name) is required for mode " + mode_name);
  }
  out->column = column->get<std::string>();
  if (out->mode == ShardingMode::kIdentity) {
    if (has_buckets) {
      return Status::Invalid("sharding.num_buckets is not allowed for mode identity");
    }
    return Status::OK();
  }
  const std::string range =
      "[" + std::to_string(kMinBuckets) + ", " + std::to_string(kMaxBuckets) + "]";
  if (!has_buckets || !buckets->is_number_integer()) {
    return Status::Invalid("sharding.num_buckets (an integer in " + range +
                           ") is required for mode bucket");
  }
  // is_number_integer: a negative value parses as a signed integer.
  const int64_t n = buckets->is_number_unsigned() && buckets->get<uint64_t>() > uint64_t{1} << 62
                        ? kMaxBuckets + 1
                        : buckets->get<int64_t>();
  if (n < kMinBuckets || n > kMaxBuckets) {
    return Status::Invalid("sharding.num_buckets must be in " + range + ", got " + buckets->dump());
  }
  out->num_buckets = n;
  return Status::OK();
}

}  // namespace

const char* ShardingModeName(ShardingMode mode) {
  switch (mode) {
    case ShardingMode::kUnsharded:
      return "unsharded";
    case ShardingMode::kBucket:
      return "bucket";
    case ShardingMode::kIdentity:
      return "identity";
  }
  return "unsharded";
}

int64_t LsmWriteSpec::NumShards() const {
  switch (mode) {
    case ShardingMode::kUnsharded:
      return 1;
    case ShardingMode::kBucket:
      return num_buckets;
    case ShardingMode::kIdentity:
      return 0;
  }
  return 1;
}

Result<LsmWriteSpec> ParseLsmWriteSpec(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Invalid("LSM write spec: the body is not valid JSON");
  if (!j.is_object()) {
    return Status::Invalid(std::string("LSM write spec: the body must be a JSON object, got ") +
                           j.type_name());
  }
  LsmWriteSpec spec;
  for (const auto& [key, value] : j.items()) {
    (void)value;
    if (key != "sharding" && key != "maintained_indexes" && key != "writer_config_defaults") {
      return Status::Invalid(key +
                             " is not a field of the LSM write spec (sharding, maintained_indexes, "
                             "writer_config_defaults)");
    }
  }
  auto sharding = j.find("sharding");
  if (sharding == j.end() || sharding->is_null()) {
    return Status::Invalid(
        "sharding is required (an object with mode unsharded, bucket or "
        "identity)");
  }
  STRATA_RETURN_IF_ERROR(ParseSharding(*sharding, &spec));
  if (auto m = j.find("maintained_indexes"); m != j.end() && !m->is_null()) {
    if (!m->is_array()) {
      return Status::Invalid(std::string("maintained_indexes must be an array of index names, "
                                         "got ") +
                             m->type_name());
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < m->size(); ++i) {
      const json& name = (*m)[i];
      if (!name.is_string() || name.get<std::string>().empty()) {
        return Status::Invalid("maintained_indexes[" + std::to_string(i) +
                               "] must be a non-empty index name");
      }
      if (seen.insert(name.get<std::string>()).second) {
        spec.maintained_indexes.push_back(name.get<std::string>());
      }
    }
  }
  if (auto w = j.find("writer_config_defaults"); w != j.end() && !w->is_null()) {
    if (!w->is_object()) {
      return Status::Invalid(std::string("writer_config_defaults must be an object of string "
                                         "values, got ") +
                             w->type_name());
    }
    for (const auto& [key, value] : w->items()) {
      if (value.is_string()) {
        spec.writer_config_defaults[key] = value.get<std::string>();
      } else if (value.is_boolean() || value.is_number_integer()) {
        spec.writer_config_defaults[key] = value.dump();
      } else {
        return Status::Invalid("writer_config_defaults." + key + " must be a string, got " +
                               value.type_name());
      }
    }
    STRATA_RETURN_IF_ERROR(ValidateWriterConfig(spec.writer_config_defaults));
  }
  return spec;
}

std::string LsmWriteSpecToJson(const LsmWriteSpec& spec) {
  json sharding = {{"mode", ShardingModeName(spec.mode)}};
  if (spec.mode != ShardingMode::kUnsharded) sharding["column"] = spec.column;
  if (spec.mode == ShardingMode::kBucket) sharding["num_buckets"] = spec.num_buckets;
  json config = json::object();
  for (const auto& [k, v] : spec.writer_config_defaults) config[k] = v;
  json out = {{"sharding", sharding},
              {"maintained_indexes", spec.maintained_indexes},
              {"writer_config_defaults", config}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

Status ValidateLsmWriteSpec(const LsmWriteSpec& spec, const LsmSpecTarget& target) {
  if (target.schema == nullptr) return Status::Invalid("LSM write spec: the table has no schema");
  if (target.primary_key.empty()) {
    return Status::Invalid(
        "an LSM write spec needs a table with a primary key (declare one with the field "
        "metadata lance-schema:unenforced-primary-key or create/?primary_key=)");
  }
  if (spec.mode == ShardingMode::kBucket) {
    if (target.primary_key.size() != 1) {
      return Status::Invalid(
          "sharding.column: bucket sharding needs a single-column primary "
          "key; the table's key has " +
          std::to_string(target.primary_key.size()) + " columns");
    }
    if (spec.column != target.primary_key[0]) {
      return Status::Invalid("sharding.column '" + spec.column +
                             "' must be the table's primary key column '" + target.primary_key[0] +
                             "' for bucket sharding");
    }
    const int i = target.schema->GetFieldIndex(spec.column);
    if (i < 0) return Status::Invalid("sharding.column '" + spec.column + "' is not a column");
    const auto& type = *target.schema->field(i)->type;
    if (!format::BucketHashSupports(type)) {
      return Status::Invalid("sharding.column '" + spec.column + "' has type " + type.ToString() +
                             ", which bucket sharding does not hash (bool, integers, floats, "
                             "date32, time, timestamp, utf8, large_utf8)");
    }
  } else if (spec.mode == ShardingMode::kIdentity) {
    const int i = target.schema->GetFieldIndex(spec.column);
    if (i < 0) {
      return Status::Invalid("sharding.column '" + spec.column + "' is not a column of the table");
    }
    const auto& type = *target.schema->field(i)->type;
    if (!IdentitySupports(type)) {
      return Status::Invalid("sharding.column '" + spec.column + "' has type " + type.ToString() +
                             "; identity sharding takes a scalar bool, integer, utf8 or "
                             "large_utf8 column");
    }
    if (std::find(target.primary_key.begin(), target.primary_key.end(), spec.column) ==
        target.primary_key.end()) {
      std::string key;
      for (const auto& k : target.primary_key) key += (key.empty() ? "" : ", ") + k;
      return Status::Invalid("sharding.column '" + spec.column +
                             "' must be one of the primary key's columns (" + key +
                             ") for identity sharding: a row's shard must follow from its key, "
                             "or one key could live in two shards (declare a key that holds "
                             "it, e.g. (" +
                             spec.column + ", " + target.primary_key[0] + "))");
    }
  }
  for (const auto& name : spec.maintained_indexes) {
    bool found = false;
    for (const auto& idx : target.indexes) found |= idx.name == name;
    if (!found) {
      std::string known;
      for (const auto& idx : target.indexes) known += (known.empty() ? "" : ", ") + idx.name;
      return Status::Invalid(
          "maintained_indexes: '" + name +
          "' is not an index of the table (indexes: " + (known.empty() ? "none" : known) + ")");
    }
  }
  return ValidateWriterConfig(spec.writer_config_defaults);
}

bool HasIdentitySpec(const format::TableManifest& m) {
  return m.has_lsm_write_spec() &&
         m.lsm_write_spec().mode() == ShardingModeName(ShardingMode::kIdentity);
}

format::LsmWriteSpec LsmWriteSpecToProto(const LsmWriteSpec& spec) {
  format::LsmWriteSpec p;
  p.set_mode(ShardingModeName(spec.mode));
  p.set_column(spec.column);
  p.set_num_buckets(static_cast<uint32_t>(spec.num_buckets));
  for (const auto& n : spec.maintained_indexes) p.add_maintained_indexes(n);
  for (const auto& [k, v] : spec.writer_config_defaults)
    (*p.mutable_writer_config_defaults())[k] = v;
  return p;
}

Result<LsmWriteSpec> LsmWriteSpecFromProto(const format::LsmWriteSpec& p) {
  LsmWriteSpec spec;
  auto mode = ModeFromName(p.mode());
  if (!mode.ok()) return Status::Corruption("stored LSM write spec: " + mode.status().message());
  spec.mode = *mode;
  spec.column = p.column();
  spec.num_buckets = p.num_buckets();
  if (spec.mode == ShardingMode::kBucket &&
      (spec.num_buckets < kMinBuckets || spec.num_buckets > kMaxBuckets)) {
    return Status::Corruption("stored LSM write spec: num_buckets " +
                              std::to_string(spec.num_buckets) + " is out of range");
  }
  spec.maintained_indexes.assign(p.maintained_indexes().begin(), p.maintained_indexes().end());
  for (const auto& [k, v] : p.writer_config_defaults()) spec.writer_config_defaults[k] = v;
  return spec;
}

}  // namespace strata::table
