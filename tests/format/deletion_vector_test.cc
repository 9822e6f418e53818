#include "format/deletion_vector.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

namespace strata::format {
namespace {

TEST(DeletionVector, AddContainsRangesAndUnion) {
  DeletionVector dv;
  EXPECT_TRUE(dv.empty());
  dv.Add(3);
  dv.Add(70000);
  dv.AddRange(10, 15);
  EXPECT_EQ(dv.cardinality(), 7u);
  EXPECT_TRUE(dv.Contains(3) && dv.Contains(10) && dv.Contains(14) && dv.Contains(70000));
  EXPECT_FALSE(dv.Contains(15) || dv.Contains(4));
  EXPECT_EQ(dv.ToVector(), (std::vector<uint32_t>{3, 10, 11, 12, 13, 14, 70000}));
  DeletionVector other;
  other.Add(4);
  other.Add(3);
  dv.Union(other);
  EXPECT_EQ(dv.cardinality(), 8u);
  DeletionVector copy = dv;
  copy.Add(99);
  EXPECT_EQ(dv.cardinality(), 8u);
  EXPECT_EQ(copy.cardinality(), 9u);
  DeletionVector moved = std::move(copy);
  EXPECT_EQ(moved.cardinality(), 9u);
}

TEST(DeletionVector, PortableRoundTripOfRandomSets) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    DeletionVector dv;
    std::set<uint32_t> ref;
    int n = static_cast<int>(rng() % 5000);
    for (int i = 0; i < n; ++i) {
      uint32_t v = trial % 2 ? rng() % 200000 : rng();
      dv.Add(v);
      ref.insert(v);
    }
    if (trial % 3 == 0) {
      dv.AddRange(1000, 9000);  // a run container
      for (uint32_t v = 1000; v < 9000; ++v) ref.insert(v);
    }
    std::string bytes = dv.Serialize();
    auto back = DeletionVector::Deserialize(bytes);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE(*back == dv);
    EXPECT_EQ(back->ToVector(), std::vector<uint32_t>(ref.begin(), ref.end()));
  }
}

TEST(DeletionVector, PortableFormatBytesFollowTheSpec) {
  // RoaringFormatSpec: no run containers -> cookie 12346 (u32 LE), container count (u32 LE),
  // per container (key u16, cardinality-1 u16), offsets (u32 each), then the array container.
  DeletionVector dv;
  dv.Add(1);
  dv.Add(5);
  std::string b = dv.Serialize();
  const unsigned char expected[] = {0x3a, 0x30, 0,  0, 1, 0, 0, 0, 0, 0,
                                    1,    0,    16, 0, 0, 0, 1, 0, 5, 0};
  ASSERT_EQ(b.size(), sizeof(expected));
  EXPECT_EQ(std::memcmp(b.data(), expected, sizeof(expected)), 0);
  auto empty = DeletionVector::Deserialize(DeletionVector().Serialize());
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(DeletionVector, CorruptInputIsRejected) {
  DeletionVector dv;
  for (uint32_t i = 0; i < 100; ++i) dv.Add(i * 3);
  std::string b = dv.Serialize();
  EXPECT_EQ(DeletionVector::Deserialize(b.substr(0, b.size() - 1)).status().code(),
            StatusCode::kCorruption);
  EXPECT_EQ(DeletionVector::Deserialize(b + "x").status().code(), StatusCode::kCorruption);
  EXPECT_EQ(DeletionVector::Deserialize("").status().code(), StatusCode::kCorruption);
  EXPECT_EQ(DeletionVector::Deserialize("garbage!").status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace strata::format

namespace strata::format {
namespace {

TEST(DeletionVector, MutatedBytesNeverCrashAndParseConsistently) {
  DeletionVector dv;
  for (uint32_t i = 0; i < 3000; i += 2) dv.Add(i);  // array container
  dv.AddRange(100000, 140000);                       // run container
  for (uint32_t i = 0; i < 65536; i += 1) {
    if (i % 3) dv.Add(200000 + i);  // bitmap container
  }
  const std::string good = dv.Serialize();
  std::mt19937 rng(11);
  int parsed = 0, rejected = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string b = good;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) {
      size_t at = rng() % std::min<size_t>(b.size(), trial % 2 ? b.size() : 64);
      b[at] = static_cast<char>(rng());
    }
    if (trial % 5 == 0) b.resize(rng() % b.size());
    auto r = DeletionVector::Deserialize(b);
    if (r.ok()) {
      ++parsed;
      // Whatever parsed must re-serialize to a valid bitmap with the same members.
      auto again = DeletionVector::Deserialize(r->Serialize());
      ASSERT_TRUE(again.ok());
      EXPECT_TRUE(*again == *r);
    } else {
      ++rejected;
      EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_EQ(parsed + rejected, 2000);
}

}  // namespace
}  // namespace strata::format
