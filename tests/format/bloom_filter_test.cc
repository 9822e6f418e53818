#include "format/bloom_filter.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::format {
namespace {

std::string Key(int64_t i) { return "key-" + std::to_string(i); }

TEST(BloomFilter, SizingFollowsTheFormula) {
  auto f = BloomFilter::ForKeys(100000, 0.01);
  // m = ceil(-n ln p / ln2^2) = 958506 -> rounded up to a multiple of 64; k = round(m/n ln2) = 7.
  EXPECT_EQ(f.num_bits(), 958528u);
  EXPECT_EQ(f.num_hashes(), 7u);
  auto tiny = BloomFilter::ForKeys(0);
  EXPECT_EQ(tiny.num_bits(), 64u);
  EXPECT_GE(tiny.num_hashes(), 1u);
}

TEST(BloomFilter, NoFalseNegativesAndAboutOnePercentFalsePositives) {
  constexpr int64_t kN = 50000;
  auto f = BloomFilter::ForKeys(kN, 0.01);
  for (int64_t i = 0; i < kN; ++i) f.Add(Key(i));
  EXPECT_EQ(f.num_keys(), static_cast<uint64_t>(kN));
  for (int64_t i = 0; i < kN; ++i) ASSERT_TRUE(f.MayContain(Key(i))) << i;
  int64_t fp = 0;
  constexpr int64_t kProbes = 200000;
  for (int64_t i = kN; i < kN + kProbes; ++i) fp += f.MayContain(Key(i)) ? 1 : 0;
  double rate = static_cast<double>(fp) / kProbes;
  EXPECT_GT(rate, 0.004);
  EXPECT_LT(rate, 0.016);
  std::printf("bloom filter: %lld keys, %llu bits, k=%u, false-positive rate %.4f\n",
              static_cast<long long>(kN), static_cast<unsigned long long>(f.num_bits()),
              f.num_hashes(), rate);
}

TEST(BloomFilter, SerializeRoundTripAndCorruptionDetected) {
  auto f = BloomFilter::ForKeys(1000);
  for (int i = 0; i < 1000; ++i) f.Add(Key(i));
  std::string bytes = f.Serialize();
  auto g = BloomFilter::Deserialize(bytes);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->num_bits(), f.num_bits());
  EXPECT_EQ(g->num_hashes(), f.num_hashes());
  EXPECT_EQ(g->num_keys(), 1000u);
  for (int i = 0; i < 3000; ++i) EXPECT_EQ(g->MayContain(Key(i)), f.MayContain(Key(i)));
  EXPECT_EQ(g->Serialize(), bytes);

  std::string flipped = bytes;
  flipped[40] ^= 0x10;  // a bit of the filter
  EXPECT_EQ(BloomFilter::Deserialize(flipped).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(BloomFilter::Deserialize(bytes.substr(0, bytes.size() - 1)).status().code(),
            StatusCode::kCorruption);
  std::string magic = bytes;
  magic[0] = 'X';
  EXPECT_NE(BloomFilter::Deserialize(magic).status().message().find("magic"), std::string::npos);
  EXPECT_EQ(BloomFilter::Deserialize("").status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace strata::format
