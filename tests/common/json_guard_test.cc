// CheckJsonDepth / Excerpt / DescribeJsonParseError (common/json_guard.h).
#include "common/json_guard.h"

#include <gtest/gtest.h>

#include <string>

namespace strata {
namespace {

TEST(JsonGuardTest, DepthLimitCountsArraysAndObjects) {
  EXPECT_TRUE(CheckJsonDepth("{\"a\":[1,{\"b\":[]}]}", "t", 4).ok());
  Status st = CheckJsonDepth("{\"a\":[1,{\"b\":[]}]}", "t", 3);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  // The 4th opening bracket is the '[' at byte 13.
  EXPECT_EQ(st.message(), "t: JSON nesting is deeper than the limit of 3 levels (at byte 13)");
  // Siblings do not add up: depth is the maximum, not the count.
  EXPECT_TRUE(CheckJsonDepth("[[],[],[],[],[]]", "t", 2).ok());
}

TEST(JsonGuardTest, BracketsInsideStringsAreNotCounted) {
  EXPECT_TRUE(CheckJsonDepth(R"(["[[[[", "{{{{", "\"[[[[\\"])", "t", 1).ok());
  // An escaped backslash before the closing quote ends the string: the '[' after it counts.
  EXPECT_FALSE(CheckJsonDepth(R"(["\\", [])", "t", 1).ok());
}

TEST(JsonGuardTest, DeepInputIsLinearAndRejected) {
  const std::string deep(100000, '[');
  Status st = CheckJsonDepth(deep, "query/");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "query/: JSON nesting is deeper than the limit of 64 levels (at byte 64)");
  EXPECT_TRUE(CheckJsonDepth(std::string(64, '[') + std::string(64, ']'), "t").ok());
}

TEST(JsonGuardTest, ExcerptCapsOnUtf8Boundary) {
  EXPECT_EQ(Excerpt("short"), "short");
  EXPECT_EQ(Excerpt(std::string(500, 'x'), 10), "xxxxxxxxxx... (500 bytes)");
  // "é" is 2 bytes (C3 A9); a cut at byte 2 of "aéb" would split it.
  EXPECT_EQ(Excerpt("a\xC3\xA9"
                    "bcd",
                    2),
            "a... (6 bytes)");
}

TEST(JsonGuardTest, ParseErrorDropsParserPrefix) {
  EXPECT_EQ(
      DescribeJsonParseError(
          7, "[json.exception.parse_error.101] parse error at line 1, column 7: syntax error"),
      "at byte 7: syntax error");
}

}  // namespace
}  // namespace strata
