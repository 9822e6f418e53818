// ShardWriter: the write path of one shard (DESIGN.md §4) and the seal/flush contract.
//
// Tiers: one ACTIVE MemTable taking writes, a queue of FROZEN MemTables (oldest first) waiting
// for flush, and the SSTables (L0) listed by the shard manifest. Every MemTable has a
// generation (per shard, from 1, strictly increasing); the SSTable of generation g is the flush
// of the MemTable of generation g.
//
// State machine of a MemTable:
//   ACTIVE --seal (size/rows/age trigger, force_seal_active, replay boundary)--> FROZEN
//   FROZEN --all its WAL appends settled, and every older generation PUBLISHED--> FLUSHING
//   FLUSHING --SSTable written + manifest committed (sstables += g, current_generation = g+1,
//             replay_after_wal_entry_position = last WAL position of g)--> PUBLISHED
//   FLUSHING --attempt fails--> FLUSHING again after 100 ms, 200 ms, 400 ms (flush_retries = 3)
//             --still failing--> the writer is POISONED (g stays frozen and readable).
// The writer: OPEN --WAL fenced / manifest shows a newer epoch--> FENCED;
//             OPEN --WAL entry failed / flush failed for good--> POISONED;
//             any --close()--> CLOSED. FENCED and POISONED are sticky: every later put and
//             every waiter fails (Fenced / WriterPoisoned); reads keep working; reopening the
//             shard (a new ShardWriter) recovers from the WAL. The table does that by itself
//             for a poisoned writer once the store takes writes again (table/writer_recovery.h).
//
// Ordering invariants (all enforced under `mu_`):
//  - A put appends its rows to the active MemTable and enqueues its WAL append in one critical
//    section, so WAL queue order = MemTable row order, and no put straddles a seal: WAL
//    positions are monotonic in generation, and a WAL entry never spans two generations.
//  - One flusher thread publishes generations strictly in order (g+1 never before g).
//  - force_seal_active() returns the generation IT froze; wait_for_generation(g) waits for the
//    manifest's current_generation > g, which by the previous rule means g and everything older
//    is in L0. It never waits for MemTables frozen later, so it is bounded under any write load
//    (by the flush time of the frozen queue ahead of it).
//
// Indexes: every MemTable maintains the index definitions (ShardWriterOptions::indexes,
// SetIndexes); a put indexes its rows after its critical section (concurrently with other
// puts and the WAL fsync) and its rows become visible once durable and indexed; the flusher
// waits for both, and writes each definition's index into the SSTable (the MemTable's own
// when complete, else one built from the rows). An `indexer` thread backfills definitions
// added while rows exist (MemTables) and builds them for published SSTables. MemTables replayed
// from the WAL at open get their indexes the same way (rows visible at once, indexes backfilled).
//
// Liveness (shard/liveness.h, docs/READ_VIEW.md): every put marks, under `mu_` and before its
// rows become visible, the older version each row supersedes (same MemTable, frozen MemTables,
// SSTables: bloom filter then key index) and each tombstone row itself; a flush writes what its
// generation superseded in older ones to supersedes.bin; open restores the marks from
// deletion vectors, tombstones and supersedes.bin. Snapshot() is then O(sources).
//
// Locks: `mu_` guards every tier pointer and list, the manifest copy, the sticky error, the
// index definitions, the indexer's task queue and the counters below it; `cv_` (with mu_) is
// signalled on every state change (publish, seal, append settled, poison, close). The WAL writer
// and MemTables are internally locked; mu_ may be held while calling into them (never the reverse).
// The flusher holds no lock while it writes files. Thread-safety: every public method may be called
// from many threads at once.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"
#include "index/index_spec.h"
#include "io/free_space.h"
#include "io/object_store.h"
#include "shard/base_source.h"
#include "shard/source_view.h"
#include "sstable/sstable_reader.h"
#include "wal/wal_entry.h"

