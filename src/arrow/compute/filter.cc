#include "arrow/compute/filter.h"

#include <string>
#include <utility>
#include <vector>

#include "arrow/buffer.h"
#include "arrow/compute/gather.h"

namespace strata::arrow::compute {
namespace {

// Runs of set bits as (start, length) pairs relative to the selection's first bit.
std::vector<std::pair<int64_t, int64_t>> SelectedRuns(const uint8_t* sel, int64_t off,
                                                      int64_t length) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  int64_t i = 0;
  while (i < length) {
    // Skip whole zero bytes quickly when byte-aligned.
    if (((off + i) & 7) == 0 && i + 8 <= length && sel[(off + i) >> 3] == 0) {
      i += 8;
      continue;
    }
    if (!GetBit(sel, off + i)) {
      ++i;
      continue;
    }
    const int64_t start = i;
    while (i < length) {
      if (((off + i) & 7) == 0 && i + 8 <= length && sel[(off + i) >> 3] == 0xff) {
        i += 8;
      } else if (GetBit(sel, off + i)) {
        ++i;
      } else {
        break;
      }
    }
    runs.emplace_back(start, i - start);
  }
  return runs;
}

Result<ArrayDataPtr> FilterByRuns(const ArrayData& data,
                                  const std::vector<std::pair<int64_t, int64_t>>& runs) {
  std::vector<Span> spans;
  spans.reserve(runs.size());
  for (const auto& [start, len] : runs) AddSpan(&spans, Span{&data, start, len});
  return GatherSpans(data.type, spans);
}

}  // namespace

int64_t CountSelected(const uint8_t* selection, int64_t selection_offset, int64_t length) {
  return length <= 0 ? 0 : CountSetBits(selection, selection_offset, length);
}

Result<ArrayDataPtr> Filter(const ArrayData& data, const uint8_t* selection,
                            int64_t selection_offset) {
  if (selection == nullptr && data.length > 0) {
    return Status::Invalid("filter: selection bitmap is null for " + std::to_string(data.length) +
                           " rows");
  }
  return FilterByRuns(data, SelectedRuns(selection, selection_offset, data.length));
}

Result<RecordBatchPtr> FilterBatch(const RecordBatch& batch, const uint8_t* selection,
                                   int64_t selection_offset) {
  if (selection == nullptr && batch.num_rows() > 0) {
    return Status::Invalid("filter: selection bitmap is null for " +
                           std::to_string(batch.num_rows()) + " rows");
  }
  const auto runs = SelectedRuns(selection, selection_offset, batch.num_rows());
  int64_t rows = 0;
  for (const auto& r : runs) rows += r.second;
  std::vector<ArrayDataPtr> cols;
  cols.reserve(static_cast<size_t>(batch.num_columns()));
  for (int i = 0; i < batch.num_columns(); ++i) {
    auto r = FilterByRuns(*batch.column_data(i), runs);
    if (!r.ok()) return r.status().WithContext("column '" + batch.schema()->field(i)->name + "'");
    cols.push_back(std::move(r).value());
  }
  return std::make_shared<RecordBatch>(batch.schema(), rows, std::move(cols));
}

}  // namespace strata::arrow::compute
