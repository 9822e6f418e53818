// Plain scan: the rows of a snapshot in row-position order, optionally filtered by the
// skeleton's `column = literal` predicate, skipping `offset` (matching) rows and returning at
// most `limit`. Unfiltered scans are zero-copy (slices of the snapshot's batches); filtered
// ones gather the matching rows into new batches.
// Thread-safety: pure function over an immutable snapshot.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "common/status.h"
#include "query/predicate.h"
#include "query/projection.h"
#include "query/query_result.h"
#include "table/table.h"

namespace strata::query {

struct ScanOptions {
  /// Rows to skip (>= 0), counted after the filter.
  int64_t offset = 0;
  /// Most rows returned (>= 0); LanceDB clients send i64 max for "no limit".
  int64_t limit = std::numeric_limits<int64_t>::max();
  /// Output columns; empty = all.
  std::vector<ColumnRef> columns;
  std::optional<EqualsPredicate> filter;
  /// Append `_rowid` (uint64): the hidden row key of tables without a primary key
  /// (TableSnapshot::row_ids), else the row position in the snapshot (0-based, oldest first).
  bool with_row_id = false;
};

/// Scans `snapshot`. Errors: Invalid for a negative offset or limit (naming it), an unknown
/// column, or a filter that does not bind to the schema.
Result<QueryResult> Scan(const table::TableSnapshot& snapshot, const ScanOptions& options);

}  // namespace strata::query