namespace strata::shard {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

/// Configuration of one shard writer; defaults are the issue's.
struct ShardWriterOptions {
  /// Puts return once their WAL entry is durable (false: once the MemTable holds the rows).
  bool durable_write = true;
  int64_t max_memtable_bytes = 128ll << 20;           // seal trigger, bytes
  int64_t max_memtable_rows = 100000;                 // seal trigger, rows
  std::chrono::milliseconds max_memtable_age{60000};  // seal trigger for a non-empty MemTable
  /// Backpressure: puts wait while active + frozen MemTable bytes reach this.
  int64_t max_unflushed_bytes = 1ll << 30;
  /// Backpressure: puts wait while this many MemTables are frozen (0 = no limit).
  int64_t max_frozen_memtables = 0;
  /// A put waiting for backpressure longer than this fails with Backpressure.
  std::chrono::milliseconds write_stall_timeout{10000};
  int64_t max_wal_entry_bytes = 8ll << 20;             // group-commit entry size cap
  bool group_commit = true;                            // false: one WAL entry per put (benchmarks)
  int flush_retries = 3;                               // retries after the first failed attempt
  std::chrono::milliseconds flush_retry_backoff{100};  // doubled after each retry
  /// Primary-key column names, in key order; empty = the hidden `_rowid` key.
  std::vector<std::string> primary_key;
  /// Test hook: no flusher thread (frozen MemTables stay frozen; nothing is published).
  bool start_flusher = true;
  /// Maintained index definitions (DESIGN.md §5); SetIndexes changes them later.
  std::vector<index::IndexSpec> indexes;
  /// Names of the definitions the MemTables keep in their IndexStore (an LSM write spec's
  /// maintained_indexes); nullopt: every definition. The others are still written into every
  /// SSTable (built from the rows at flush) and into the base; queries scan MemTables that lack
  /// them. Names without a definition are ignored. SetMemTableIndexes changes it later.
  std::optional<std::vector<std::string>> memtable_indexes;
  /// Called (from the flusher thread, no lock held) after each flush publishes an SSTable: the
  /// table wakes its compactor. Must not call back into this writer's write path.
  std::function<void()> on_publish;
  /// The table's base (src/base/ opens it from the table manifest): the oldest source of every
  /// view, marked at write time like the other tiers. Null: no base.
  std::shared_ptr<BaseSource> base;
  /// The lane (shard/liveness.h "Lanes") this writer marks base rows in: its shard's index in
  /// a table whose shards share one base (0 for a one-shard table).
  int base_lane = 0;
  /// Whether this writer's views (Snapshot) include the base. False for the shards of a table
  /// that share one base: the table's view reads it once, with every shard's visibility.
  bool base_in_view = true;
  /// The table manifest's compacted_generation for this shard: published SSTables of this
  /// generation or older are in the base and are not opened.
  uint64_t compacted_generation = 0;
  /// Whether the WAL entry at `position` of this shard, a part of multi-shard write `txn_id`
  /// (wal_entry.h TxnTag), counts: the table's transaction log decides (table/txn_log.h;
  /// deciding an undecided write as aborted). Replay inserts the entry when true and skips it
  /// when false. Unset: replay refuses such an entry (Corruption), as this writer cannot tell.
  std::function<Result<bool>(const std::string& txn_id, uint64_t position)> txn_committed;
  /// The store's free-space floor (io/free_space.h; null = none): Put, Delete and Apply fail
  /// with InsufficientStorage while free space is below it (nothing written). Flushes, the
  /// WAL's fence sentinel and compaction are never refused: they are what frees space.
  std::shared_ptr<io::FreeSpaceFloor> free_space;
};

/// What a compaction publishes into a shard's read view (InstallCompaction).
struct CompactionInstall {
  /// SSTables of this shard with generation <= this are now in the base.
  uint64_t compacted_generation = 0;
  /// The new base fragment (null when no row survived): appended to the base.
  std::shared_ptr<const sstable::SSTableReader> fragment;
  /// For each row of `fragment`, in order: the (generation, position) of the SSTable row it
  /// was copied from (its liveness mark carries over).
  std::vector<std::pair<uint64_t, int64_t>> origins;
  /// -1 (a base of this shard alone): the install appends `fragment`, and `origins` are its
  /// rows. >= 0 (a base shared by several shards, docs/SHARDING.md): the table's install
  /// already appended the fragment holding every shard's rows (`fragment` is ignored), and
  /// `origins` are this shard's rows, base rows [first_row, first_row + origins.size()).
  int64_t first_row = -1;
};

/// What a base rewrite publishes into a shard's read view (InstallRewrite).
struct RewriteInstall {
  /// The base epoch (BaseSource::epoch) the rewrite copied from: the install fails when
  /// another rewrite was installed since.
  uint64_t base_epoch = 0;
  /// The new fragments, in base order (their rows are the new base positions 0..n-1).
  std::vector<std::shared_ptr<const sstable::SSTableReader>> fragments;
  /// For each new row, in order: its position in the old base (its liveness mark carries
  /// over, including marks made while the rewrite ran).
  std::vector<int64_t> origins;
  /// The base indexes over the new rows (replace every installed base index).
  std::vector<std::shared_ptr<index::ColumnIndex>> indexes;
};

/// What a Put or Delete did.
struct PutResult {
  uint64_t wal_position = 0;  // entry holding the rows (0 for 0 rows: nothing written)
  uint64_t generation = 0;    // generation of the MemTable the rows went into
  int64_t num_rows = 0;
};

/// One shard's part of a multi-shard write, prepared (ShardWriter::Prepare) and not yet
/// published or aborted. Opaque beyond `put`.
struct PreparedState;
struct PreparedWrite {
  PutResult put;  // wal_position: the durable entry holding the part (0 for 0 rows)
  std::shared_ptr<PreparedState> state;
};

/// What force_seal_active() froze: rows are exactly those put before the call.
struct SealedGeneration {
  std::string shard_id;
  uint64_t generation = 0;
  uint64_t last_wal_position = 0;  // newest WAL entry holding rows of this generation
  int64_t rows = 0;
};

/// One MemTable in Describe().
struct MemTableInfo {
  uint64_t generation = 0;
  int64_t rows = 0;
  int64_t bytes = 0;
  int64_t age_ms = 0;
};

/// One published SSTable in Describe().
struct SSTableInfo {
  uint64_t generation = 0;
  std::string path;  // store key of the SSTable directory
  int64_t rows = 0;
  int64_t bytes = 0;
};

/// One maintained MemTable index in Describe() (IndexStore::describe of the active MemTable).
struct IndexInfo {
  std::string kind;
  std::string column;
  std::string name;
  int64_t rows_indexed = 0;
};

/// The writer options in force (ShardWriterOptions fields; Retune changes them).
struct WriterSettings {
  bool durable_write = true;
  int64_t max_memtable_rows = 0;
  int64_t max_memtable_bytes = 0;
  int64_t max_memtable_age_ms = 0;
  int64_t max_unflushed_bytes = 0;
  int64_t max_frozen_memtables = 0;
  int64_t write_stall_timeout_ms = 0;
};

/// The state of a shard for `mem_wal/describe/` (PROTOCOL.md §0).
struct ShardDescription {
  std::string shard_id;
  uint64_t writer_epoch = 0;
  uint64_t current_generation = 0;
  uint64_t replay_after_wal_entry_position = 0;
  uint64_t wal_entry_position_last_seen = 0;
  MemTableInfo active;
  std::vector<MemTableInfo> frozen;   // oldest first
  std::vector<SSTableInfo> sstables;  // ascending generation
  std::vector<IndexInfo> indexes;
  WriterSettings settings;
  std::string state;         // "open", "fenced", "poisoned", "closed"
  std::string state_reason;  // the sticky error's message ("" when open)
  int64_t state_age_ms = 0;  // milliseconds since the writer opened or entered `state`
};

/// Counters for metrics and tests.
struct ShardWriterStats {
  uint64_t puts = 0, rows = 0, seals = 0, flushes = 0, flush_failures = 0;
  uint64_t backpressure_waits = 0, backpressure_timeouts = 0;
  uint64_t space_refusals = 0;  // writes refused below the free-space floor
  uint64_t wal_entries = 0, wal_appends = 0, wal_fsyncs = 0;
  double flush_seconds_total = 0;
  /// WAL entries by appends grouped into them (wal::WalWriterStats::group_size_histogram):
  /// [0] 1, [1] 2-3, [2] 4-7, ..., [6] 64-127, [7] >= 128; fence sentinels not counted.
  std::array<uint64_t, 8> wal_group_size_histogram{};
  /// Upper bounds (seconds) of the flush-duration buckets.
  static constexpr std::array<double, 12> kFlushSecondsBounds{0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                              1,    2.5,   5,    10,  30,   60};
  /// Successful flushes by duration (per bucket, not cumulative): [i] <= kFlushSecondsBounds[i]
  /// (and above the previous bound); the last entry counts flushes above 60 s. Sums to
  /// `flushes`; their durations sum to flush_seconds_total.
  std::array<uint64_t, kFlushSecondsBounds.size() + 1> flush_seconds_histogram{};
};

/// A consistent read view across tiers (DESIGN.md §6): the sources of the shard, oldest
/// first (SSTables by generation, then frozen MemTables, then the active one), each with its
/// rows below the view's watermark, its liveness as this view sees it (shard/liveness.h: the
/// newest version per key, tombstones and older duplicates dead) and its complete indexes.
/// Building one costs O(sources + MemTable batches) and copies no row data; rows are read
/// from the sources through liveness (LiveBatches materialises them when a caller truly needs
/// every live row).
struct ShardSnapshot {
  arrow::SchemaPtr schema;          // the user schema (no hidden columns)
  arrow::SchemaPtr storage_schema;  // schema of the sources' batches
  int rowid_column = -1;            // storage index of `_rowid` (no primary key), else -1
  int64_t num_rows = 0;             // live rows (sum of the sources' live_rows)
  /// Newest WAL position whose rows are visible (0 = none); grows with every write.
  uint64_t last_wal_position = 0;
  /// Newest generation compacted into the base when the view was built (views order by it
  /// first: a compaction removes SSTable rows from the view).
  uint64_t compacted_generation = 0;
  /// Base rewrites installed when the view was built (BaseSource::epoch; views order by it
  /// before compacted_generation: a rewrite removes dead base rows from the view).
  uint64_t base_epoch = 0;
  std::vector<SourceView> sources;
  /// What the view sees (shared by every source's SourceView::visibility).
  std::shared_ptr<const Visibility> visibility;
  /// The table's index definitions at the snapshot.
  std::vector<index::IndexSpec> index_specs;
};

/// The live rows of `snapshot`, source by source in scan order, under the storage schema
/// (`storage` true: hidden columns included) or the user schema. O(rows): for callers that
/// need every live row (a column rewrite, tests), never for a query.
/// Errors: Invalid from the filter kernel (a string column past 2 GiB).
Result<std::vector<arrow::RecordBatchPtr>> LiveBatches(const ShardSnapshot& snapshot,
                                                       bool storage = false);

/// `whole` with only the sources `keep` accepts (every other field the same; num_rows the kept
/// sources' live rows): a table's view narrowed to some of its shards (SourceView::shard).
/// O(sources), no row copy.
std::shared_ptr<ShardSnapshot> NarrowedView(const ShardSnapshot& whole,
                                            const std::function<bool(const SourceView&)>& keep);

/// A view of one source "batches" (generation 0) holding `batches` of `schema` (user columns
/// only, no hidden ones), every row live: for benchmarks and tests that query plain batches.
std::shared_ptr<const ShardSnapshot> ViewOfBatches(arrow::SchemaPtr schema,
                                                   std::vector<arrow::RecordBatchPtr> batches);

/// Index progress of one definition across the sources of a shard (index/{n}/stats/).
struct IndexProgress {
  index::IndexSpec spec;
  int64_t num_indexed_rows = 0;    // live rows of sources whose index is complete
  int64_t num_unindexed_rows = 0;  // live rows of sources without it (yet)
  int64_t size_bytes = 0;          // memory of the complete indexes
};

/// "{table_prefix}/_mem_wal/{shard_id}".
std::string ShardPrefix(const std::string& table_prefix, const std::string& shard_id);

class ShardWriter {
 public:
  /// Opens shard `shard_id` of the table at `table_prefix` (e.g. "default/t") with the user
  /// `schema`: claims the shard (manifest writer_epoch + 1), replays WAL entries after
  /// replay_after_wal_entry_position into MemTables split at the recorded generations (all
  /// but the newest frozen and queued for flush), writes a fence sentinel at the WAL tip and
  /// starts the flusher thread.
  /// Errors: Invalid (bad shard id, schema, unknown primary-key column); Corruption (corrupt
  /// WAL entry followed by others, schema mismatch); Fenced (a newer writer claimed during
  /// open); IOError.
  static Result<std::unique_ptr<ShardWriter>> Open(std::shared_ptr<io::ObjectStore> store,
                                                   std::string table_prefix, std::string shard_id,
                                                   arrow::SchemaPtr schema,
                                                   ShardWriterOptions options = {});
  /// close()s.
  ~ShardWriter();
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  /// Validates `batches` against the user schema (ConformBatches), waits for backpressure
  /// (up to write_stall_timeout), appends them to the active MemTable (invisible until
  /// durable) and the WAL; returns when durable (or, non-durable mode, at once). May seal the
  /// active MemTable first (size/rows/age triggers). A put of zero rows writes nothing.
  /// Errors: Invalid (nothing written); Backpressure (nothing written); Fenced;
  /// WriterPoisoned; IOError from the WAL (the writer is then poisoned).
  Result<PutResult> Put(const std::vector<arrow::RecordBatchPtr>& batches);

