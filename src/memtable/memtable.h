// The MemTable (DESIGN.md §1, §4, §5): an append-only list of record batches of one shard and
// one generation, with 0-based row positions (row i of the k-th batch has position
// rows_before(k) + i; a higher position is newer), its IndexStore (primary-key index: encoded
// key -> newest row position), a visibility watermark, row/byte counters, age, and a frozen
// flag.
//
// Visibility: Insert appends rows (and their primary keys) but leaves them invisible. A row
// becomes visible once (1) the WAL entry holding it is durable (MarkDurable(end, pos), called
// from WalWriter's OnDurable in WAL order) and (2) every maintained index holds it
// (IndexRows(range), which the put calls outside every lock, so puts index concurrently). The
// watermark moves forward over contiguous inserted ranges that are both durable and indexed.
// Snapshots, Lookup and SupersededRows only see rows below the watermark: a reader never sees
// a row that could be lost in a crash or that an index does not hold yet. WAL replay uses
// InsertVisible (insert + index + watermark at once). A snapshot's batches end exactly at the
// watermark because every Insert is one range. A held Insert (Insert(batches, true): one
// shard's part of a multi-shard write, docs/SHARDING.md) also waits for Release(end), which the
// writer calls once the write is committed in every shard; the watermark stops before it
// meanwhile, so later rows wait too (they are newer in WAL order).
//
// Keys: with key columns set (MemTableOptions::key_columns: the declared primary key, or the
// hidden `_rowid` column, see hidden_columns.h) every row is indexed under its
// order-preserving encoded key (format/key_encoding.h). Newest wins: a higher position
// replaces a lower one of the same key; a row whose `_tombstone` is true deletes its key.
//
// Locking: `mu_` (shared_mutex) guards batches_, batch_starts_, indexes_ (the entry list),
// pending_, watermark_, last_wal_position_, frozen_ and first_insert_; writers (Insert,
// MarkDurable, Freeze, TruncateInvisible) take it exclusively, readers share it. The counters are
// atomics readable without the lock. Thread-safety: every method may be called from many threads at
// once; the caller orders Inserts (the ShardWriter's put lock) so that Insert order = WAL order.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"
#include "format/key_encoding.h"
#include "index/index_spec.h"
#include "memtable/append_log.h"
#include "memtable/index_store.h"

namespace strata::memtable {

struct MemTableOptions {
  /// Generation this MemTable will have when sealed (per shard, from 1).
  uint64_t generation = 1;
  /// Storage-schema indexes of the key columns (key order); empty = no primary-key index.
  std::vector<int> key_columns;
  /// Storage-schema index of the `_tombstone` bool column, -1 = none.
  int tombstone_column = -1;
  /// Maintained index definitions (columns by name in the storage schema); each starts empty
  /// and complete.
  std::vector<index::IndexSpec> indexes;
};

/// Rows [begin, end) of a MemTable.
struct RowRange {
  int64_t begin = 0;
  int64_t end = 0;
};

/// A consistent read view of a MemTable: the rows below the watermark at the time of the call.
struct MemTableSnapshot {
  std::vector<arrow::RecordBatchPtr> batches;  // oldest first, visible rows only
  int64_t num_rows = 0;                        // visible rows (= the watermark)
  int64_t num_bytes = 0;                       // bytes of the visible batches
  uint64_t last_wal_position = 0;  // newest durable WAL entry whose rows are visible, 0 = none
  uint64_t generation = 0;
  bool frozen = false;
};

/// A read view of a MemTable without copying its batch list (memtable/append_log.h): the
/// batches holding exactly the rows below the watermark at the time of the call. O(log
/// batches).
struct MemTableView {
  LogView<arrow::RecordBatchPtr> batches;  // oldest first
  LogView<int64_t> batch_starts;           // first row position of each batch
  int64_t num_rows = 0;                    // visible rows (= the watermark)
  uint64_t last_wal_position = 0;
};

class MemTable {
 public:
  /// A MemTable without key columns or tombstones (issue 2 form), generation 1.
  explicit MemTable(arrow::SchemaPtr schema);

