// The request limits of `strata serve` (ServerOptions::limits, DESIGN.md §9), checked in one
// place by every route: rows per write, vector dimension, single string/binary value size,
// k of vector and full-text queries, filter length. (The body size is checked while the body
// is read, body_reader.h.) Every violation is Status::Invalid (HTTP 400 invalid_input) whose
// message names the limit, its value and the flag, e.g.
//   "insert: 1000001 rows exceed the limit of 1000000 rows per write
//    (strata serve --max-rows-per-write)".
// Writes call these BEFORE anything is written (update/ inside its read-modify-write function,
// before returning the mutation), so a refused write changes nothing.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"
#include "server/query_request.h"
#include "server/server_options.h"

namespace strata::server {

/// `rows` against max_rows_per_write. `route` prefixes the message ("insert", ...).
Status CheckRowsPerWrite(const RequestLimits& limits, int64_t rows, std::string_view route);

/// Every fixed_size_list (vector) column of `schema`, nested ones included, against
/// max_vector_dim (and RequestLimits::kHardMaxVectorDim). Used by create/, overwrites and
/// schema changes (add_columns/).
Status CheckSchemaLimits(const RequestLimits& limits, const arrow::Schema& schema,
                         std::string_view route);

/// Every utf8/binary/large_utf8/large_binary/fixed_size_binary value of `batches` (inside
/// lists and structs too) against max_string_bytes; null values are skipped. The message
/// names the row (counted across the batches, from 0), the top-level column and the size.
Status CheckStringValues(const RequestLimits& limits,
                         const std::vector<arrow::RecordBatchPtr>& batches, std::string_view route);

/// All of the above for one write of `batches` under `schema` (schema may be null: then the
/// schema check is skipped, as for an append to an existing table).
Status CheckWrite(const RequestLimits& limits, const arrow::Schema* schema,
                  const std::vector<arrow::RecordBatchPtr>& batches, std::string_view route);

/// The length of one SQL filter / predicate text against max_filter_bytes (and the parser's
/// own 64 KiB cap). `what` names it ("filter", "predicate", ...).
Status CheckFilterBytes(const RequestLimits& limits, std::string_view text, std::string_view what);

/// A parsed query/ body: k of a vector or full-text search against max_k (a plain scan's k is
/// not limited: the LanceDB client sends i64 max for "no limit"), and its filter length.
Status CheckQueryLimits(const RequestLimits& limits, const QueryRequest& request);

}  // namespace strata::server