  /// Writes tombstones for the keys of `keys`: batches holding the key columns by name (the
  /// primary-key columns, or `_rowid` uint64 for tables without a primary key; other columns
  /// are ignored). Durable like Put. Errors: Invalid (missing or mistyped key column, nulls),
  /// then as Put.
  Result<PutResult> Delete(const std::vector<arrow::RecordBatchPtr>& keys);

  /// Writes, in ONE WAL entry (one MemTable insert, so all or nothing and durable like Put):
  /// first `storage_rows`, rows under storage_schema() that keep the key they carry
  /// (replacement versions with `_tombstone` false/null, tombstones with `_tombstone` true),
  /// then `user_rows`, new rows under schema() (tables without a primary key give them fresh
  /// `_rowid` keys, as Put). Within the entry a later row wins over an earlier one of the same
  /// key (higher MemTable position; a flush marks the older one deleted), so a user row
  /// replaces a storage row of its key. Storage rows must hold non-null keys and, for tables
  /// without a primary key, a `_rowid` this shard has assigned. Validation (ConformBatches
  /// with each schema, keys) happens before anything is written: on any error nothing is.
  /// Used by read-modify-writes (update/, delete/, merge_insert/). 0 rows writes nothing.
  /// Errors: Invalid prefixed "storage rows: " or "new rows: " naming the column; then as Put.
  Result<PutResult> Apply(const std::vector<arrow::RecordBatchPtr>& storage_rows,
                          const std::vector<arrow::RecordBatchPtr>& user_rows);

