// Parsing of the JSON bodies of the read routes into query options (PROTOCOL.md §5.1, §5.2).
// query/: k (int64, i64 max = no limit), vector ([] = plain scan, [f64...] = vector search),
// distance_type, columns (array of names, or an object {alias: column} whose values are plain
// column references or SQL expressions), offset, filter (SQL text, query/filter/; checked when
// bound to the table), prefilter, with_row_id, vector_column, version, ef (null or int >= 1:
// HNSW search breadth), nprobes / minimum_nprobes (null or int >= 1: IVF partitions probed;
// the larger of the two counts), maximum_nprobes (null, 0 = unbounded, or >= nprobes: probed
// when the first probe finds fewer than k rows), refine_factor (null or int in [1, 1000]:
// IVF candidates re-ranked exactly = k * refine_factor), bypass_vector_index, lower_bound /
// upper_bound (null or a number: the distance range). Other keys are ignored.
// full_text_query (a full-text search; not together with a vector) in the legacy shape
// {"columns": [..], "query": "text"} (OR match; [] = every FTS column) or the structured shape
// {"query": {"match": {"terms", "column"?, "operator": "Or"|"And", "boost": 1, "fuzziness": 0,
// ...}}} / {"query": {"phrase": {"terms", "column"?, "slop": 0}}}; k defaults to 10.
// Unsupported features are rejected (NotSupported, HTTP 400) instead of being ignored:
// order_by, multi-vector queries, the structured FTS
// queries multi_match / boost / boolean, fuzziness != 0, boost != 1, slop != 0.
// Bodies nesting deeper than kMaxJsonDepth (common/json_guard.h) are rejected before parsing;
// malformed JSON is Invalid naming the parser's byte position; invalid values are described by
// JSON type (arrays/objects) or a capped excerpt, never echoed whole. k must be >= 0 for a
// plain scan and >= 1 for a vector search.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "common/status.h"
#include "query/fts_search.h"
#include "query/scan.h"
#include "query/vector_search.h"

namespace strata::server {

/// A parsed query/ body: a plain scan, a vector search or a full-text search, plus the
/// requested version.
struct QueryRequest {
  std::variant<query::ScanOptions, query::VectorSearchOptions, query::FtsSearchOptions> plan;
  std::optional<uint64_t> version;
};

/// Parses a query/ body. Errors: Invalid naming the key and what was expected; NotSupported
/// for query features that later issues add (order_by, structured FTS queries other than
/// match and phrase, multi-vector).
Result<QueryRequest> ParseQueryRequest(std::string_view body);

/// A parsed count_rows/ body ({"version"?, "predicate"?}; an empty body is allowed).
struct CountRowsRequest {
  std::optional<std::string> predicate;  // SQL filter text; blank = none
  std::optional<uint64_t> version;
};
Result<CountRowsRequest> ParseCountRowsRequest(std::string_view body);

/// The "version" of a describe/ body (empty body or {"version": null|N}).
Result<std::optional<uint64_t>> ParseDescribeRequest(std::string_view body);

}  // namespace strata::server
