#include "arrow/compute/take.h"

#include <string>
#include <vector>

#include "arrow/compute/gather.h"

namespace strata::arrow::compute {
namespace {

Status CheckIndices(int64_t length, const int64_t* indices, int64_t n) {
  if (n < 0) return Status::Invalid("take: negative index count " + std::to_string(n));
  for (int64_t k = 0; k < n; ++k) {
    if (indices[k] < 0 || indices[k] >= length) {
      return Status::Invalid("take: index " + std::to_string(indices[k]) + " at position " +
                             std::to_string(k) + " is out of range [0, " + std::to_string(length) +
                             ")");
    }
  }
  return Status::OK();
}

Result<ArrayDataPtr> TakeUnchecked(const ArrayData& data, const int64_t* indices, int64_t n) {
  std::vector<Span> spans;
  spans.reserve(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) AddSpan(&spans, Span{&data, indices[k], 1});
  return GatherSpans(data.type, spans);
}

}  // namespace

Result<ArrayDataPtr> Take(const ArrayData& data, const int64_t* indices, int64_t n) {
  STRATA_RETURN_IF_ERROR(CheckIndices(data.length, indices, n));
  return TakeUnchecked(data, indices, n);
}

Result<RecordBatchPtr> TakeBatch(const RecordBatch& batch, const int64_t* indices, int64_t n) {
  STRATA_RETURN_IF_ERROR(CheckIndices(batch.num_rows(), indices, n));
  std::vector<ArrayDataPtr> cols;
  cols.reserve(static_cast<size_t>(batch.num_columns()));
  for (int i = 0; i < batch.num_columns(); ++i) {
    auto r = TakeUnchecked(*batch.column_data(i), indices, n);
    if (!r.ok()) return r.status().WithContext("column '" + batch.schema()->field(i)->name + "'");
    cols.push_back(std::move(r).value());
  }
  return std::make_shared<RecordBatch>(batch.schema(), n, std::move(cols));
}

}  // namespace strata::arrow::compute