  /// Multi-shard writes (docs/SHARDING.md "All-or-nothing multi-shard writes"): this shard's
  /// part of write `txn` (txn.shards >= 2), as Apply validates and writes it, but the WAL entry
  /// carries `txn` and holds only this part, the call returns once it is durable (whatever
  /// durable_write says) and the rows stay invisible: readers do not see them, the puts after
  /// them in this MemTable are acknowledged only once they are visible, and the generation
  /// neither settles nor flushes. Then exactly one of:
  ///  - Publish: the write committed (its record is in the transaction log): the rows
  ///    become visible.
  ///  - Abort: it did not: the writer is poisoned with `why` (the rows are in its MemTable and
  ///    marked; only a reopen, whose replay skips the entry, removes them), so the table
  ///    reopens the shard (table/writer_recovery.h).
  /// While a part is held its MemTable is not sealed: size, row and age triggers wait, and
  /// force_seal_active stops new parts and waits for the held ones first. Puts after a part
  /// go into the same MemTable and are acknowledged once visible (after the publish), or, if
  /// the part is aborted, once durable (visible after the reopen).
  /// Errors: Invalid (as Apply, or a bad txn; nothing written); then as Put.
  Result<PreparedWrite> Prepare(const wal::TxnTag& txn,
                                const std::vector<arrow::RecordBatchPtr>& storage_rows,
                                const std::vector<arrow::RecordBatchPtr>& user_rows);
  /// Apply's validation alone (nothing written): a multi-shard write checks every part
  /// before it prepares any. Errors: as Apply's Invalid.
  Status CheckApply(const std::vector<arrow::RecordBatchPtr>& storage_rows,
                    const std::vector<arrow::RecordBatchPtr>& user_rows) const;
  /// Waits until every row ahead of the prepared part in its MemTable is visible, so Publish
  /// shows the part at once (a caller publishing several parts under one lock then shows all
  /// of them or none). Rows ahead may be another write's held part: callers that wait here run
  /// one multi-shard write at a time. Errors: the writer's sticky error; Backpressure at
  /// `deadline`; Invalid when closed.
  Status AwaitPublishable(const PreparedWrite& write, Deadline deadline);
  /// Makes a prepared part visible. Idempotent; no-op for 0 rows or after Abort.
  void Publish(const PreparedWrite& write);
  /// Aborts a prepared part: poisons the writer (WriterPoisoned naming `why`). No-op after
  /// Publish.
  void Abort(const PreparedWrite& write, const Status& why);
  /// The tombstone rows Delete writes for `keys` (storage schema), for a multi-shard delete's
  /// Prepare. Errors: as Delete's validation.
  Result<std::vector<arrow::RecordBatchPtr>> TombstoneRows(
      const std::vector<arrow::RecordBatchPtr>& keys) const;

