#include "index/scalar/sorted_runs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

namespace strata::index {
namespace {

// Merges `runs` through MergeSortedRuns; returns the result.
std::vector<int64_t> Merge(const std::vector<std::vector<int64_t>>& runs) {
  std::vector<int64_t> v;
  std::vector<size_t> starts;
  for (const auto& r : runs) {
    starts.push_back(v.size());
    v.insert(v.end(), r.begin(), r.end());
  }
  MergeSortedRuns(&v, starts);
  return v;
}

TEST(SortedRunsTest, SmallCasesGiveTheAscendingUnion) {
  EXPECT_EQ(Merge({}), std::vector<int64_t>{});
  EXPECT_EQ(Merge({{5}}), std::vector<int64_t>{5});
  EXPECT_EQ(Merge({{1, 3, 3, 9}}), (std::vector<int64_t>{1, 3, 9}));
  EXPECT_EQ(Merge({{4, 9}, {}, {0, 4, 100}}), (std::vector<int64_t>{0, 4, 9, 100}));
  // Sparse: three runs far apart (the pairwise merge path).
  EXPECT_EQ(Merge({{1000000, 3000000}, {7}, {2000000}}),
            (std::vector<int64_t>{7, 1000000, 2000000, 3000000}));
  // Dense: every position below 64 in two runs (the bitmap path), 63 and 0 at the edges.
  std::vector<int64_t> even, odd, all;
  for (int64_t p = 0; p < 64; ++p) (p % 2 ? odd : even).push_back(p), all.push_back(p);
  EXPECT_EQ(Merge({odd, even}), all);
}

TEST(SortedRunsTest, RandomRunsMatchASortedSetOnBothPaths) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    // Round-dependent spread: from dense (bitmap) to very sparse (pairwise merge).
    const int64_t spread = int64_t{1} << (4 + round % 24);
    const int nruns = 1 + static_cast<int>(rng() % 40);
    std::vector<std::vector<int64_t>> runs(static_cast<size_t>(nruns));
    std::set<int64_t> want;
    for (auto& r : runs) {
      const int len = static_cast<int>(rng() % 50);
      for (int i = 0; i < len; ++i) {
        r.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(spread)));
      }
      std::sort(r.begin(), r.end());
      want.insert(r.begin(), r.end());
    }
    EXPECT_EQ(Merge(runs), std::vector<int64_t>(want.begin(), want.end()))
        << "round " << round << " spread " << spread;
  }
}

}  // namespace
}  // namespace strata::index
