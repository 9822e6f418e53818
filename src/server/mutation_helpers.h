// Helpers shared by the read-modify-write routes (delete/, update/, merge_insert/,
// PROTOCOL.md §5.3): the storage layout of a snapshot, boolean query parameters, and the
// hidden-column values a bound expression reads.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include <httplib.h>

#include "common/status.h"
#include "memtable/hidden_columns.h"
#include "query/filter/evaluator.h"
#include "query/matched_rows.h"
#include "table/table.h"

namespace strata::server {

/// The storage layout (hidden columns, key columns) of the shard behind `snapshot`: its
/// primary key is snapshot.key_columns unless that is the hidden `_rowid`.
/// Errors: Invalid from memtable::MakeStorageLayout (only for a corrupt snapshot).
Result<memtable::StorageLayout> StorageLayoutOf(const table::TableSnapshot& snapshot);

/// Query parameter `name` as a bool: absent -> `fallback`; "true"/"false" (any case).
/// Errors: Invalid naming the parameter and the value.
Result<bool> BoolParam(const httplib::Request& req, const std::string& name, bool fallback);

/// `_rowid` / `_rowoffset` arrays for evaluating `expr` over the rows of `matched` (filled only
/// when the expression reads them); `context()` points into this object.
struct HiddenValues {
  std::vector<uint64_t> row_ids;
  std::vector<uint64_t> row_offsets;
  query::filter::RowContext context() const {
    query::filter::RowContext c;
    if (!row_ids.empty()) c.row_ids = row_ids.data();
    if (!row_offsets.empty()) c.row_offsets = row_offsets.data();
    return c;
  }
};
HiddenValues HiddenValuesFor(const query::filter::BoundExpr& expr,
                             const shard::ShardSnapshot& shard, const query::MatchedBatch& matched);

}  // namespace strata::server