  /// Freezes the active MemTable and returns the generation it froze, once every put that
  /// reached it has settled in the WAL; nullopt (nothing frozen) when it holds no rows.
  /// Errors: Fenced; WriterPoisoned; Invalid after close().
  Result<std::optional<SealedGeneration>> force_seal_active();

  /// The newest generation frozen and not yet published, if any (flush/ rule 8 when the seal
  /// was empty).
  std::optional<uint64_t> newest_unpublished_generation() const;

  /// Returns OK once the manifest's current_generation > g (g and all older generations are in
  /// L0). Errors: Timeout at `deadline` (naming g and current_generation); WriterPoisoned /
  /// Fenced when the writer fails before g is published; Invalid after close().
  Status wait_for_generation(uint64_t generation, Deadline deadline);

  /// Replaces the maintained index definitions (matched by name and uuid): removed ones are
  /// dropped from every MemTable; new ones are added to every MemTable (rows already held are
  /// indexed by the background indexer thread) and built for every published SSTable in the
  /// background (files under indices/, sstable/index_files.h). Later flushes write every
  /// definition. Errors: Invalid / NotSupported from index::ValidateIndexSpec (nothing
  /// changes).
  Status SetIndexes(std::vector<index::IndexSpec> specs);
  /// Per definition: rows of sources whose index is complete vs not (index/{n}/stats/).
  std::vector<IndexProgress> IndexProgressAll() const;
  /// Replaces ShardWriterOptions::memtable_indexes: definitions no longer kept are dropped
  /// from every MemTable (flush builds them from the rows); newly kept ones are added to every
  /// MemTable and backfilled in the background. Errors: Invalid after close().
  Status SetMemTableIndexes(std::optional<std::vector<std::string>> names);
  /// Applies the tunable fields of `options` (durable_write, the seal triggers
  /// max_memtable_rows / _bytes / _age, max_unflushed_bytes, max_frozen_memtables,
  /// write_stall_timeout) from the next put on; the active MemTable seals at once when it is
  /// already past a lowered trigger. Change durable_write only with no put in flight (a
  /// switch back to durable first waits for the syncer to settle the non-durable appends).
  /// Errors: Invalid for a row / byte limit below 1 or after close() (nothing changes).
  Status Retune(const ShardWriterOptions& options);
  /// The tunable options in force (see Retune).
  WriterSettings settings() const;

