#include "server/api_keys.h"

#include <gtest/gtest.h>

namespace strata::server {
namespace {

TEST(ApiKeys, NoKeysDisablesTheCheck) {
  ApiKeys keys = ApiKeys::FromFlagsAndEnv({}, nullptr);
  EXPECT_FALSE(keys.enabled());
  EXPECT_EQ(keys.size(), 0u);
  EXPECT_FALSE(keys.Matches("anything"));
  // Only empty entries: still no key.
  keys = ApiKeys::FromFlagsAndEnv({"", " "}, ",, ,");
  EXPECT_FALSE(keys.enabled());
}

TEST(ApiKeys, UnionOfFlagsAndEnvIgnoringEmptyEntries) {
  ApiKeys keys = ApiKeys::FromFlagsAndEnv({"flag-key", "shared"}, "env-one,,shared, env-two ,");
  EXPECT_TRUE(keys.enabled());
  EXPECT_EQ(keys.size(), 4u);  // flag-key, shared, env-one, env-two
  EXPECT_TRUE(keys.Matches("flag-key"));
  EXPECT_TRUE(keys.Matches("shared"));
  EXPECT_TRUE(keys.Matches("env-one"));
  EXPECT_TRUE(keys.Matches("env-two"));  // trimmed
  EXPECT_FALSE(keys.Matches(" env-two "));
  EXPECT_FALSE(keys.Matches(""));
}

TEST(ApiKeys, RejectsPrefixesExtensionsAndNearMisses) {
  ApiKeys keys = ApiKeys::FromFlagsAndEnv({"s3cret-key"}, nullptr);
  EXPECT_TRUE(keys.Matches("s3cret-key"));
  EXPECT_FALSE(keys.Matches("s3cret-ke"));    // prefix
  EXPECT_FALSE(keys.Matches("s3cret-keys"));  // extension
  EXPECT_FALSE(keys.Matches("s3cret-kez"));   // last byte differs
  EXPECT_FALSE(keys.Matches("t3cret-key"));   // first byte differs
  EXPECT_FALSE(keys.Matches("S3CRET-KEY"));   // case matters
  // A value that repeats the key (the comparison wraps around the key) is not equal.
  EXPECT_FALSE(keys.Matches("s3cret-keys3cret-key"));
}

TEST(ApiKeys, ConstantTimeEqualsMatchesStringEquality) {
  const std::string key = "abcDEF0123";
  const char* const candidates[] = {"abcDEF0123", "abcDEF012",           "abcDEF01234",
                                    "",           "bbcDEF0123",          "abcDEF0124",
                                    "abcdef0123", "abcDEF0123abcDEF0123"};
  for (const char* c : candidates) {
    EXPECT_EQ(ConstantTimeEquals(c, key), std::string(c) == key) << c;
  }
  EXPECT_FALSE(ConstantTimeEquals("", ""));  // an empty key never matches
  // Embedded NUL bytes are compared like any other byte.
  EXPECT_TRUE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0b", 3)));
  EXPECT_FALSE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0c", 3)));
}

}  // namespace
}  // namespace strata::server
