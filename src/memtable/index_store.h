// The in-memory indexes of one MemTable (DESIGN.md §5) and `describe()`, which the REST API's
// mem_wal/describe/ exposes as [{kind, column, name, rows_indexed}]: the primary-key index
// (kind "PK", name "pk", column = the key column names joined with ",") when the table has
// one, plus one entry per maintained index definition (HNSW / BTREE / FTS, index/column_index.h).
// A definition added while the MemTable already holds rows is backfilled: rows below
// `created_at_row` are indexed by MemTable::Backfill, later rows by the puts that insert them;
// until the backfill finishes the entry is not `complete` and queries scan this MemTable
// exactly for that column.
// Thread-safety: the entry list is not internally locked (the owning MemTable's `mu_` guards
// it); each entry's index is internally locked and its flags are atomics, so an entry may be
// used outside the MemTable lock once obtained.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "index/column_index.h"
#include "memtable/primary_key_index.h"

namespace strata::memtable {

/// One row of IndexStore::describe().
struct IndexDescription {
  std::string kind;    // "PK" | "HNSW" | "BTREE" | "FTS"
  std::string column;  // indexed column(s), comma-separated for composite keys
  std::string name;    // index name
  int64_t rows_indexed = 0;
};

/// One maintained index of a MemTable.
struct MemIndexEntry {
  std::shared_ptr<index::ColumnIndex> index;
  int64_t created_at_row = 0;         // rows [0, created_at_row) come from the backfill
  std::atomic<bool> complete{false};  // every row below the watermark is indexed
  std::atomic<bool> failed{false};    // an IndexBatch failed: never complete, queries scan
};

class IndexStore {
 public:
  /// An index store with a primary-key index over `key_column_names` (empty: no PK index).
  explicit IndexStore(std::vector<std::string> key_column_names);

  /// The primary-key index, or nullptr when the table has none.
  PrimaryKeyIndex* primary_key() { return pk_.get(); }
  const PrimaryKeyIndex* primary_key() const { return pk_.get(); }

  /// The maintained index entries, in definition order.
  std::vector<std::shared_ptr<MemIndexEntry>>& entries() { return entries_; }
  const std::vector<std::shared_ptr<MemIndexEntry>>& entries() const { return entries_; }

  /// One description per index, primary key first, then the entries in definition order.
  std::vector<IndexDescription> describe() const;
  /// Approximate memory of the primary-key index, bytes (entries report their own).
  int64_t memory_bytes() const;
  /// Memory of the entries' indexes (allocated capacity), bytes.
  int64_t entries_memory_bytes() const;

 private:
  std::vector<std::string> key_column_names_;
  std::unique_ptr<PrimaryKeyIndex> pk_;
  std::vector<std::shared_ptr<MemIndexEntry>> entries_;
};

}  // namespace strata::memtable
