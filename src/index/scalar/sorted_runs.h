// Union of sorted position lists (a BTree's posting lists of several keys: a range, IN, !=).
//
// The lists arrive concatenated in one vector, each run ascending. Sorting the concatenation
// (std::sort, O(n log n), the old way) was a quarter of a 1%-selective filtered vector search
// (tag < 10 over 200,000 rows: 10 runs, 1,958 positions; perf, docs/BENCHMARKS.md). This
// merges the runs instead:
//   - dense (n >= (max position + 1) / 64 / 4, e.g. != over most rows): a bitmap of
//     max position + 1 bits, set then scanned word by word: O(n + max/64);
//   - sparse: bottom-up pairwise std::inplace_merge of neighbouring runs: O(n log runs).
// Duplicates (a position in several runs) are kept once. Positions must be >= 0.
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::index {

/// Turns `v`, the concatenation of ascending runs starting at `run_starts` (ascending, first
/// 0; an empty list means one run), into the ascending union of the runs without duplicates.
void MergeSortedRuns(std::vector<int64_t>* v, std::vector<size_t> run_starts);

}  // namespace strata::index
