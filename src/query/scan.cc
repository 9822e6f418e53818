#include "query/scan.h"

#include <algorithm>

#include "arrow/compute/gather.h"
#include "query/result_columns.h"

namespace strata::query {

Result<QueryResult> Scan(const table::TableSnapshot& snapshot, const ScanOptions& options) {
  if (options.offset < 0) {
    return Status::Invalid("offset must be >= 0, got " + std::to_string(options.offset));
  }
  if (options.limit < 0) {
    return Status::Invalid("k (limit) must be >= 0, got " + std::to_string(options.limit));
  }
  STRATA_ASSIGN_OR_RETURN(Projection projection,
                          ResolveProjection(snapshot.schema, options.columns));
  std::optional<BoundPredicate> filter;
  if (options.filter) {
    STRATA_ASSIGN_OR_RETURN(filter, BindPredicate(*options.filter, *snapshot.schema));
  }
  QueryResult result;
  result.schema = OutputSchema(projection, /*with_distance=*/false, options.with_row_id);

  int64_t to_skip = options.offset;
  int64_t remaining = options.limit;
  int64_t base = 0;  // snapshot row position of the current batch's row 0

  // `_rowid`: the hidden key when the table has one, else the snapshot row position.
  const bool stored_ids = !snapshot.row_ids.empty();
  if (!filter) {
    for (size_t bi = 0; bi < snapshot.batches.size(); ++bi) {
      const auto& batch = snapshot.batches[bi];
      const int64_t n = batch->num_rows();
      if (remaining == 0) break;
      if (to_skip >= n) {
        to_skip -= n;
        base += n;
        continue;
      }
      const int64_t start = to_skip;
      const int64_t len = std::min(n - start, remaining);
      to_skip = 0;
      remaining -= len;
      arrow::RecordBatchPtr sliced = (start == 0 && len == n) ? batch : batch->Slice(start, len);
      std::vector<arrow::ArrayDataPtr> columns = ApplyProjection(projection, *sliced)->columns();
      if (options.with_row_id) {
        columns.push_back(stored_ids ? arrow::Array(snapshot.row_ids[bi]).Slice(start, len).data()
                                     : MakeRowIdRange(base + start, len));
      }
      result.batches.push_back(
          std::make_shared<arrow::RecordBatch>(result.schema, len, std::move(columns)));
      result.num_rows += len;
      base += n;
    }
    return result;
  }

  // Filtered: collect matching row runs, then gather every projected column once.
  std::vector<std::vector<arrow::compute::Span>> spans(projection.indices.size());
  std::vector<uint64_t> row_ids;
  std::vector<uint8_t> mask;
  for (size_t bi = 0; bi < snapshot.batches.size(); ++bi) {
    const auto& batch = snapshot.batches[bi];
    if (remaining == 0) break;
    const int64_t n = batch->num_rows();
    EvaluatePredicate(*filter, *batch, &mask);
    int64_t i = 0;
    while (i < n && remaining > 0) {
      if (!mask[static_cast<size_t>(i)]) {
        ++i;
        continue;
      }
      int64_t j = i;
      while (j < n && mask[static_cast<size_t>(j)]) ++j;
      int64_t run_start = i, run_len = j - i;
      const int64_t skip = std::min(to_skip, run_len);
      to_skip -= skip;
      run_start += skip;
      run_len = std::min(run_len - skip, remaining);
      if (run_len > 0) {
        for (size_t c = 0; c < projection.indices.size(); ++c) {
          arrow::compute::AddSpan(
              &spans[c], {batch->column_data(projection.indices[c]).get(), run_start, run_len});
        }
        if (options.with_row_id) {
          for (int64_t r = 0; r < run_len; ++r) {
            row_ids.push_back(
                stored_ids ? arrow::Array(snapshot.row_ids[bi]).Value<uint64_t>(run_start + r)
                           : static_cast<uint64_t>(base + run_start + r));
          }
        }
        remaining -= run_len;
        result.num_rows += run_len;
      }
      i = j;
    }
    base += n;
  }
  std::vector<arrow::ArrayDataPtr> columns;
  for (size_t c = 0; c < projection.indices.size(); ++c) {
    STRATA_ASSIGN_OR_RETURN(
        arrow::ArrayDataPtr col,
        arrow::compute::GatherSpans(projection.schema->field(static_cast<int>(c))->type, spans[c]));
    columns.push_back(std::move(col));
  }
  if (options.with_row_id) columns.push_back(MakeUInt64Array(row_ids));
  result.batches.push_back(
      std::make_shared<arrow::RecordBatch>(result.schema, result.num_rows, std::move(columns)));
  return result;
}

}  // namespace strata::query