  /// Returns OK once no MemTable is frozen. Under sustained writes it may never return.
  /// Errors: Timeout; WriterPoisoned; Fenced.
  Status wait_for_flush_drain(Deadline deadline);

  /// Stops the flusher (after it finishes the attempt in progress) and fails later writes
  /// with Invalid. Frozen and active MemTables are not flushed (the WAL holds them).
  /// Idempotent.
  void close();

  /// The read view across tiers (see ShardSnapshot): O(sources + MemTable batches), no row
  /// copy. Cached until the next visible change. Errors: none today (Result for the future).
  Result<std::shared_ptr<const ShardSnapshot>> Snapshot() const;
  /// Newest WAL position of the rows this writer holds (0 = none): durable, but it may count a
  /// prepared multi-shard part not yet published (Snapshot()'s last_wal_position counts only
  /// visible rows).
  uint64_t last_wal_position() const;
  /// When a put, delete or apply with rows last reached this writer (accepted or not), or
  /// when it opened. Idle compaction (base::BaseTable::IdleCompactionDue) reads it.
  Clock::time_point last_write() const;

  ShardDescription Describe() const;
  /// What waits for compaction: published uncompacted SSTables and frozen MemTables, the
  /// latter including an active MemTable already due for sealing (full: the flusher seals it
  /// without another put). Counts read under the writer's lock; O(SSTables). The write
  /// throttle's input.
  struct Backlog {
    int64_t sstables = 0;       // published SSTables above the compacted generation
    int64_t frozen = 0;         // frozen MemTables (+1 when the active one is due to seal)
    int64_t active_rows = 0;    // rows in the active MemTable
    int64_t memtable_rows = 0;  // rows at which the active MemTable seals, by the row and byte
                                // limits at its present bytes per row (age not counted)
  };
  Backlog backlog() const;
  ShardWriterStats stats() const;
  /// OK, or the sticky Fenced / WriterPoisoned error.
  Status health() const;

