#include "format/bit_reversed.h"

#include <gtest/gtest.h>

namespace strata::format {
namespace {

TEST(BitReversed, SpecVectors) {
  EXPECT_EQ(ToBitReversed(5), "1010" + std::string(60, '0'));
  EXPECT_EQ(ToBitReversed(0), std::string(64, '0'));
  EXPECT_EQ(ToBitReversed(1), "1" + std::string(63, '0'));
  EXPECT_EQ(ToBitReversed(6), "011" + std::string(61, '0'));
  EXPECT_EQ(ToBitReversed(uint64_t{1} << 63), std::string(63, '0') + "1");
  EXPECT_EQ(ToBitReversed(UINT64_MAX), std::string(64, '1'));
  EXPECT_EQ(*FromBitReversed("1010" + std::string(60, '0')), 5u);
  EXPECT_EQ(*FromBitReversed(std::string(64, '1')), UINT64_MAX);
}

TEST(BitReversed, RoundTrip) {
  for (uint64_t v :
       {uint64_t{2}, uint64_t{3}, uint64_t{1000}, uint64_t{123456789012345}, UINT64_MAX - 1}) {
    EXPECT_EQ(*FromBitReversed(ToBitReversed(v)), v);
  }
}

TEST(BitReversed, RejectsMalformed) {
  EXPECT_TRUE(FromBitReversed("1010").status().IsInvalid());
  EXPECT_TRUE(FromBitReversed(std::string(65, '0')).status().IsInvalid());
  std::string bad(64, '0');
  bad[10] = '2';
  auto r = FromBitReversed(bad);
  ASSERT_TRUE(r.status().IsInvalid());
  EXPECT_NE(r.status().message().find("offset 10"), std::string::npos);
  EXPECT_TRUE(FromBitReversed("").status().IsInvalid());
}

}  // namespace
}  // namespace strata::format
