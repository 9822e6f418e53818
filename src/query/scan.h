// Plain scan (DESIGN.md §6): the live rows of a snapshot's sources in scan order (sources
// oldest first, positions ascending), filtered by an SQL filter (using key and BTree indexes
// where they cover it, source_rows.h AcceptedRows), skipping `offset` (matching) rows and
// returning at most `limit`. Also count_rows/.
// Thread-safety: pure function over an immutable snapshot.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <string>
#include "common/status.h"
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
  /// SQL filter (query/filter/); unset = every live row.
  std::optional<std::string> filter;
  /// Append `_rowid` (uint64, the row-version address of source_rows.h).
  bool with_row_id = false;
};

/// Scans `snapshot`. QueryResult::plan names each source and how its rows were chosen.
/// Errors: Invalid for a negative offset or limit (naming it), an unknown column, or a filter
/// that does not parse or bind (token and position).
Result<QueryResult> Scan(const table::TableSnapshot& snapshot, const ScanOptions& options);

/// Live rows of `snapshot` passing `filter` (unset = all live rows; equals num_rows then).
/// Errors: as Scan.
Result<int64_t> CountRows(const table::TableSnapshot& snapshot,
                          const std::optional<std::string>& filter);

}  // namespace strata::query
