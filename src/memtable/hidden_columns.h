// Hidden storage columns of a shard (issue 3): every batch a MemTable / WAL entry / SSTable
// holds has the user columns, then
//   `_rowid` uint64 non-null   only for tables WITHOUT a declared primary key: an
//                              auto-assigned key (the ShardWriter assigns consecutive values
//                              at put time; they are in the WAL, so replay restores them);
//   `_tombstone` bool nullable  true marks a row that deletes its key (its other non-key
//                              columns are null); false/null = a live row.
// The storage schema is built once per table by MakeStorageLayout; readers drop the hidden
// columns before answering users unless asked (`with_row_id`).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::memtable {

inline constexpr char kRowIdColumn[] = "_rowid";
inline constexpr char kTombstoneColumn[] = "_tombstone";

/// Where the key and hidden columns are in the storage schema.
struct StorageLayout {
  arrow::SchemaPtr user_schema;
  /// User columns (non-key ones made nullable, so tombstone rows are valid), [_rowid],
  /// _tombstone. WAL entries, MemTables and SSTables use this schema.
  arrow::SchemaPtr storage_schema;
  std::vector<int> key_columns;  // storage indexes of the PK columns, or {rowid_column}
  int rowid_column = -1;         // -1 for tables with a declared primary key
  int tombstone_column = -1;
};

/// The storage layout of a table with `user_schema` and declared primary key columns
/// `primary_key` (names, key order; empty = none -> hidden `_rowid`).
/// Errors: Invalid when a key column is missing or repeated, or the user schema already has
/// a column named `_rowid`/`_tombstone`; NotSupported when a key column's type cannot be a key.
Result<StorageLayout> MakeStorageLayout(arrow::SchemaPtr user_schema,
                                        const std::vector<std::string>& primary_key);

/// `batch` (conforming to layout.user_schema) with the hidden columns appended: `_rowid`
/// first_rowid, first_rowid + 1, ... (when the layout has it) and `_tombstone` = `tombstone`
/// for every row. Errors: Invalid when the batch's column count differs from the user schema.
Result<arrow::RecordBatchPtr> AddHiddenColumns(const StorageLayout& layout,
                                               const arrow::RecordBatch& batch,
                                               uint64_t first_rowid, bool tombstone = false);

/// Tombstone rows for rows `rows` of `storage_batch` (under layout.storage_schema): the key
/// columns (and `_rowid`) copied, every other column null, `_tombstone` true.
/// Errors: Invalid for a schema mismatch or a row out of range.
Result<arrow::RecordBatchPtr> MakeTombstones(const StorageLayout& layout,
                                             const arrow::RecordBatch& storage_batch,
                                             const std::vector<int64_t>& rows);

/// A `uint64` array of values first, first + 1, ..., first + n - 1, no nulls.
arrow::ArrayDataPtr MakeRowIdArray(uint64_t first, int64_t n);
/// A `bool` array of n copies of `value`, no nulls.
arrow::ArrayDataPtr MakeConstantBoolArray(bool value, int64_t n);

}  // namespace strata::memtable
