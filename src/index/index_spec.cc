#include "index/index_spec.h"

#include <algorithm>
#include <cmath>
#include <exception>

#include <nlohmann/json.hpp>

namespace strata::index {

const char* IndexKindName(IndexKind kind) {
  switch (kind) {
    case IndexKind::kHnsw:
      return "HNSW";
    case IndexKind::kBTree:
      return "BTREE";
    case IndexKind::kFts:
      return "FTS";
  }
  return "?";
}

namespace {

bool IsScalarKeyType(arrow::TypeId id) {
  switch (id) {
    case arrow::TypeId::kNull:
    case arrow::TypeId::kList:
    case arrow::TypeId::kLargeList:
    case arrow::TypeId::kFixedSizeList:
    case arrow::TypeId::kStruct:
      return false;
    default:
      return true;
  }
}

}  // namespace

Status ValidateIndexSpec(const IndexSpec& spec, const arrow::Schema& schema) {
  if (spec.name.empty() || spec.name.size() > 256) {
    return Status::Invalid("index name must be 1 to 256 bytes, got " +
                           std::to_string(spec.name.size()));
  }
  const int c = schema.GetFieldIndex(spec.column);
  if (c < 0) {
    return Status::Invalid("index column '" + spec.column + "' is not in the table schema");
  }
  const arrow::DataType& type = *schema.field(c)->type;
  const std::string what = std::string(IndexKindName(spec.kind)) + " index '" + spec.name +
                           "' on column '" + spec.column + "' (" + type.ToString() + ")";
  switch (spec.kind) {
    case IndexKind::kHnsw:
      if (type.id() != arrow::TypeId::kFixedSizeList ||
          type.value_type()->id() != arrow::TypeId::kFloat32) {
        return Status::Invalid(what + ": a vector index needs a fixed_size_list<float32> column");
      }
      if (type.list_size() < 1 || type.list_size() > 65536) {
        return Status::Invalid(what + ": vector dimension must be in [1, 65536]");
      }
      if (spec.hnsw.m < 2 || spec.hnsw.m > 128) {
        return Status::Invalid(what + ": m must be in [2, 128], got " +
                               std::to_string(spec.hnsw.m));
      }
      if (spec.hnsw.ef_construction < spec.hnsw.m || spec.hnsw.ef_construction > 4096) {
        return Status::Invalid(what + ": ef_construction must be in [m, 4096], got " +
                               std::to_string(spec.hnsw.ef_construction));
      }
      {
        STRATA_ASSIGN_OR_RETURN(std::optional<BaseIvfDefinition> ivf, BaseIvfFor(spec));
        if (ivf.has_value()) {
          Status s = ValidateIvfParams(type.list_size(), ivf->params);
          if (!s.ok()) return Status::Invalid(what + ": " + s.message());
        }
      }
      return Status::OK();
    case IndexKind::kBTree:
      if (!IsScalarKeyType(type.id())) {
        return Status::Invalid(what + ": a BTREE index needs a scalar column");
      }
      return Status::OK();
    case IndexKind::kFts:
      if (type.id() != arrow::TypeId::kUtf8 && type.id() != arrow::TypeId::kLargeUtf8) {
        return Status::Invalid(what + ": an FTS index needs a utf8 or large_utf8 column");
      }
      if (spec.fts.max_token_length < 1 || spec.fts.max_token_length > 1024) {
        return Status::Invalid(what + ": max_token_length must be in [1, 1024], got " +
                               std::to_string(spec.fts.max_token_length));
      }
      return Status::OK();
  }
  return Status::Invalid(what + ": unknown index kind");
}

Result<std::optional<BaseIvfDefinition>> BaseIvfFor(const IndexSpec& spec) {
  if (spec.kind != IndexKind::kHnsw || !spec.base_ivf) return std::optional<BaseIvfDefinition>();
  BaseIvfDefinition def;
  if (spec.requested_type == "IVF_FLAT") {
    def.params.type = IvfType::kIvfFlat;
  } else if (spec.requested_type == "IVF_PQ") {
    def.params.type = IvfType::kIvfPq;
  } else if (spec.requested_type == "IVF_SQ") {
    def.params.type = IvfType::kIvfSq;
  } else {
    return std::optional<BaseIvfDefinition>();  // HNSW-served
  }
  def.params.distance = spec.hnsw.distance;
  if (spec.params_json.empty()) return std::optional<BaseIvfDefinition>(def);
  try {
    const nlohmann::json j = nlohmann::json::parse(spec.params_json);
    if (!j.is_object()) return Status::Corruption("index parameters are not a JSON object");
    const auto get = [&j](const char* key, int64_t fallback) -> int64_t {
      auto it = j.find(key);
      if (it == j.end() || !it->is_number_integer()) return fallback;
      return it->get<int64_t>();
    };
    def.params.num_partitions = get("num_partitions", 0);
    def.params.num_sub_vectors = get("num_sub_vectors", 0);
    def.params.nbits = static_cast<int>(get("num_bits", def.params.nbits));
    def.params.sample_rate = get("sample_rate", def.params.sample_rate);
    def.params.max_iterations = static_cast<int>(get("max_iterations", def.params.max_iterations));
    def.target_partition_size = get("target_partition_size", 0);
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("index parameters are not valid JSON: ") + e.what());
  }
  return std::optional<BaseIvfDefinition>(def);
}

int64_t AutoPartitions(const BaseIvfDefinition& def, int64_t rows) {
  if (def.params.num_partitions > 0) return def.params.num_partitions;
  rows = std::max<int64_t>(rows, 1);
  int64_t p = def.target_partition_size > 0
                  ? (rows + def.target_partition_size - 1) / def.target_partition_size
                  : static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(rows))));
  return std::clamp<int64_t>(p, 1, 65536);
}

}  // namespace strata::index
