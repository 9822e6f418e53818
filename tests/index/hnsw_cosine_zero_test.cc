// A zero vector has no direction under cosine: AddColumn skips it (like a null vector) instead
// of failing the whole batch, so a MemTable index never breaks on such a row.
#include <gtest/gtest.h>

#include "arrow/builder.h"
#include "index/vector/hnsw_index.h"

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

}  // namespace
}  // namespace strata::index
