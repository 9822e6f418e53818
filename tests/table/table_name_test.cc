#include "table/table_name.h"

#include <gtest/gtest.h>

namespace strata::table {
namespace {

TEST(TableName, EncodingRoundTripsOddNames) {
  EXPECT_EQ(EncodeNameForDir("plain_name-1.x"), "plain_name-1.x");
  EXPECT_EQ(EncodeNameForDir("a/b"), "a%2Fb");
  EXPECT_EQ(EncodeNameForDir("my table"), "my%20table");
  EXPECT_EQ(EncodeNameForDir("tä"), "t%C3%A4");
  EXPECT_EQ(EncodeNameForDir("ns1$ns2$t"), "ns1%24ns2%24t");
  EXPECT_EQ(EncodeNameForDir("."), "%2E");
  EXPECT_EQ(EncodeNameForDir(".."), "%2E%2E");
  EXPECT_EQ(EncodeNameForDir("..."), "...");
  for (std::string name :
       {"a/b", "my table", "tä", "ns1$ns2$t", ".", "..", "%41", "~x", "A%", "日本語", "x\\y:z*?"}) {
    std::string dir = EncodeNameForDir(name);
    EXPECT_EQ(dir.find('/'), std::string::npos);
    EXPECT_EQ(DecodeNameFromDir(dir), std::optional<std::string>(name)) << dir;
  }
}

TEST(TableName, DecodingIsCanonical) {
  EXPECT_FALSE(DecodeNameFromDir("%41").has_value());  // 'A' would be written plainly
  EXPECT_FALSE(DecodeNameFromDir("%2f").has_value());  // lowercase hex is never written
  EXPECT_FALSE(DecodeNameFromDir("a b").has_value());
  EXPECT_FALSE(DecodeNameFromDir("abc%2").has_value());
  EXPECT_FALSE(DecodeNameFromDir("").has_value());
}

TEST(TableName, LongNamesAreHashedWithinFilesystemLimits) {
  std::string a(256, '\xC3'), b(256, '\xC3');
  b[255] = '\xC4';
  std::string da = EncodeNameForDir(a), db = EncodeNameForDir(b);
  EXPECT_LE(da.size(), 255u);
  EXPECT_EQ(da[0], '~');
  EXPECT_NE(da, db);
  EXPECT_FALSE(DecodeNameFromDir(da).has_value());
}

TEST(TableName, Validation) {
  EXPECT_TRUE(ValidateTableName("ok").ok());
  EXPECT_TRUE(ValidateTableName("").IsInvalid());
  EXPECT_TRUE(ValidateTableName(std::string(257, 'a')).IsInvalid());
  EXPECT_TRUE(ValidateTableName(std::string(256, 'a')).ok());
  Status ctl = ValidateTableName(std::string("a\nb"));
  ASSERT_TRUE(ctl.IsInvalid());
  EXPECT_NE(ctl.message().find("0x0A"), std::string::npos) << ctl.message();
}

TEST(TableName, DotNamesAreRefusedForNewTablesOnly) {
  // Reachable names of existing tables stay valid; a new table may not take them.
  EXPECT_TRUE(ValidateTableName("..").ok());
  Status dots = ValidateNewTableName("..");
  ASSERT_TRUE(dots.IsInvalid());
  EXPECT_NE(dots.message().find("table name '..' is not allowed"), std::string::npos)
      << dots.message();
  EXPECT_TRUE(ValidateNewTableName(".").IsInvalid());
  EXPECT_TRUE(ValidateNewTableName("...").ok());
  EXPECT_TRUE(ValidateNewTableName(".a").ok());
  EXPECT_TRUE(ValidateNewTableName("").IsInvalid());
  Status renamed = ValidateNewTableName(".", "new table name");
  EXPECT_NE(renamed.message().find("new table name '.'"), std::string::npos) << renamed.message();
}

}  // namespace
}  // namespace strata::table
