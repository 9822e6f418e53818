#include "query/scan.h"

#include <algorithm>

#include "query/result_columns.h"
#include "query/source_rows.h"

namespace strata::query {

namespace {

Status CheckScanOptions(const ScanOptions& options) {
  if (options.offset < 0) {
    return Status::Invalid("offset must be >= 0, got " + std::to_string(options.offset));
  }
  if (options.limit < 0) {
    return Status::Invalid("k (limit) must be >= 0, got " + std::to_string(options.limit));
  }
  return Status::OK();
}

// Output batch of `len` rows of source `source`, batch `b`, from row `row` of the batch: a
// run of consecutive live rows whose first `_rowoffset` is `first_offset`. Plain columns are
// zero-copy slices; computed ones are evaluated over the slice.
Result<arrow::RecordBatchPtr> EmitRun(const shard::ShardSnapshot& shard,
                                      const Projection& projection, const ScanOptions& options,
                                      const arrow::SchemaPtr& out_schema,
                                      const shard::SourceView& source, size_t b, int64_t row,
                                      int64_t len, int64_t first_offset) {
  const arrow::RecordBatch& storage = *source.batches[b];
  const int nf = shard.schema->num_fields();
  std::vector<arrow::ArrayDataPtr> user(storage.columns().begin(), storage.columns().begin() + nf);
  arrow::RecordBatchPtr slice =
      std::make_shared<arrow::RecordBatch>(shard.schema, storage.num_rows(), std::move(user));
  if (row != 0 || len != storage.num_rows()) slice = slice->Slice(row, len);
  const int64_t first_position = source.batch_starts[b] + row;
  std::vector<uint64_t> ids, offsets;
  auto row_ids = [&]() -> const std::vector<uint64_t>& {
    if (ids.empty()) {
      ids.reserve(static_cast<size_t>(len));
      for (int64_t i = 0; i < len; ++i) {
        ids.push_back(RowIdOf(source, first_position + i));
      }
    }
    return ids;
  };
  std::vector<arrow::ArrayDataPtr> columns;
  columns.reserve(projection.indices.size() + 1);
  for (size_t c = 0; c < projection.indices.size(); ++c) {
    const filter::BoundExprPtr expr =
        c < projection.exprs.size() ? projection.exprs[c] : filter::BoundExprPtr();
    if (expr == nullptr) {
      columns.push_back(slice->column_data(projection.indices[c]));
      continue;
    }
    filter::RowContext ctx;
    if (expr->uses_row_id()) ctx.row_ids = row_ids().data();
    if (expr->uses_row_offset()) {
      if (offsets.empty()) {
        for (int64_t i = 0; i < len; ++i)
          offsets.push_back(static_cast<uint64_t>(first_offset + i));
      }
      ctx.row_offsets = offsets.data();
    }
    STRATA_ASSIGN_OR_RETURN(arrow::ArrayDataPtr col, filter::Evaluate(*expr, *slice, ctx));
    columns.push_back(std::move(col));
  }
  if (options.with_row_id) columns.push_back(MakeUInt64Array(row_ids()));
  return std::make_shared<arrow::RecordBatch>(out_schema, len, std::move(columns));
}

}  // namespace

Result<QueryResult> Scan(const table::TableSnapshot& snapshot, const ScanOptions& options) {
  STRATA_RETURN_IF_ERROR(CheckScanOptions(options));
  STRATA_ASSIGN_OR_RETURN(Projection projection,
                          ResolveProjection(snapshot.schema, options.columns));
  const std::shared_ptr<const shard::ShardSnapshot> shard_ptr = ShardOf(snapshot);
  const shard::ShardSnapshot& shard = *shard_ptr;
  SnapshotFilter filter;
  if (options.filter) {
    STRATA_ASSIGN_OR_RETURN(filter, SnapshotFilter::Make(shard, *options.filter));
  }
  QueryResult result;
  result.schema = OutputSchema(projection, /*with_distance=*/false, options.with_row_id);
  int64_t to_skip = options.offset;
  int64_t remaining = options.limit;

  if (filter.empty()) {
    // Zero-copy: one output batch per run of consecutive live rows.
    int64_t offset_cursor = 0;  // `_rowoffset` of the next live row
    for (const shard::SourceView& source : shard.sources) {
      if (remaining == 0) {
        result.plan.push_back(source.name + ": not read (limit reached)");
        continue;
      }
      result.plan.push_back(source.name + ": " + std::to_string(source.live_rows) + " live of " +
                            std::to_string(source.num_rows) + " rows");
      if (to_skip >= source.live_rows) {
        to_skip -= source.live_rows;
        offset_cursor += source.live_rows;
        continue;
      }
      for (size_t b = 0; b < source.batches.size() && remaining > 0; ++b) {
        const int64_t n = source.batches[b]->num_rows();
        const std::vector<uint8_t> live = source.LiveBits(b);
        int64_t i = 0;
        while (i < n && remaining > 0) {
          if (!BitIsSet(live, i)) {
            ++i;
            continue;
          }
          int64_t j = i + 1;
          while (j < n && BitIsSet(live, j)) ++j;
          int64_t start = i, len = j - i;
          int64_t first_offset = offset_cursor;
          offset_cursor += len;
          i = j;
          const int64_t skip = std::min(to_skip, len);
          to_skip -= skip;
          start += skip;
          first_offset += skip;
          len = std::min(len - skip, remaining);
          if (len == 0) continue;
          STRATA_ASSIGN_OR_RETURN(arrow::RecordBatchPtr out,
                                  EmitRun(shard, projection, options, result.schema, source, b,
                                          start, len, first_offset));
          result.batches.push_back(std::move(out));
          result.num_rows += len;
          remaining -= len;
        }
      }
    }
    return result;
  }

  // Filtered: pick the accepted rows per source, then gather them into one batch.
  std::vector<SourceHit> hits;
  for (uint32_t s = 0; s < shard.sources.size(); ++s) {
    const shard::SourceView& source = shard.sources[s];
    if (remaining == 0) {
      result.plan.push_back(source.name + ": not read (limit reached)");
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(AcceptedRows accepted, AcceptedRows::Make(shard, s, filter));
    result.plan.push_back(source.name + ": " + accepted.plan() + ", " +
                          std::to_string(accepted.count()) + " accepted");
    if (to_skip >= accepted.count()) {
      to_skip -= accepted.count();
      continue;
    }
    const std::vector<int64_t> positions = accepted.Positions();
    for (size_t k = static_cast<size_t>(to_skip); k < positions.size() && remaining > 0; ++k) {
      hits.push_back({s, positions[k]});
      --remaining;
    }
    to_skip = 0;
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<arrow::ArrayDataPtr> columns,
                          GatherSourceRows(shard, projection, hits));
  if (options.with_row_id) columns.push_back(MakeUInt64Array(SourceRowIds(shard, hits)));
  result.num_rows = static_cast<int64_t>(hits.size());
  result.batches.push_back(
      std::make_shared<arrow::RecordBatch>(result.schema, result.num_rows, std::move(columns)));
  return result;
}

Result<int64_t> CountRows(const table::TableSnapshot& snapshot,
                          const std::optional<std::string>& filter_sql) {
  const std::shared_ptr<const shard::ShardSnapshot> shard_ptr = ShardOf(snapshot);
  const shard::ShardSnapshot& shard = *shard_ptr;
  if (!filter_sql) {
    int64_t n = 0;
    for (const auto& s : shard.sources) n += s.live_rows;
    return n;
  }
  STRATA_ASSIGN_OR_RETURN(SnapshotFilter filter, SnapshotFilter::Make(shard, *filter_sql));
  int64_t n = 0;
  for (uint32_t s = 0; s < shard.sources.size(); ++s) {
    STRATA_ASSIGN_OR_RETURN(AcceptedRows accepted, AcceptedRows::Make(shard, s, filter));
    n += accepted.count();
  }
  return n;
}

}  // namespace strata::query
