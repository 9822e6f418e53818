// The in-memory indexes of one MemTable (DESIGN.md §5) and `describe()`, which the REST API's
// mem_wal/describe/ exposes as [{kind, column, name, rows_indexed}]. Issue 3 holds the
// primary-key index (kind "PK", name "pk", column = the key column names joined with ",");
// issue 4 adds HNSW / BTREE / FTS indexes here.
// Thread-safety: not internally locked; the owning MemTable's `mu_` guards it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "memtable/primary_key_index.h"

namespace strata::memtable {

/// One row of IndexStore::describe().
struct IndexDescription {
  std::string kind;    // "PK" | "HNSW" | "BTREE" | "FTS"
  std::string column;  // indexed column(s), comma-separated for composite keys
  std::string name;    // index name
  int64_t rows_indexed = 0;
};

class IndexStore {
 public:
  /// An index store with a primary-key index over `key_column_names` (empty: no PK index).
  explicit IndexStore(std::vector<std::string> key_column_names);

  /// The primary-key index, or nullptr when the table has none.
  PrimaryKeyIndex* primary_key() { return pk_.get(); }
  const PrimaryKeyIndex* primary_key() const { return pk_.get(); }

  /// One description per index, primary key first.
  std::vector<IndexDescription> describe() const;
  /// Approximate memory of all indexes, bytes.
  int64_t memory_bytes() const;

 private:
  std::vector<std::string> key_column_names_;
  std::unique_ptr<PrimaryKeyIndex> pk_;
};

}  // namespace strata::memtable