  /// A MemTable of `schema` (the storage schema). Errors: Invalid / NotSupported for bad key
  /// columns (format::KeyEncoder::Make) or a tombstone column that is not bool.
  static Result<std::shared_ptr<MemTable>> Make(arrow::SchemaPtr schema,
                                                MemTableOptions options = {});

  const arrow::SchemaPtr& schema() const { return schema_; }
  uint64_t generation() const { return options_.generation; }
  const MemTableOptions& options() const { return options_; }

  /// Appends `batches` (already conformed to the schema; 0-row batches skipped) and their
  /// primary keys, invisible until both MarkDurable and IndexRows passed them. Returns their
  /// positions. Errors: Invalid when the MemTable is frozen (nothing changes).
  Result<RowRange> Insert(const std::vector<arrow::RecordBatchPtr>& batches);
  /// Insert; with `hold` the rows also wait for Release(range.end) before they are visible.
  Result<RowRange> Insert(const std::vector<arrow::RecordBatchPtr>& batches, bool hold);
  /// Lets the held Insert ending at `end` become visible (once durable and indexed too).
  /// No-op when no held Insert ends there.
  void Release(int64_t end);
  /// Indexes rows `range` (one Insert's answer) into every maintained index that existed at
  /// that Insert, then marks the range indexed. Call once per Insert, without holding locks;
  /// concurrent calls for different ranges are fine. An index that fails (allocation) is
  /// marked failed (queries then scan this MemTable exactly) and the rows still become
  /// visible: the WAL holds them, an index failure never loses a write.
  void IndexRows(RowRange range);
  /// Marks inserted rows < `end` durable and records `wal_position` (0 = not logged); they
  /// become visible once indexed too (the watermark never moves back).
  void MarkDurable(int64_t end, uint64_t wal_position);
  /// Insert + IndexRows + MarkDurable(range.end, wal_position): WAL replay.
  Result<RowRange> InsertVisible(const std::vector<arrow::RecordBatchPtr>& batches,
                                 uint64_t wal_position);
  /// Issue 2 form: InsertVisible; returns the first row's position (-1 if frozen).
  int64_t Append(const std::vector<arrow::RecordBatchPtr>& batches, uint64_t wal_position);
  /// Drops every row at or past the watermark (rows whose WAL write failed), undoing their
  /// index entries. The caller must hold off concurrent Inserts. Returns rows dropped.
  int64_t TruncateInvisible();

  /// Seals the MemTable: later Inserts fail. Idempotent.
  void Freeze();
  bool frozen() const;

  MemTableSnapshot Snapshot() const;
  /// The same rows as Snapshot(), without copying the batch list.
  MemTableView View() const;

  /// Newest visible row position (< watermark) whose encoded key is `key`, or nullopt
  /// (also when the MemTable has no key columns). The row may be a tombstone.
  std::optional<int64_t> Lookup(std::string_view key) const;
  /// Same, for rows < `watermark` (a Snapshot's num_rows), for reads at a snapshot.
  std::optional<int64_t> Lookup(std::string_view key, int64_t watermark) const;
  /// Newest row position < `limit` whose encoded key is `key`, visible or not (the writer's
  /// view, for marking the row a new version supersedes: shard/liveness.h), or nullopt.
  std::optional<int64_t> LookupBefore(std::string_view key, int64_t limit) const;
  /// Ascending positions < `watermark` superseded by a newer row < `watermark` with the same
  /// key (what a flush writes to deletions.bin). Empty without key columns.
  std::vector<int64_t> SupersededRows(int64_t watermark) const;
  /// Encoded keys of rows [begin, end) (clamped to num_rows()); empty without key columns.
  std::vector<std::string> RowKeys(int64_t begin, int64_t end) const;
  /// Whether row `position` is a tombstone (false without a tombstone column / out of range).
  bool IsTombstone(int64_t position) const;
  /// (batch index, row inside the batch) of row `position`, or (-1, -1) when out of range.
  std::pair<int64_t, int64_t> Locate(int64_t position) const;

