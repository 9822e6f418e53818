#include "shard/source_view.h"

#include <algorithm>

namespace strata::shard {

std::pair<int64_t, int64_t> SourceView::Locate(int64_t position) const {
  if (position < 0 || position >= num_rows || batch_starts.empty()) return {-1, -1};
  auto it = std::upper_bound(batch_starts.begin(), batch_starts.end(), position);
  const int64_t k = (it - batch_starts.begin()) - 1;
  return {k, position - batch_starts[static_cast<size_t>(k)]};
}

std::vector<uint8_t> SourceView::LiveBits(size_t k) const {
  const int64_t n = batches[k]->num_rows();
  const int64_t start = batch_starts[k];
  std::vector<uint8_t> bits(static_cast<size_t>((n + 7) / 8), 0);
  for (int64_t i = 0; i < n; ++i) {
    if (liveness == nullptr || liveness->IsLive(start + i, *visibility)) {
      bits[static_cast<size_t>(i >> 3)] |= static_cast<uint8_t>(1u << (i & 7));
    }
  }
  return bits;
}

void SourceView::SetLiveRows(const std::vector<bool>& live) {
  std::vector<int64_t> dead;
  for (size_t i = 0; i < live.size(); ++i) {
    if (!live[i]) dead.push_back(static_cast<int64_t>(i));
  }
  liveness = Liveness::WithDeadRows(num_rows, dead);
  visibility = std::make_shared<Visibility>();
  live_rows = num_rows - static_cast<int64_t>(dead.size());
}

const index::ColumnIndex* SourceView::FindIndex(int column, index::IndexKind kind) const {
  for (const auto& i : indexes) {
    if (i->column() == column && i->spec().kind == kind) return i.get();
  }
  return nullptr;
}

}  // namespace strata::shard
