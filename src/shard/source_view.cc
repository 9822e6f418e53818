#include "shard/source_view.h"

#include <algorithm>

namespace strata::shard {

std::pair<int64_t, int64_t> SourceView::Locate(int64_t position) const {
  if (position < 0 || position >= num_rows || batch_starts.empty()) return {-1, -1};
  auto it = std::upper_bound(batch_starts.begin(), batch_starts.end(), position);
  const int64_t k = (it - batch_starts.begin()) - 1;
  return {k, position - batch_starts[static_cast<size_t>(k)]};
}

bool SourceView::IsLive(int64_t position) const {
  auto [k, i] = Locate(position);
  if (k < 0) return false;
  const auto& bits = live[static_cast<size_t>(k)];
  return (bits[static_cast<size_t>(i >> 3)] >> (i & 7)) & 1;
}

const index::ColumnIndex* SourceView::FindIndex(int column, index::IndexKind kind) const {
  for (const auto& i : indexes) {
    if (i->column() == column && i->spec().kind == kind) return i.get();
  }
  return nullptr;
}

}  // namespace strata::shard