  /// IndexStore::describe() of this MemTable.
  std::vector<IndexDescription> DescribeIndexes() const;
  /// Adds maintained index `spec` (replacing one of the same name). Rows already inserted are
  /// not indexed until Backfill(entry) runs (the entry is complete at once when the MemTable
  /// is empty). Errors: as index::ColumnIndex::Make (nothing changes).
  Result<std::shared_ptr<MemIndexEntry>> AddIndex(const index::IndexSpec& spec);
  /// Indexes rows [0, entry->created_at_row) into `entry` and marks it complete (failed on
  /// error). Safe to run concurrently with Inserts and reads; a dropped entry is skipped.
  Status Backfill(const std::shared_ptr<MemIndexEntry>& entry);
  /// Removes maintained index `name` (no-op when absent).
  void DropIndex(const std::string& name);
  /// The complete, not failed, maintained indexes (each covers every visible row).
  std::vector<std::shared_ptr<const index::ColumnIndex>> CompleteIndexes() const;
  /// Every maintained index entry (complete or not).
  std::vector<std::shared_ptr<MemIndexEntry>> IndexEntries() const;

  /// Rows inserted (visible or not).
  int64_t num_rows() const { return num_rows_.load(std::memory_order_acquire); }
  /// Visible rows (the watermark).
  int64_t visible_rows() const { return watermark_.load(std::memory_order_acquire); }
  /// Approximate bytes of the column buffers held (shared buffers counted once per
  /// reference).
  int64_t num_bytes() const { return num_bytes_.load(std::memory_order_acquire); }
  /// Approximate bytes of the indexes: primary key (keys, chains, hash table) plus the
  /// maintained indexes' allocated memory (an HNSW is charged at allocation).
  int64_t index_bytes() const {
    return index_bytes_.load(std::memory_order_acquire) +
           entries_bytes_.load(std::memory_order_acquire);
  }
  /// num_bytes() + index_bytes(): what counts against max_memtable_bytes/max_unflushed_bytes.
  int64_t total_bytes() const { return num_bytes() + index_bytes(); }
  int64_t num_batches() const;
  /// Newest durable WAL position whose rows are visible (0 = none).
  uint64_t last_wal_position() const;
  /// Time since the first row was inserted (zero while empty): the age seal trigger.
  std::chrono::steady_clock::duration age() const;

 private:
  MemTable(arrow::SchemaPtr schema, MemTableOptions options,
           std::optional<format::KeyEncoder> encoder);

  const arrow::SchemaPtr schema_;
  const MemTableOptions options_;
  const std::optional<format::KeyEncoder> encoder_;  // set when options_.key_columns is

  mutable std::shared_mutex mu_;
  std::vector<arrow::RecordBatchPtr> batches_;  // guarded by mu_
  std::vector<int64_t> batch_starts_;           // guarded by mu_: first row position per batch
  /// The same two lists as append-only logs, for View() (appended / truncated under mu_).
  std::shared_ptr<AppendLog<arrow::RecordBatchPtr>> log_batches_ =
      std::make_shared<AppendLog<arrow::RecordBatchPtr>>();
  std::shared_ptr<AppendLog<int64_t>> log_starts_ = std::make_shared<AppendLog<int64_t>>();
  IndexStore indexes_;                                                 // guarded by mu_
  uint64_t last_wal_position_ = 0;                                     // guarded by mu_
  bool frozen_ = false;                                                // guarded by mu_
  std::optional<std::chrono::steady_clock::time_point> first_insert_;  // guarded by mu_
  /// One Insert's rows on their way to visibility.
  struct PendingRange {
    int64_t end = 0;
    bool durable = false;
    bool indexed = false;
    bool released = true;  // false for a held Insert until Release
    uint64_t wal_position = 0;
  };
  std::deque<PendingRange> pending_;  // guarded by mu_: ascending `end`
  /// Moves the watermark over the leading durable, indexed and released ranges. Holds mu_
  /// exclusively.
  void AdvanceLocked();
  void RefreshEntriesBytes() const;
  std::atomic<int64_t> watermark_{0};  // written under mu_ (exclusive), read lock-free
  std::atomic<int64_t> num_rows_{0};
  std::atomic<int64_t> num_bytes_{0};
  std::atomic<int64_t> index_bytes_{0};            // primary-key index
  mutable std::atomic<int64_t> entries_bytes_{0};  // maintained indexes (refreshed after use)
};

/// Sum of the buffer sizes of `data` and its children, bytes.
int64_t ArrayDataBytes(const arrow::ArrayData& data);

}  // namespace strata::memtable
