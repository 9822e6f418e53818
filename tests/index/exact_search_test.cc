#include "index/vector/exact_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "arrow/builder.h"

namespace strata::index {
namespace {

// A fixed_size_list<float32>[dim] column of `rows` (row-major); rows in `null_rows` are null
// and rows in `element_null_rows` hold one null element.
arrow::Array MakeColumn(const std::vector<float>& rows, int dim,
                        const std::vector<int64_t>& null_rows = {},
                        const std::vector<int64_t>& element_null_rows = {}) {
  arrow::ArrayBuilder b(arrow::fixed_size_list(arrow::field("item", arrow::float32()), dim));
  const int64_t n = static_cast<int64_t>(rows.size()) / dim;
  auto has = [](const std::vector<int64_t>& v, int64_t i) {
    return std::find(v.begin(), v.end(), i) != v.end();
  };
  for (int64_t i = 0; i < n; ++i) {
    if (has(null_rows, i)) {
      EXPECT_TRUE(b.AppendNull().ok());
    } else if (has(element_null_rows, i)) {
      EXPECT_TRUE(b.child(0)->AppendFloats(&rows[static_cast<size_t>(i * dim)], dim - 1).ok());
      EXPECT_TRUE(b.child(0)->AppendNull().ok());
      EXPECT_TRUE(b.AppendValid().ok());
    } else {
      EXPECT_TRUE(b.child(0)->AppendFloats(&rows[static_cast<size_t>(i * dim)], dim).ok());
      EXPECT_TRUE(b.AppendValid().ok());
    }
  }
  return arrow::Array(b.Finish().value());
}

// Brute force: every row's distance.h distance, sorted by (distance, label), first k.
std::vector<Neighbor> BruteForce(const std::vector<float>& rows, int dim, const float* q,
                                 DistanceType type, int64_t k, int64_t first_label,
                                 const std::vector<int64_t>& skip = {}) {
  const float qn = std::sqrt(SquaredNorm(q, dim));
  std::vector<Neighbor> all;
  const int64_t n = static_cast<int64_t>(rows.size()) / dim;
  for (int64_t i = 0; i < n; ++i) {
    if (std::find(skip.begin(), skip.end(), i) != skip.end()) continue;
    all.push_back(
        {first_label + i, Distance(type, q, qn, &rows[static_cast<size_t>(i * dim)], dim)});
  }
  std::sort(all.begin(), all.end(), [](const Neighbor& a, const Neighbor& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.label < b.label);
  });
  if (static_cast<int64_t>(all.size()) > k) all.resize(static_cast<size_t>(k));
  return all;
}

void ExpectSame(const std::vector<Neighbor>& got, const std::vector<Neighbor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].label, want[i].label) << "position " << i;
    EXPECT_EQ(got[i].distance, want[i].distance) << "position " << i;
  }
}

TEST(TopKTest, KeepsBestWithLabelTieBreak) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> d(0, 5);  // many equal distances
  std::vector<Neighbor> all;
  TopK top(7);
  EXPECT_EQ(top.threshold(), std::numeric_limits<float>::infinity());
  // Labels pushed in a shuffled order so insertion order cannot explain the tie-break.
  std::vector<int64_t> labels(200);
  for (int64_t i = 0; i < 200; ++i) labels[static_cast<size_t>(i)] = i;
  std::shuffle(labels.begin(), labels.end(), rng);
  for (int64_t l : labels) {
    const float dist = static_cast<float>(d(rng));
    all.push_back({l, dist});
    top.Push(l, dist);
  }
  top.Push(999, std::numeric_limits<float>::quiet_NaN());  // ignored
  std::sort(all.begin(), all.end(), [](const Neighbor& a, const Neighbor& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.label < b.label);
  });
  all.resize(7);
  EXPECT_EQ(top.size(), 7);
  ExpectSame(top.Sorted(), all);
  EXPECT_EQ(top.threshold(), all.back().distance);
}

TEST(TopKTest, MergeEqualsSinglePass) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.0f, 10.0f);
  TopK single(10), a(10), b(10);
  for (int64_t i = 0; i < 500; ++i) {
    const float dist = std::round(u(rng));
    single.Push(i, dist);
    (i % 2 == 0 ? a : b).Push(i, dist);
  }
  a.Merge(b);
  ExpectSame(a.Sorted(), single.Sorted());
}

TEST(TopKTest, ZeroK) {
  TopK top(0);
  top.Push(1, 1.0f);
  EXPECT_EQ(top.size(), 0);
  EXPECT_TRUE(top.Sorted().empty());
}

class ExactSearchTest : public ::testing::TestWithParam<DistanceType> {};

