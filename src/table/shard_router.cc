#include "table/shard_router.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>

#include "arrow/compute/take.h"
#include "format/bucket_hash.h"
#include "format/key_encoding.h"

namespace strata::table {

namespace {

// Index of the shard column in `batch`. Errors: Invalid naming the column.
Result<int> ShardColumn(const LsmWriteSpec& spec, const arrow::RecordBatch& batch) {
  const int i = batch.schema()->GetFieldIndex(spec.column);
  if (i < 0) {
    return Status::Invalid(std::string("LSM write spec: shard column '") + spec.column + "' (" +
                           ShardingModeName(spec.mode) + " mode) is not in the written rows");
  }
  return i;
}

// Appends the rows of `batch` at `rows` (ascending) to `part`: the batch itself when it is
// every row of it.
Status Append(const arrow::RecordBatchPtr& batch, const std::vector<int64_t>& rows,
              ShardPart* part) {
  if (rows.empty()) return Status::OK();
  if (static_cast<int64_t>(rows.size()) == batch->num_rows()) {
    part->batches.push_back(batch);
  } else {
    STRATA_ASSIGN_OR_RETURN(
        arrow::RecordBatchPtr taken,
        arrow::compute::TakeBatch(*batch, rows.data(), static_cast<int64_t>(rows.size())));
    part->batches.push_back(std::move(taken));
  }
  part->rows += static_cast<int64_t>(rows.size());
  return Status::OK();
}

}  // namespace

Result<std::vector<ShardPart>> RouteRows(const LsmWriteSpec& spec,
                                         const std::vector<arrow::RecordBatchPtr>& batches) {
  if (spec.mode == ShardingMode::kUnsharded ||
      (spec.mode == ShardingMode::kBucket && spec.num_buckets == 1)) {
    ShardPart all;
    for (const auto& b : batches) {
      all.batches.push_back(b);
      all.rows += b->num_rows();
    }
    std::vector<ShardPart> out;
    out.push_back(std::move(all));
    return out;
  }
  if (spec.mode == ShardingMode::kBucket) {
    if (spec.num_buckets < 1 || spec.num_buckets > kMaxBuckets) {
      return Status::Invalid("LSM write spec: num_buckets " + std::to_string(spec.num_buckets) +
                             " must be in [1, " + std::to_string(kMaxBuckets) + "]");
    }
    const auto n = static_cast<int32_t>(spec.num_buckets);
    std::vector<ShardPart> parts(static_cast<size_t>(n));
    std::vector<std::vector<int64_t>> rows(static_cast<size_t>(n));
    for (const auto& batch : batches) {
      STRATA_ASSIGN_OR_RETURN(int col, ShardColumn(spec, *batch));
      const arrow::Array column = batch->column(col);
      for (auto& r : rows) r.clear();
      for (int64_t i = 0; i < batch->num_rows(); ++i) {
        STRATA_ASSIGN_OR_RETURN(int32_t bucket, format::BucketOfValue(column, i, n));
        rows[static_cast<size_t>(bucket)].push_back(i);
      }
      for (int32_t s = 0; s < n; ++s) {
        STRATA_RETURN_IF_ERROR(
            Append(batch, rows[static_cast<size_t>(s)], &parts[static_cast<size_t>(s)]));
      }
    }
    std::vector<ShardPart> out;
    for (int32_t s = 0; s < n; ++s) {
      ShardPart& p = parts[static_cast<size_t>(s)];
      if (p.rows == 0) continue;
      p.bucket = s;
      out.push_back(std::move(p));
    }
    return out;
  }
  // Identity: one part per encoded value, ascending.
  std::map<std::string, ShardPart> parts;
  for (const auto& batch : batches) {
    STRATA_ASSIGN_OR_RETURN(int col, ShardColumn(spec, *batch));
    const arrow::Array column = batch->column(col);
    std::map<std::string, std::vector<int64_t>> rows;
    std::string key;
    for (int64_t i = 0; i < batch->num_rows(); ++i) {
      key.clear();
      Status st = format::AppendValueComponent(column, i, &key);
      if (!st.ok()) {
        return Status::Invalid("LSM write spec: identity shard column '" + spec.column +
                               "' of type " + column.type()->ToString() +
                               " cannot be a shard value: " + st.message());
      }
      rows[key].push_back(i);
    }
    for (const auto& [k, r] : rows) {
      ShardPart& p = parts[k];
      p.identity_key = k;
      STRATA_RETURN_IF_ERROR(Append(batch, r, &p));
    }
  }
  std::vector<ShardPart> out;
  out.reserve(parts.size());
  for (auto& [k, p] : parts) out.push_back(std::move(p));
  return out;
}

Result<std::string> IdentityValueJson(const arrow::DataType& type, std::string_view c) {
  auto bad = [&] {
    return Status::Corruption("identity shard value of type " + type.ToString() +
                              ": a malformed key component of " + std::to_string(c.size()) +
                              " bytes");
  };
  if (c.empty() || (c[0] != 0 && c[0] != 1)) return bad();
  if (c[0] == 0) {
    if (c.size() != 1) return bad();
    return std::string("null");
  }
  c.remove_prefix(1);
  // Big-endian unsigned value of the remaining `width` bytes.
  auto be = [&](size_t width) -> std::optional<uint64_t> {
    if (c.size() != width) return std::nullopt;
    uint64_t v = 0;
    for (unsigned char b : c) v = (v << 8) | b;
    return v;
  };
  auto sign = [&](size_t width) -> Result<std::string> {
    auto v = be(width);
    if (!v) return bad();
    const uint64_t flip = uint64_t{1} << (8 * width - 1);  // the encoding flipped the sign bit
    uint64_t raw = *v ^ flip;
    int64_t out;
    if (width == 8) {
      out = static_cast<int64_t>(raw);
    } else {
      const uint64_t ext = (raw & flip) != 0 ? ~((flip << 1) - 1) : 0;  // sign-extend
      out = static_cast<int64_t>(raw | ext);
    }
    return std::to_string(out);
  };
  auto unsign = [&](size_t width) -> Result<std::string> {
    auto v = be(width);
    if (!v) return bad();
    return std::to_string(*v);
  };
  switch (type.id()) {
    case arrow::TypeId::kBool:
      if (c.size() != 1 || static_cast<unsigned char>(c[0]) > 1) return bad();
      return std::string(c[0] == 1 ? "true" : "false");
    case arrow::TypeId::kInt8:
      return sign(1);
    case arrow::TypeId::kInt16:
      return sign(2);
    case arrow::TypeId::kInt32:
      return sign(4);
    case arrow::TypeId::kInt64:
      return sign(8);
    case arrow::TypeId::kUInt8:
      return unsign(1);
    case arrow::TypeId::kUInt16:
      return unsign(2);
    case arrow::TypeId::kUInt32:
      return unsign(4);
    case arrow::TypeId::kUInt64:
      return unsign(8);
    case arrow::TypeId::kUtf8:
    case arrow::TypeId::kLargeUtf8: {
      // Bytes with 0x00 written as 0x00 0x01, then the terminator 0x00 0x00.
      std::string text;
      size_t i = 0;
      for (; i < c.size(); ++i) {
        if (c[i] != 0) {
          text.push_back(c[i]);
          continue;
        }
        if (i + 1 >= c.size()) return bad();
        if (c[i + 1] == 0) break;
        if (c[i + 1] != 1) return bad();
        text.push_back('\0');
        ++i;
      }
      if (i + 2 != c.size()) return bad();
      return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    default:
      return Status::NotSupported("identity shard value of type " + type.ToString());
  }
}

}  // namespace strata::table
