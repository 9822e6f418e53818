// Per-request facts taken from the HTTP request line and headers (PROTOCOL.md §0 rules 1-2,
// §1): the database (`x-lancedb-database`, default "default"), the table id and the action of
// `/v1/table/{id}/{action}/` (trailing slash optional, `{id}` percent-decoded and allowed to
// contain '/'), and query parameters.
// Thread-safety: pure functions; RequestContext is a plain value.
#pragma once

#include <string>
#include <string_view>

#include <httplib.h>

#include "common/status.h"

namespace strata::server {

inline constexpr const char* kDatabaseHeader = "x-lancedb-database";
inline constexpr const char* kDefaultDatabase = "default";

/// A parsed table route.
struct TableRoute {
  std::string table;       // decoded table id, e.g. "my table" or "ns1$t"
  std::string action;      // e.g. "describe", "count_rows", "index/list", "index/{n}/stats"
  std::string index_name;  // decoded {n} of index/{n}/... actions, else empty
};

/// Decodes %XX escapes ('+' stays '+', as in a URL path). Errors: Invalid for a truncated or
/// non-hex escape, naming its position.
Result<std::string> PercentDecode(std::string_view s);

/// Splits the raw (still encoded) path of a `/v1/table/...` request, without the query string,
/// into table id and action. The action is the last segment, or the last two for multi-segment
/// actions (mem_wal/describe, index/list, version/list, tags/*, multipart_write/*,
/// page_cache/prewarm, branches/*), or the last three for index/{n}/{stats,drop,prewarm}.
/// Errors: NotFound when the path is not `/v1/table/{id}/{action}`; Invalid for a bad escape.
Result<TableRoute> ParseTableRoute(std::string_view raw_path);

/// The database of the request: the `x-lancedb-database` header, or "default" when absent.
/// Errors: Invalid when the name is empty, longer than 256 bytes or has control characters.
Result<std::string> DatabaseOf(const httplib::Request& req);

/// The raw path of `req` (its target without the query string).
std::string_view RawPath(const httplib::Request& req);

}  // namespace strata::server