// Small-integer vectors: l2 and dot distances are exact integers in float, so many rows tie
// and the order among them is decided by the label alone.
TEST_P(ExactSearchTest, EqualsBruteForceIncludingTies) {
  const DistanceType type = GetParam();
  const int dim = 8;
  const int64_t n = 300;
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> u(0, 2);
  std::vector<float> rows(static_cast<size_t>(n * dim));
  for (auto& x : rows) x = static_cast<float>(u(rng));
  for (int i = 0; i < dim; ++i) rows[static_cast<size_t>(17 * dim + i)] = 1.0f;  // non-zero row
  const arrow::Array col = MakeColumn(rows, dim);
  for (int trial = 0; trial < 5; ++trial) {
    const float* q = &rows[static_cast<size_t>((17 + trial * 31) * dim)];
    auto s = ExactSearcher::Make(q, dim, type);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    for (int64_t k : {1, 10, 50, 400}) {
      TopK top(k);
      ASSERT_TRUE(s->Scan(col, 1000, &top).ok());
      const auto want = BruteForce(rows, dim, q, type, k, 1000);
      ExpectSame(top.Sorted(), want);
      // Ties exist: at least one adjacent pair with equal distance in the answer for k=50.
      if (k == 50 && type != DistanceType::kCosine) {
        bool tie = false;
        for (size_t i = 1; i < want.size(); ++i) tie |= want[i].distance == want[i - 1].distance;
        EXPECT_TRUE(tie);
      }
    }
  }
}

TEST_P(ExactSearchTest, SkipsNullsHonoursAcceptAndSlices) {
  const DistanceType type = GetParam();
  const int dim = 20;  // not a multiple of 8: exercises the kernels' tails
  const int64_t n = 120;
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> rows(static_cast<size_t>(n * dim));
  for (auto& x : rows) x = u(rng);
  const std::vector<int64_t> null_rows = {0, 5, 77};
  const std::vector<int64_t> elem_null_rows = {3, 90};
  const arrow::Array col = MakeColumn(rows, dim, null_rows, elem_null_rows);
  const float* q = &rows[static_cast<size_t>(40 * dim)];
  auto s = ExactSearcher::Make(q, dim, type).value();

  std::vector<int64_t> skip = null_rows;
  skip.insert(skip.end(), elem_null_rows.begin(), elem_null_rows.end());
  TopK all(n);
  ASSERT_TRUE(s.Scan(col, 0, &all).ok());
  EXPECT_EQ(all.size(), n - 5);
  ExpectSame(all.Sorted(), BruteForce(rows, dim, q, type, n, 0, skip));

  // accept: only labels divisible by 3.
  TopK filtered(10);
  ASSERT_TRUE(s.Scan(col, 0, &filtered, [](int64_t l) { return l % 3 == 0; }).ok());
  std::vector<int64_t> skip3 = skip;
  for (int64_t i = 0; i < n; ++i) {
    if (i % 3 != 0) skip3.push_back(i);
  }
  ExpectSame(filtered.Sorted(), BruteForce(rows, dim, q, type, 10, 0, skip3));

  // A slice [50, 100) labelled from 50 answers like the rows it covers.
  TopK sliced(5);
  ASSERT_TRUE(s.Scan(col.Slice(50, 50), 50, &sliced).ok());
  std::vector<int64_t> skip_out = skip;
  for (int64_t i = 0; i < n; ++i) {
    if (i < 50 || i >= 100) skip_out.push_back(i);
  }
  ExpectSame(sliced.Sorted(), BruteForce(rows, dim, q, type, 5, 0, skip_out));

  // Distance() is distance.h's distance.
  const float qn = std::sqrt(SquaredNorm(q, dim));
  EXPECT_EQ(s.Distance(&rows[7 * dim]), index::Distance(type, q, qn, &rows[7 * dim], dim));
}

INSTANTIATE_TEST_SUITE_P(AllDistances, ExactSearchTest,
                         ::testing::Values(DistanceType::kL2, DistanceType::kCosine,
                                           DistanceType::kDot),
                         [](const auto& info) {
                           return std::string(DistanceTypeName(info.param));
                         });

TEST(ExactSearcherTest, Errors) {
  const float zero[4] = {0, 0, 0, 0};
  const float nan[2] = {1.0f, std::numeric_limits<float>::quiet_NaN()};
  const float ok[4] = {1, 2, 3, 4};
  EXPECT_EQ(ExactSearcher::Make(zero, 4, DistanceType::kCosine).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(ExactSearcher::Make(zero, 4, DistanceType::kL2).ok());
  auto bad = ExactSearcher::Make(nan, 2, DistanceType::kL2);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("element 1"), std::string::npos);
  EXPECT_FALSE(ExactSearcher::Make(ok, 0, DistanceType::kL2).ok());

  auto s = ExactSearcher::Make(ok, 4, DistanceType::kL2).value();
  TopK top(3);
  const std::vector<float> rows(12, 1.0f);
  auto st = s.Scan(MakeColumn(rows, 3), 0, &top);  // list size 3, searcher dim 4
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("[4]"), std::string::npos);
  arrow::ArrayBuilder ints(arrow::int64());
  ASSERT_TRUE(ints.AppendInt(1).ok());
  EXPECT_FALSE(s.Scan(arrow::Array(ints.Finish().value()), 0, &top).ok());
  EXPECT_EQ(top.size(), 0);
}

}  // namespace
}  // namespace strata::index
