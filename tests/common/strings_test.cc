#include "common/strings.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(StringsTest, EqualsIgnoreCaseAscii) {
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_TRUE(EqualsIgnoreCase("Vector", "vECTOR"));
  EXPECT_TRUE(EqualsIgnoreCase("a_b-9Z", "A_B-9z"));
  EXPECT_FALSE(EqualsIgnoreCase("abc", "abd"));
  EXPECT_FALSE(EqualsIgnoreCase("abc", "abcd"));
  EXPECT_FALSE(EqualsIgnoreCase("", "a"));
  // Only A-Z/a-z fold: '@' (0x40) and '`' (0x60) differ by 0x20 but are not letters.
  EXPECT_FALSE(EqualsIgnoreCase("@", "`"));
  EXPECT_FALSE(EqualsIgnoreCase("[", "{"));
  // Non-ASCII bytes compare exactly (no Unicode folding): "É" vs "é" in UTF-8.
  EXPECT_FALSE(EqualsIgnoreCase("\xC3\x89", "\xC3\xA9"));
  EXPECT_TRUE(EqualsIgnoreCase("\xC3\xA9X", "\xC3\xA9x"));
}

}  // namespace
}  // namespace strata
