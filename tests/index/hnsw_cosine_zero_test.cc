// A zero vector has no direction under cosine: AddColumn skips it (like a null vector) instead
// of failing the whole batch, so a MemTable index never breaks on such a row.
#include <gtest/gtest.h>

#include "arrow/builder.h"
#include "index/vector/exact_search.h"
#include "index/vector/hnsw_index.h"

#include <algorithm>

namespace strata::index {
namespace {

TEST(HnswCosineZero, AddColumnSkipsZeroVectorsUnderCosineOnly) {
  for (DistanceType d : {DistanceType::kCosine, DistanceType::kL2}) {
    HnswParams p;
    p.distance = d;
    auto idx = HnswIndex::Make(2, p).value();
    // Rows: (1,0) (0,0) (0,0) (0,1) (0,1)
    auto col = arrow::MakeVectorArray({1, 0, 0, 0, 0, 0, 0, 1, 0, 1}, 2);
    auto added = idx->AddColumn(arrow::Array(col), 10);
    ASSERT_TRUE(added.ok()) << added.status().ToString();
    const int64_t expected = d == DistanceType::kCosine ? 3 : 5;
    EXPECT_EQ(*added, expected);
    EXPECT_EQ(idx->size(), expected);
    const float q[2] = {1, 0};
    auto r = idx->Search(q, 5, 64).value();
    ASSERT_EQ(static_cast<int64_t>(r.size()), expected);
    EXPECT_EQ(r[0].label, 10);
    for (const auto& nb : r) {
      if (d == DistanceType::kCosine) {
        EXPECT_TRUE(nb.label != 11 && nb.label != 12);
      }
    }
  }
}

TEST(HnswCosineZero, ExactSearchAgreesWithTheIndex) {
  // A bug report: under cosine the exact path returned zero vectors (distance 1) and the HNSW
  // did not, so results depended on whether a tier was indexed yet.
  auto col = arrow::MakeVectorArray({1, 0, 0, 0, 0, 1}, 2);  // (1,0) (0,0) (0,1)
  const float q[2] = {1, 1};
  for (DistanceType d : {DistanceType::kCosine, DistanceType::kL2}) {
    auto ex = ExactSearcher::Make(q, 2, d).value();
    TopK top(10);
    ASSERT_TRUE(ex.Scan(arrow::Array(col), 0, &top).ok());
    std::vector<int64_t> labels;
    for (const auto& nb : top.Sorted()) labels.push_back(nb.label);
    std::sort(labels.begin(), labels.end());
    HnswParams p;
    p.distance = d;
    auto idx = HnswIndex::Make(2, p).value();
    ASSERT_TRUE(idx->AddColumn(arrow::Array(col), 0).ok());
    std::vector<int64_t> via_index;
    auto found = idx->Search(q, 10, 64);
    ASSERT_TRUE(found.ok());
    for (const auto& nb : *found) via_index.push_back(nb.label);
    std::sort(via_index.begin(), via_index.end());
    EXPECT_EQ(labels, via_index);
    EXPECT_EQ(labels, d == DistanceType::kCosine ? std::vector<int64_t>({0, 2})
                                                 : std::vector<int64_t>({0, 1, 2}));
  }
}

}  // namespace
}  // namespace strata::index
