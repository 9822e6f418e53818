#include "index/scalar/sorted_runs.h"

#include <algorithm>
#include <bit>

namespace strata::index {

namespace {

void Unique(std::vector<int64_t>* v) { v->erase(std::unique(v->begin(), v->end()), v->end()); }

}  // namespace

void MergeSortedRuns(std::vector<int64_t>* v, std::vector<size_t> run_starts) {
  const size_t n = v->size();
  if (n < 2) return;
  if (run_starts.empty() || run_starts.front() != 0) run_starts.insert(run_starts.begin(), 0);
  while (!run_starts.empty() && run_starts.back() >= n) run_starts.pop_back();
  if (run_starts.size() <= 1) {
    Unique(v);
    return;
  }
  int64_t max = 0;
  for (size_t r = 0; r < run_starts.size(); ++r) {
    const size_t end = r + 1 < run_starts.size() ? run_starts[r + 1] : n;
    if (end > run_starts[r]) max = std::max(max, (*v)[end - 1]);
  }
  const uint64_t words = static_cast<uint64_t>(max) / 64 + 1;
  if (words <= 4 * static_cast<uint64_t>(n)) {
    std::vector<uint64_t> bits(words, 0);
    for (int64_t p : *v) bits[static_cast<uint64_t>(p) / 64] |= uint64_t{1} << (p % 64);
    v->clear();
    for (uint64_t w = 0; w < words; ++w) {
      for (uint64_t x = bits[w]; x != 0; x &= x - 1) {
        v->push_back(static_cast<int64_t>(w * 64 + static_cast<uint64_t>(std::countr_zero(x))));
      }
    }
    return;
  }
  // Bottom-up: merge runs 2i and 2i+1 until one is left.
  std::vector<size_t> starts = std::move(run_starts);
  while (starts.size() > 1) {
    std::vector<size_t> next;
    next.reserve(starts.size() / 2 + 1);
    for (size_t r = 0; r < starts.size(); r += 2) {
      next.push_back(starts[r]);
      if (r + 1 >= starts.size()) break;
      const size_t end = r + 2 < starts.size() ? starts[r + 2] : n;
      std::inplace_merge(v->begin() + static_cast<std::ptrdiff_t>(starts[r]),
                         v->begin() + static_cast<std::ptrdiff_t>(starts[r + 1]),
                         v->begin() + static_cast<std::ptrdiff_t>(end));
    }
    starts = std::move(next);
  }
  Unique(v);
}

}  // namespace strata::index
