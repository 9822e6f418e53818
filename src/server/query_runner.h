// Runs a parsed query/ body (query_request.h) on a table snapshot, and describes it in words
// for explain_plan/ and analyze_plan/ (PROTOCOL.md §5.1).
// Thread-safety: pure functions over an immutable snapshot.
#pragma once

#include <string>

#include "common/status.h"
#include "query/query_result.h"
#include "server/query_request.h"
#include "table/table.h"

namespace strata::server {

/// Scan, vector search or full-text search, as the request's plan says. Errors: those of
/// query::Scan / VectorSearch / FtsSearch (Invalid naming the field).
Result<query::QueryResult> RunQuery(const table::TableSnapshot& snapshot, const QueryRequest& req);

/// One line naming the query kind and its parameters, e.g.
/// "VectorSearch column=vec distance=l2 k=10 offset=0 prefilter filter=(cat = 'a')".
/// A vector search that names no column names the one `schema` resolves it to (the table's
/// only fixed_size_list<float32> column), not a placeholder; without `schema` (or when it
/// does not resolve) "(the vector column)".
std::string DescribeQuery(const QueryRequest& req, const arrow::Schema* schema = nullptr);

}  // namespace strata::server
