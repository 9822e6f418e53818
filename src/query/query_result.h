// The answer of a query: an output schema and record batches under it (possibly none).
// Thread-safety: immutable once returned; share freely.
#pragma once

#include <cstdint>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"

namespace strata::query {

/// Names of the columns Strata appends to query results (PROTOCOL.md §5.2).
inline constexpr const char* kDistanceColumn = "_distance";  // float32, vector search
inline constexpr const char* kRowIdColumn = "_rowid";        // uint64, with_row_id

struct QueryResult {
  arrow::SchemaPtr schema;
  std::vector<arrow::RecordBatchPtr> batches;
  int64_t num_rows = 0;
};

}  // namespace strata::query
