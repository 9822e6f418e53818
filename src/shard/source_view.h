// One source of a read (DESIGN.md §6): a published SSTable, a frozen MemTable or the active
// MemTable of a shard, as a query sees it at its snapshot: every row below the snapshot's
// watermark under the storage schema (user columns first, in table order, then `_rowid` when
// the table has no primary key, then `_tombstone`), its liveness as the view sees it (the row
// is the newest version of its key across all tiers of the view and not a tombstone:
// shard/liveness.h, shared with the writer and read without a copy), and the complete
// indexes of the table's current index definitions (each covers every row of the source;
// a source whose index is missing or still being built has none, and queries scan it exactly).
// A MemTable's index may hold rows newer than the snapshot: they are never live here, so
// callers filter candidates with IsLive (which bounds positions by num_rows).
// Point lookups (DESIGN.md §5 primary-key index): `key_columns` names the declared primary key
// and `find_key` maps an encoded key (format/key_encoding.h) to the newest row of this source
// holding it below num_rows (an SSTable: SSTableReader::Lookup, bloom filter then pk index; a
// MemTable: its primary-key index read at the snapshot's watermark).
// Thread-safety: immutable once built; share freely.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "arrow/array.h"
#include "index/column_index.h"
#include "memtable/append_log.h"
#include "shard/liveness.h"

namespace strata::shard {

struct SourceView {
  std::string name;  // e.g. "sstable gen 3", "memtable gen 5 (active)"
  /// In the view of a table of several shards: the shard (bucket) whose rows it holds; -1 for
  /// a source of every shard (the shared base) or of a one-shard table.
  int shard = -1;
  bool memtable = false;  // true for frozen and active MemTables
  uint64_t generation = 0;
  /// Storage schema, rows [0, num_rows); a MemTable's are a view of its log (no copy).
  memtable::LogView<arrow::RecordBatchPtr> batches;
  memtable::LogView<int64_t> batch_starts;  // first row position of each batch
  int64_t num_rows = 0;
  /// Marks of this source's rows (shared with the writer) and the view they are read under.
  std::shared_ptr<const Liveness> liveness;
  std::shared_ptr<const Visibility> visibility;
  int64_t live_rows = 0;  // live rows of [0, num_rows) in this view
  std::vector<std::shared_ptr<const index::ColumnIndex>> indexes;
  /// Storage indexes of the declared primary-key columns, key order; empty for tables keyed
  /// by the hidden `_rowid`.
  std::vector<int> key_columns;
  /// Newest row position < num_rows whose encoded key (format/key_encoding.h over
  /// key_columns) is `key`, or nullopt. The row may be a tombstone or superseded by a newer
  /// source: callers check IsLive. Empty when the source has no key index reachable (queries
  /// then evaluate filters over its rows).
  std::function<std::optional<int64_t>(std::string_view key)> find_key;

  /// (batch index, row in batch) of `position`, or (-1, -1) when out of [0, num_rows).
  std::pair<int64_t, int64_t> Locate(int64_t position) const;
  /// Whether row `position` is live (false out of range). O(1); reads no mark when the view
  /// sees no dead row in the source (live_rows == num_rows).
  bool IsLive(int64_t position) const {
    if (position < 0 || position >= num_rows) return false;
    // live_rows is exact for the view (DeadIn): a source without a dead row needs no mark.
    if (live_rows == num_rows) return true;
    return liveness == nullptr || liveness->IsLive(position, *visibility);
  }
  /// LSB-first bitmap of the live rows of batch `k` (ceil(rows / 8) bytes), computed from the
  /// marks: O(rows of the batch).
  std::vector<uint8_t> LiveBits(size_t k) const;
  /// Sets liveness to `live` (per row, true = live; empty = all live) under a view that sees
  /// every mark, and live_rows to match (sources built by hand in tests).
  void SetLiveRows(const std::vector<bool>& live);
  /// The complete index of `kind` on user column `column` (storage column index), or nullptr.
  const index::ColumnIndex* FindIndex(int column, index::IndexKind kind) const;
};

}  // namespace strata::shard