  const arrow::SchemaPtr& schema() const;
  /// Schema stored in MemTables, WAL and SSTables: user columns, then `_rowid` (no primary
  /// key), then `_tombstone`.
  const arrow::SchemaPtr& storage_schema() const;
  const std::vector<std::string>& key_columns() const;
  const std::string& shard_id() const;
  const std::string& shard_prefix() const;
  uint64_t writer_epoch() const;

  // --- compaction (shard_base.cc) ---
  /// The base passed at open (may be null).
  std::shared_ptr<BaseSource> base() const;
  /// Newest generation compacted into the base.
  uint64_t compacted_generation() const;
  /// Fails Fenced when the shard's newest manifest names another writer epoch (a compaction
  /// checks this before committing the table manifest). Errors: Fenced; IOError.
  Status CheckOwner() const;
  /// Publishes a committed compaction in memory, atomically for readers (under mu): appends
  /// the fragment to the base, carries the liveness marks of the copied rows over (rows
  /// superseded while the compaction ran stay superseded), and drops the compacted SSTables
  /// from the view. Errors: Invalid when `install` names a generation not published here or
  /// already compacted, or origins do not match the fragment (nothing changes).
  Status InstallCompaction(const CompactionInstall& install);
  /// The checks of InstallCompaction without installing (a shared base checks every shard's
  /// part before it appends the fragment they share). `first_row` >= 0 parts are checked
  /// against the base's rows once the shared fragment of `appended_rows` rows is appended.
  Status CheckCompactionInstall(const CompactionInstall& install, int64_t appended_rows = 0) const;
  /// Publishes a committed base rewrite in memory, atomically for readers (under mu): the base
  /// becomes the rewrite's fragments and indexes (BaseSource::Replace), and each copied row
  /// takes the mark its old position holds NOW (marks made while the rewrite ran included, so
  /// a row deleted or upserted meanwhile stays dead). Views built before keep the old base.
  /// Errors: Invalid when the base epoch moved or origins do not match the rows (nothing
  /// changes).
  Status InstallRewrite(const RewriteInstall& install);
  /// The newest shard manifest this writer committed (garbage collection reads it).
  format::ShardManifest committed_manifest() const;
  /// Makes the next Snapshot() rebuild the view (the base's indexes became ready).
  void InvalidateViews();
  /// Commits a shard manifest without the SSTables compacted into the base (so garbage
  /// collection may remove their directories). Errors: Fenced; IOError.
  Status CommitCompactedSSTables();

  /// Removes every file of shard `shard_id` (after an overwrite commits, or on drop).
  static Status RemoveShardFiles(io::ObjectStore& store, const std::string& table_prefix,
                                 const std::string& shard_id);

  /// Private implementation state (shard_writer_impl.h).
  struct Impl;

 private:
  explicit ShardWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::shard
