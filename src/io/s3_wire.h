// The S3 wire format S3ObjectStore speaks (no I/O here): URI encoding of object paths and query
// values as SigV4 canonicalises them, the ListObjectsV2 XML response, the error XML body, and the
// two timestamp formats (RFC 1123 in Last-Modified headers, ISO 8601 in listings).
// XML: S3 responses are small, flat and machine-written (no CDATA, no comments inside the
// elements read here), so a scanner over "<Tag>text</Tag>" pairs suffices; element text is
// entity-decoded (&amp; &lt; &gt; &quot; &apos; and numeric &#N; / &#xH; to UTF-8), because a
// key such as "a&b<c" arrives as "a&amp;b&lt;c". Raw '<' never occurs in element text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::io::s3 {

/// %-encodes every byte except the unreserved set A-Z a-z 0-9 '-' '_' '.' '~' as %XX (upper-case
/// hex), and also keeps '/' when `keep_slash` (object paths). SigV4 for S3 signs the path once
/// encoded like this and query values encoded with keep_slash = false.
std::string UriEncode(std::string_view s, bool keep_slash);

/// A query string with the parameters sorted by name and values UriEncoded, as SigV4 signs it
/// verbatim through libcurl ("a=1&b=x%2Fy"); empty values give "name=".
std::string CanonicalQuery(std::vector<std::pair<std::string, std::string>> params);

/// Decodes XML character references in element text. Invalid on an unknown or malformed entity.
Result<std::string> XmlUnescape(std::string_view text);

/// The text of the first <tag>...</tag> (or empty for <tag/>) in `xml` at or after `from`, not
/// yet unescaped; nullopt when absent. `*end` (if given) receives the offset after the element.
std::optional<std::string_view> XmlElement(std::string_view xml, std::string_view tag,
                                           size_t from = 0, size_t* end = nullptr);

/// One object of a listing page.
struct ListedObject {
  std::string key;  // full S3 key (store prefix included)
  int64_t size = 0;
  int64_t mtime_micros = 0;  // 0 when LastModified is missing or unparsable
};

/// One ListObjectsV2 response page.
struct ListPage {
  std::vector<ListedObject> objects;         // <Contents>
  std::vector<std::string> common_prefixes;  // <CommonPrefixes><Prefix> (full, with delimiter)
  bool truncated = false;                    // <IsTruncated>true
  std::string next_token;                    // <NextContinuationToken>
};

/// Parses a ListBucketResult body. Corruption when it is not one (or a truncated page has no
/// continuation token, or a Size is not a number).
Result<ListPage> ParseListPage(std::string_view xml);

/// "Code: Message" from an S3 <Error> body, or "" when the body is not one.
std::string ErrorSummary(std::string_view xml);

/// RFC 1123 ("Wed, 02 Dec 2026 00:20:28 GMT") to microseconds since the epoch; 0 if unparsable.
int64_t ParseHttpDate(std::string_view s);

/// ISO 8601 UTC ("2026-12-02T00:20:28.123Z", fraction optional) to microseconds; 0 if
/// unparsable.
int64_t ParseIso8601(std::string_view s);

}  // namespace strata::io::s3
