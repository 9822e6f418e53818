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
inline constexpr const char* kScoreColumn = "_score";        // float32, full-text search

struct QueryResult {
  arrow::SchemaPtr schema;
  std::vector<arrow::RecordBatchPtr> batches;
  int64_t num_rows = 0;
  /// How the query ran, one line per source (e.g. "sstable gen 3: HNSW 'vec_idx' ef=64",
  /// "memtable gen 5 (active): exact scan, no HNSW on 'vec'"), for explain_plan and tests.
  std::vector<std::string> plan;
};

}  // namespace strata::query
