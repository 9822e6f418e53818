#include "table/shard_router.h"

#include <map>

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

}  // namespace strata::table
