// format::Supersedes (supersedes.bin): round trip, and every corruption is an error.
#include "format/supersedes.h"

#include <gtest/gtest.h>

namespace strata::format {
namespace {

Supersedes Sample() {
  Supersedes s;
  DeletionVector a, b;
  a.Add(0);
  a.Add(7);
  a.AddRange(100, 200);
  b.Add(4000000);
  s.generations.emplace_back(3, a);
  s.generations.emplace_back(9, b);
  return s;
}

TEST(Supersedes, RoundTrip) {
  const Supersedes s = Sample();
  auto back = Supersedes::Deserialize(s.Serialize());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->generations.size(), 2u);
  EXPECT_EQ(back->generations[0].first, 3u);
  EXPECT_EQ(back->generations[0].second, s.generations[0].second);
  EXPECT_EQ(back->generations[1].first, 9u);
  EXPECT_TRUE(back->generations[1].second.Contains(4000000));
  EXPECT_EQ(back->rows(), 103u);
  auto empty = Supersedes::Deserialize(Supersedes().Serialize());
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->generations.empty());
}

TEST(Supersedes, CorruptionIsAnError) {
  const std::string good = Sample().Serialize();
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    auto r = Supersedes::Deserialize(bad);
    ASSERT_FALSE(r.ok()) << "byte " << i;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  }
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(Supersedes::Deserialize(good.substr(0, n)).ok()) << n;
  }
}

}  // namespace
}  // namespace strata::format
