#include "io/s3_wire.h"

#include <gtest/gtest.h>

namespace strata::io::s3 {
namespace {

TEST(S3Wire, UriEncodeKeepsUnreservedAndOptionallySlash) {
  EXPECT_EQ(UriEncode("a-b_c.d~e/F9", true), "a-b_c.d~e/F9");
  EXPECT_EQ(UriEncode("a-b_c.d~e/F9", false), "a-b_c.d~e%2FF9");
  EXPECT_EQ(UriEncode("a b+c=d&e%f", true), "a%20b%2Bc%3Dd%26e%25f");
  EXPECT_EQ(UriEncode("ü", true), "%C3%BC");
  EXPECT_EQ(UriEncode("#?*", true), "%23%3F%2A");
  EXPECT_EQ(UriEncode(std::string("\x00\xff", 2), true), "%00%FF");
}

TEST(S3Wire, CanonicalQuerySortsAndEncodes) {
  EXPECT_EQ(CanonicalQuery({{"prefix", "wal/"}, {"max-keys", "1000"}, {"list-type", "2"}}),
            "list-type=2&max-keys=1000&prefix=wal%2F");
  EXPECT_EQ(CanonicalQuery({{"prefix", ""}, {"continuation-token", "1/a+b="}}),
            "continuation-token=1%2Fa%2Bb%3D&prefix=");
}

TEST(S3Wire, XmlUnescapeNamedAndNumericEntities) {
  EXPECT_EQ(*XmlUnescape("a&amp;b&lt;c&gt;d&quot;e&apos;f"), "a&b<c>d\"e'f");
  EXPECT_EQ(*XmlUnescape("&#65;&#x42;&#xfc;&#x65E5;&#x1F600;"),
            "AB\xC3\xBC\xE6\x97\xA5\xF0\x9F\x98\x80");
  EXPECT_EQ(*XmlUnescape("&amp;amp;"), "&amp;");  // decoded once only
  EXPECT_EQ(*XmlUnescape(""), "");
  EXPECT_TRUE(XmlUnescape("a&b").status().IsInvalid());
  EXPECT_TRUE(XmlUnescape("&nbsp;").status().IsInvalid());
  EXPECT_TRUE(XmlUnescape("&#xD800;").status().IsInvalid());
  EXPECT_TRUE(XmlUnescape("&#;").status().IsInvalid());
  EXPECT_TRUE(XmlUnescape("&#x110000;").status().IsInvalid());
}

TEST(S3Wire, XmlElementFindsExactTagsAndEmptyOnes) {
  const std::string xml = "<R><KeyCount>2</KeyCount><Key>k</Key><Prefix/><P a=\"1\">v</P></R>";
  EXPECT_EQ(*XmlElement(xml, "Key"), "k");  // not KeyCount
  EXPECT_EQ(*XmlElement(xml, "KeyCount"), "2");
  EXPECT_EQ(*XmlElement(xml, "Prefix"), "");
  EXPECT_EQ(*XmlElement(xml, "P"), "v");
  EXPECT_FALSE(XmlElement(xml, "Missing").has_value());
}

TEST(S3Wire, ParsesListPageWithEscapedKeysPrefixesAndToken) {
  const std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Name>strata</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>"
      "<IsTruncated>true</IsTruncated><NextContinuationToken>tok&amp;1</NextContinuationToken>"
      "<Contents><Key>p/a&amp;b&lt;c</Key><LastModified>2026-12-02T00:20:28.123Z</LastModified>"
      "<ETag>&quot;abc&quot;</ETag><Size>11</Size><StorageClass>STANDARD</StorageClass>"
      "</Contents>"
      "<Contents><Key>p/z</Key><LastModified>2026-12-02T00:20:29Z</LastModified><Size>0</Size>"
      "</Contents>"
      "<CommonPrefixes><Prefix>p/d&apos;1/</Prefix></CommonPrefixes>"
      "</ListBucketResult>";
  auto page = ParseListPage(xml);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "p/a&b<c");
  EXPECT_EQ(page->objects[0].size, 11);
  EXPECT_EQ(page->objects[0].mtime_micros, 1'796'170'828'123'000);
  EXPECT_EQ(page->objects[1].key, "p/z");
  EXPECT_EQ(page->objects[1].size, 0);
  EXPECT_EQ(page->objects[1].mtime_micros, 1'796'170'829'000'000);
  EXPECT_EQ(page->common_prefixes, (std::vector<std::string>{"p/d'1/"}));
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_token, "tok&1");
}

TEST(S3Wire, RejectsMalformedListPages) {
  EXPECT_EQ(ParseListPage("<Error><Code>AccessDenied</Code></Error>").status().code(),
            StatusCode::kCorruption);
  EXPECT_EQ(ParseListPage("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>")
                .status()
                .code(),
            StatusCode::kCorruption);
  EXPECT_EQ(ParseListPage("<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents>"
                          "</ListBucketResult>")
                .status()
                .code(),
            StatusCode::kCorruption);
  auto empty =
      ParseListPage("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->objects.empty());
  EXPECT_FALSE(empty->truncated);
}

TEST(S3Wire, ErrorSummaryAndDates) {
  EXPECT_EQ(ErrorSummary("<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code>"
                         "<Message>a &amp; b</Message></Error>"),
            "SignatureDoesNotMatch: a & b");
  EXPECT_EQ(ErrorSummary("not xml"), "");
  EXPECT_EQ(ParseHttpDate("Wed, 02 Dec 2026 00:20:28 GMT"), 1'796'170'828'000'000);
  EXPECT_EQ(ParseHttpDate("Thu, 01 Jan 1970 00:00:01 GMT"), 1'000'000);
  EXPECT_EQ(ParseHttpDate("garbage"), 0);
  EXPECT_EQ(ParseHttpDate("Wed, 02 Foo 2026 00:20:28 GMT"), 0);
  EXPECT_EQ(ParseIso8601("2026-12-02T00:20:28.5Z"), 1'796'170'828'500'000);
  EXPECT_EQ(ParseIso8601("2026-12-02T00:20:28Z"), 1'796'170'828'000'000);
  EXPECT_EQ(ParseIso8601("2026-12-02 00:20:28"), 0);
}

}  // namespace
}  // namespace strata::io::s3
