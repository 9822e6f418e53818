// The base table of one table (DESIGN.md §1 "generation 0", §3, §7): the compacted, indexed
// bulk of its rows, and the compaction that moves published SSTables into it.
//
// On disk (relative to the table prefix), all referenced from the table manifest's `base`
// (format/proto/table_manifest.proto BaseTable), which a compaction commits in ONE
// put-if-absent manifest version together with compacted_generation[shard]:
//   data/{random8}_gen_{g}/       one fragment per compaction: an SSTable-format directory
//                                 (data.arrow Arrow IPC file, uncompressed; pk_index.bin;
//                                 bloom_filter.bin), rows in base order;
//   _deletions/{fragment}-{n}.bin deletion vector of a fragment after compaction n (rows later
//                                 superseded or deleted by compacted rows);
//   _indices/{uuid}/{random16}.idx  checkpoint of a base-wide index (index/column_index.h
//                                 bytes) covering base rows [0, rows).
// In memory it is a shard::BaseSource: fragments' rows appended in order, one liveness, one
// index per definition over all base rows (HNSW labels = base positions).
//
// Compaction (Compact): takes the oldest published SSTables of the shard (ascending
// generation, up to max_rows_per_compaction rows, at least one SSTable; a background one while
// writes run at most WriteThrottle::CompactionUnit SSTables), copies their rows that
// are still live at or below the newest compacted generation G into a new fragment (upsert:
// the newest version of a key wins, tombstones are dropped; a row superseded only by a newer,
// uncompacted generation is copied and keeps its mark), writes deletion vectors for base rows
// superseded by the compacted rows, adds the new rows to a copy of each base index (hnswlib
// addPoint per row; a copy, because hnswlib 0.6.2 searches must not overlap inserts, and
// growing the live graph would make every query wait for the whole compaction: the copy costs
// one memory copy of the index, O(base index bytes)), checkpoints an index when the rows it
// does not cover reach max(min_checkpoint_rows, rows it covers) (amortised O(1) serialised
// bytes per row), swaps the copies in, then hands the new BaseTable to `commit`, which commits
// the table manifest and installs it in the shard's read view (ShardWriter::InstallCompaction)
// atomically for readers. Puts and reads never wait for it: it reads a snapshot and holds no
// shard lock while it builds.
//
// Index builds (base_index_builder.cc): a compaction only GROWS installed indexes (Clone +
// add) and creates the HNSW / BTree / FTS index of a definition in the base's first fragment
// (no training: the same per-row work as any later grow). It never trains: an IVF definition
// without a base index, a definition created on an existing base, rows a loaded checkpoint
// does not cover, and an IVF index due for retraining (NeedsRetrain) are left to the index
// builder, a thread of its own (not the maintenance thread that compacts). It snapshots the
// base, loads a checkpoint or trains (k-means) and indexes rows [0, n) WITHOUT the work lock,
// so compactions keep running and appending rows meanwhile; it catches up on those rows off
// the lock too, then takes work_mu_ briefly to index the last few rows, commit a checkpoint
// if due and install the index (SetIndex). Until then the base answers exactly for that
// definition (a read view uses a base index only when it covers every base row; a retrain
// keeps the old index serving, grown by each compaction, until the new one is swapped in).
// First training before the first compaction (issue 15): while the base is empty and an IVF
// definition has no index, background compaction waits (DeferForFirstTraining) and the builder
// trains that definition on the rows of the published L0 SSTables, which keep answering
// through their own HNSW graphs meanwhile; it installs the trained, empty index, and the
// first compaction then only adds rows to it. Otherwise the first compaction would commit the
// base without an index and every query would scan it exactly for the whole training (33 q/s
// for ~2.5 min at 300k rows, measured). The write throttle is suspended while compaction
// waits (L0 grows for the training's duration instead of stalling writes). If the L0 rows
// cannot train the definition (e.g. IVF_PQ with fewer than 2^nbits vectors) it is marked and
// compaction proceeds as before. compact/ (Compact) waits too, up to its deadline.
// Base rewrite (Rewrite, base_rewrite.cc; docs/COMPACTION.md "Base rewrite"): compaction
// only appends, so superseded and deleted rows stay in the fragments, the indexes and the
// liveness. Once dead rows >= rewrite_min_dead_rows and dead / rows >= rewrite_dead_fraction
// (default: dead >= live and >= 65,536) the maintenance thread copies
// the live rows (rows dead only by an uncompacted generation included: they keep their mark)
// into new fragments with positions 0..n-1, rebuilds every installed base index over them
// (an IVF index reuses its trained model), writes their checkpoints, commits ONE manifest
// whose base lists only those, and installs it under the shard lock (ShardWriter::
// InstallRewrite carries marks made meanwhile). It holds work_mu_ throughout (no compaction,
// GC or index install meanwhile; L0 grows and the write throttle is suspended). GC removes
// the old fragments at its next pass (gc.h rule 2: older manifests of the same table version
// do not protect them).
// Opening: fragments and deletion vectors are read at Open (rows visible at once; the base
// scans exactly until its indexes are ready); index checkpoints are loaded, and rows they do
// not cover indexed, by the index builder (StartMaintenance), so a restart answers its first
// query after reading the data, not after loading an HNSW graph.
//
// Locks (order: stop_mu_ -> work_mu_ -> mu_; work_mu_ -> the table's lock inside CommitFn;
// mu_ is a leaf, never held while taking another lock or doing I/O):
// `work_mu_` serialises everything that changes the installed base indexes or the rows: a
// compaction, a base rewrite (its whole duration), GC, and the index builder's install step
// (index the rows not yet covered, checkpoint, SetIndex), so a compaction never grows (Clone)
// an index the builder replaces between its Clone and its SetIndex. Compact() fails Busy
// while it is held; the maintenance thread waits for it. The builder's training and bulk
// indexing run without it.
// `mu_` guards `state_`, `specs_`, `stats_`, the threads' flags (stop_, wake_, index_work_,
// building_) and the thread handles. `stop_mu_` serialises Stop (held while
// joining both threads; taken before work_mu_ and mu_, never by those threads), so concurrent
// Stop calls never join twice and all return after the joins.
// Thread-safety: every public method may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "arrow/type.h"
#include "base/gc.h"
#include "base/write_throttle.h"
#include "common/status.h"
#include "format/proto/table_manifest.pb.h"
#include "index/index_spec.h"
#include "io/object_store.h"
#include "shard/base_source.h"
#include "shard/shard_writer.h"

namespace strata::base {

/// Compaction limits and triggers (server flags; defaults from the issue).
struct CompactionOptions {
  /// Compact when a shard has at least this many published, uncompacted SSTables (L0)...
  int64_t l0_trigger_count = 4;
  /// ...or when their bytes reach this.
  int64_t l0_trigger_bytes = 512ll << 20;
  /// Write throttling by L0 backlog (base/write_throttle.h; only with `background`): writes
  /// are rate-limited once published uncompacted SSTables + frozen MemTables reach
  /// l0_slowdown_count, and wait (then 503 backpressure at the write stall timeout) at
  /// l0_stop_count. 0 disables either. Raised to at least l0_trigger_count (slowdown) and
  /// l0_trigger_count + 1 (stop), so a backlog that stops writes always triggers compaction.
  int64_t l0_slowdown_count = 4;
  int64_t l0_stop_count = 5;
  /// Rows taken per compaction at most (whole SSTables; at least one SSTable).
  int64_t max_rows_per_compaction = 1000000;
  /// An index is checkpointed once the rows it does not cover reach max(this, rows covered).
  int64_t min_checkpoint_rows = 65536;
  /// Background compaction (false: only compact/ and Compact() run it).
  bool background = true;
  /// Nice value of the maintenance thread (background compaction, base rewrites, GC) and of
  /// the index builder thread (common/thread_priority.h), 0-19: on few cores, the threads
  /// serving puts, flushes and queries get the CPU first. 0 = the server's own priority.
  /// Server flag --background-nice.
  int background_nice = 10;
  /// Background compactions started by a trigger while writes run take at most
  /// WriteThrottle::CompactionUnit SSTables (false: every waiting SSTable, as compact/ does;
  /// benchmarks compare the two).
  bool adaptive_unit = true;
  /// Once a trigger fires, background compaction goes on (unit after unit) until no published
  /// SSTable is left, instead of stopping as soon as L0 is back under the trigger: L0 then
  /// hovers near zero rather than at the trigger, which is also the throttle's slowdown count,
  /// so a sustainable write load is not slowed while a MemTable flushes (docs/COMPACTION.md).
  /// false: compact only while a trigger holds (benchmarks compare the two).
  bool drain_after_trigger = true;
  /// How often the maintenance thread checks the triggers without being woken.
  std::chrono::milliseconds poll_interval{1000};
  /// Idle compaction (only with `background`): once a shard has had no write (put, delete,
  /// apply) for this long, its published uncompacted SSTables are compacted even below the
  /// triggers above, so a quiet table converges to the base plus at most its MemTable (which
  /// max_memtable_age flushes into an SSTable, compacted in turn) and its queries search one
  /// graph. Checked every poll_interval. 0 disables (server flag --compaction-idle-seconds).
  std::chrono::milliseconds idle{30000};
  /// After an open, a vector query waits up to this long for the base's index checkpoints to
  /// load (AwaitCheckpointLoads) instead of scanning the base exactly meanwhile, which reads
  /// every page of the base data (all of it resident) and answers in seconds at 2M rows.
  /// 0 = never wait (server flag --index-load-wait-ms).
  std::chrono::milliseconds index_load_wait{10000};
  /// Garbage collection (base/gc.h) by the maintenance thread: after every compaction and at
  /// least every gc_interval. false: only Table::CollectGarbage runs it.
  bool gc = true;
  std::chrono::seconds gc_interval{60};
  GcOptions gc_options;
  /// Tests: called by the index builder (its own thread) with the definition's name after it
  /// built an index off the work lock and before it takes the lock to catch up and install it
  /// (compactions may run while the hook blocks).
  std::function<void(const std::string& index_name)> index_build_hook;
  /// Tests: called by the index builder each time it asks whether to abandon a build (from
  /// inside an IVF training: between k-means iterations), with the definition's name and the
  /// number of that check (1, 2, ...), before it looks at Stop and the definitions.
  std::function<void(const std::string& index_name, int64_t check)> index_abandon_check_hook;
  /// Base rewrite trigger (maintenance thread, with `background`): dead base rows (superseded
  /// or deleted by compacted generations) >= rewrite_min_dead_rows and dead / rows >=
  /// rewrite_dead_fraction. rewrite_dead_fraction 0 disables the trigger (Rewrite() still
  /// runs). Server flags --rewrite-min-dead-rows, --rewrite-dead-fraction.
  int64_t rewrite_min_dead_rows = 65536;
  double rewrite_dead_fraction = 0.5;
  /// Tests: called by a rewrite (under work_mu_, no shard lock) after its copy, index builds
  /// and checkpoints, before its manifest commit and install, so writes may land on the old
  /// base meanwhile.
  std::function<void()> rewrite_install_hook;
};

/// What one base rewrite did.
struct RewriteResult {
  int64_t rows_before = 0;    // physical base rows before
  int64_t rows_after = 0;     // rows copied (physical rows after)
  int64_t bytes_before = 0;   // base fragment + deletion vector + checkpoint bytes before
  int64_t bytes_after = 0;    // the same after (new fragments + checkpoints)
  int64_t fragments = 0;      // new fragments
  int64_t indexes_built = 0;  // base indexes rebuilt over the new rows
  double seconds = 0;
};

/// What one compaction did.
struct CompactionResult {
  std::vector<uint64_t> compacted_generations;  // SSTable generations moved into the base
  int64_t rows_in = 0;                          // rows of those SSTables (dead ones included)
  int64_t rows_written = 0;                     // rows of the new fragment
  int64_t bytes_written = 0;                    // fragment + deletion vectors + checkpoints
  int64_t sstables_remaining = 0;
  uint64_t base_compactions = 0;  // BaseTable.compactions after it
  double seconds = 0;
};

/// Cumulative figures for metrics.
struct BaseStats {
  uint64_t compactions = 0, compaction_failures = 0;
  uint64_t idle_compactions = 0;  // of `compactions`, those the idle rule started
  uint64_t rows_compacted = 0, bytes_compacted = 0;
  double compaction_seconds_total = 0;
  int64_t rows = 0, live_rows = 0, fragments = 0, bytes = 0;
  int64_t running = 0;  // compactions in progress now (0 or 1)
  uint64_t gc_runs = 0, gc_failures = 0, gc_files_removed = 0, gc_bytes_removed = 0;
  uint64_t index_builds = 0;                    // base indexes built or retrained and installed
  uint64_t index_builds_abandoned = 0;          // builds given up by Stop or a dropped definition
  WriteThrottleStats throttle;                  // writes slowed / stopped by the L0 backlog
  uint64_t rewrites = 0, rewrite_failures = 0;  // base rewrites (Rewrite)
  uint64_t rewrite_rows_reclaimed = 0, rewrite_bytes_reclaimed = 0;
  double rewrite_seconds_total = 0;
};

/// The shard writers whose rows a base holds, by lane (index = the shard's lane,
/// ShardWriterOptions::base_lane). One shard: the base is that shard's own (its writer reads
/// it in its views and appends compacted fragments itself). Several: the base is shared
/// (docs/SHARDING.md "One base for all shards"): every writer was opened with base_lane = its
/// index and base_in_view = false, a compaction merges the SSTables of every shard into ONE
/// fragment, appends it once and installs each shard's part (CompactionInstall::first_row),
/// and compacted_generation is recorded per shard.
using ShardList = std::vector<shard::ShardWriter*>;

/// An index of the base for describe: definition, rows covered.
struct BaseIndexInfo {
  index::IndexSpec spec;
  int64_t rows_indexed = 0;
};

class BaseTable {
 public:
  /// Commits `next` as the table manifest's base (with compacted_generation raised for the
  /// shard) and then calls `install` (ShardWriter::InstallCompaction), both under the table's
  /// lock. Errors: Fenced / AlreadyExists / IOError (nothing installed).
  using CommitFn =
      std::function<Status(const format::BaseTable& next, const std::function<Status()>& install)>;
  /// One garbage collection of the table (the table loads its manifests and calls
  /// CollectGarbage); run by the maintenance thread under the work lock (never alongside a
  /// compaction of this base).
  using GcFn = std::function<Result<GcStats>()>;

  /// Opens the base described by `manifest_base` (fragments and deletion vectors are read now;
  /// indexes by the index builder thread). `storage_schema` / `key_columns` as the shard's
  /// storage layout. Errors: NotFound / Corruption naming the file; IOError.
  static Result<std::shared_ptr<BaseTable>> Open(std::shared_ptr<io::ObjectStore> store,
                                                 std::string table_prefix,
                                                 const format::BaseTable& manifest_base,
                                                 arrow::SchemaPtr storage_schema,
                                                 std::vector<int> key_columns,
                                                 std::vector<index::IndexSpec> specs,
                                                 CompactionOptions options = {});
  ~BaseTable();

  /// The in-memory source handed to the shard writer (ShardWriterOptions::base).
  const std::shared_ptr<shard::BaseSource>& source() const { return source_; }
  format::BaseTable state() const;

  /// Starts the maintenance thread, which (options.background) compacts `shards` when a trigger
  /// fires and collects garbage, and the index builder thread, which loads index checkpoints
  /// and indexes what they miss, builds new definitions and retrains IVF indexes (see the file
  /// comment). `commit` as Compact's. Call once, after the shard writer is open.
  void StartMaintenance(ShardList shards, CommitFn commit, GcFn gc = nullptr);
  /// Replaces the maintenance threads' shard list (an identity-sharded table adds a shard as
  /// a new value arrives: `shards` is the old list plus the new lanes, lane order). The
  /// writers must outlive the base's threads, as StartMaintenance's. Takes mu_.
  void SetShards(ShardList shards);
  /// Marks the base shared even while one shard writes to it (an identity-sharded table:
  /// its writers are opened with base_in_view = false, since shards are added later), so a
  /// compaction appends the fragment once and installs each shard's part by position. Call
  /// before StartMaintenance and any compaction.
  void MarkShared() { shared_.store(true, std::memory_order_release); }
  /// Runs `gc` now under the work lock (no compaction runs meanwhile) and counts it in stats.
  /// Errors: AlreadyExists when a compaction runs; gc's.
  Result<GcStats> RunGc(const GcFn& gc);
  /// Stops and joins the maintenance and index builder threads (a compaction in progress
  /// finishes first; a build is abandoned between batches and an IVF training between
  /// k-means iterations; nothing is installed after Stop). May be
  /// called from several threads at once and more than once; call it without the table's lock
  /// (the thread may be waiting for it in CommitFn). No thread starts after it.
  void Stop();
  /// A clean close: Stop(), then checkpoints every base index whose rows not covered by its
  /// stored checkpoint reach `min_rows`, so that the next open loads it rather than rebuilding
  /// it (queries scan exactly until a rebuilt index is ready: 8-13 s for 59,000 Fashion-MNIST
  /// rows, issue 20's note). Between compaction checkpoints up to half a base is uncovered.
  /// Best effort: a failure is logged and the next open rebuilds. Never for a dropped table
  /// (CommitFn refuses). Call without the table's lock.
  void CloseWithCheckpoints(int64_t min_rows = 4096);
  /// Wakes the maintenance thread (after a flush, or a definition change).
  void Notify();

  /// Runs one compaction of `shards` now (see the file comment; with several shards, the
  /// oldest published SSTables of each shard, merged into one fragment). Returns what it did;
  /// nothing to compact is not an error (empty compacted_generations). `deadline`: no new SSTable
  /// is taken once it passed (a compaction never stops half way). On an empty base with an IVF
  /// definition awaiting its first training (background maintenance on), it first waits, up to
  /// `deadline`, for that training on the L0 rows, as background compaction does, so the base
  /// it commits is indexed from its first row; past the deadline it compacts anyway (the base
  /// is then searched exactly until the builder indexes it).
  /// Errors: Busy-style AlreadyExists "compaction already running"; Fenced; IOError; the
  /// writers' errors (the base and manifest are unchanged).
  Result<CompactionResult> Compact(const ShardList& shards, const CommitFn& commit,
                                   shard::Deadline deadline);
  /// Rewrites the base of `shards` now (see the file comment; each row's mark judged by its
  /// lane's compacted generation): afterwards its physical rows are
  /// its live rows. Waits for the work lock (a compaction, GC or index install finishes
  /// first). `deadline` is checked before the copy and before the index builds (a rewrite past
  /// it fails Timeout, nothing committed). Errors: Fenced; IOError; Timeout; the writers'
  /// errors (the base and manifest are unchanged, files written are removed).
  Result<RewriteResult> Rewrite(const ShardList& shards, const CommitFn& commit,
                                shard::Deadline deadline);
  /// Whether the rewrite trigger fires now (options and stats(); false when disabled).
  bool RewriteDue() const;
  /// The table's write throttle (base/write_throttle.h): writers call Admit with no lock
  /// held; compactions report to it. Never null.
  WriteThrottle& throttle() const { return *throttle_; }
  /// Whether a compaction trigger fires for `shards` now: every shard is open and their
  /// published uncompacted SSTables together reach a trigger (each is a source every query
  /// reads, whichever shard holds it).
  bool CompactionDue(const ShardList& shards) const;
  /// Whether the idle rule fires for `shards` at `now`: options.idle > 0, every shard is
  /// healthy and had no write for options.idle, and one holds a published uncompacted SSTable.
  bool IdleCompactionDue(const ShardList& shards, shard::Clock::time_point now) const;

  /// Replaces the index definitions: dropped ones leave the base at once; new ones are built
  /// over every base row by the index builder.
  void SetIndexes(std::vector<index::IndexSpec> specs);
  std::vector<BaseIndexInfo> Indexes() const;
  BaseStats stats() const;
  /// Blocks until the index builder has no work left: every definition has an installed index
  /// covering every base row and not due for retraining, or its build failed (logged; retried
  /// after the next compaction). Errors: Timeout.
  Status WaitIndexesReady(shard::Deadline deadline);
  /// Blocks until every vector index checkpoint stored at open for a current definition on
  /// `column` (empty: on any column) has been loaded and installed by the index builder (with
  /// the rows it did not cover indexed), or given up on (unreadable, not the form to serve:
  /// then rebuilt, which is not waited for), or Stop was called, or `deadline`. Returns
  /// whether none is pending. Once every load is done it returns at once on one atomic read
  /// (no lock: it runs before every vector query). Scalar and FTS checkpoints are not waited
  /// for. Thread-safe.
  bool AwaitCheckpointLoads(shard::Deadline deadline, const std::string& column = "");

 private:
  BaseTable() = default;
  void MaintenanceLoop();
  /// The index builder thread (base_index_builder.cc): runs BuildIndexes while index_work_.
  void IndexBuilderLoop();
  /// One pass over the definitions: builds / catches up / retrains each one that lacks a
  /// complete index (see the file comment). Takes work_mu_ only to install.
  void BuildIndexes();
  /// Builds the index of `spec` off the work lock and installs it under it. `retrain`: the
  /// installed index is due for retraining (no checkpoint is loaded).
  void BuildIndex(const index::IndexSpec& spec, bool retrain);
  /// Whether compaction of `shard` waits for a first training on L0 rows (see the file
  /// comment): the base has no row, the shard has a published SSTable, and a definition
  /// AwaitsFirstTrainingLocked. Wakes the builder then.
  bool DeferForFirstTraining(const ShardList& shards);
  /// compacted_generation of `state` for each of `shards`, by lane (0: none yet).
  static std::vector<uint64_t> CompactedByLane(const format::BaseTable& state,
                                               const ShardList& shards);
  /// Whether `spec` (its index `installed` or not) is an IVF definition that a first
  /// compaction waits to train on L0 rows: no installed index, background maintenance on, no
  /// failed L0 training. The one statement of that condition (DeferForFirstTraining, the
  /// builder, Compact). Holds mu_.
  bool AwaitsFirstTrainingLocked(const index::IndexSpec& spec, bool installed) const;
  /// The batches of the shard's published SSTables (a first training's sample source).
  std::vector<arrow::RecordBatchPtr> L0Batches() const;
  /// After a change of checkpoint_loads_ (mu_ held): publishes its size and wakes waiters.
  void LoadsChangedLocked();
  /// Whether Stop was called (reads stop_ under mu_).
  bool Stopping() const;
  /// Whether the index builder should give up building `spec`: Stop was called, or the
  /// definition is no longer among specs_ (dropped or replaced). Locks mu_.
  bool AbandonBuild(const index::IndexSpec& spec) const;
  /// A checkpoint of `idx` covering base rows [0, rows) written to the store (not yet named
  /// by any manifest). Empty path: not written (logged).
  format::BaseIndexCheckpoint WriteCheckpoint(const index::ColumnIndex& idx, int64_t rows);
  /// Commits `c` in a table manifest so a restart loads it instead of rebuilding the index;
  /// removes its file when the commit fails. Best effort: failures are logged. Holds work_mu_.
  void CommitCheckpoint(const format::BaseIndexCheckpoint& c);
  /// WriteCheckpoint + CommitCheckpoint (nothing without a commit step). Holds work_mu_.
  void Checkpoint(const index::ColumnIndex& idx, int64_t rows);
  /// Compact's body; the caller holds work_mu_ (Compact: try-lock; the maintenance thread:
  /// waits for it). `max_sstables` > 0 takes at most that many SSTables (the maintenance
  /// thread's unit while writes run, WriteThrottle::CompactionUnit); 0 = no limit.
  Result<CompactionResult> CompactHoldingWorkLock(const ShardList& shards, const CommitFn& commit,
                                                  shard::Deadline deadline,
                                                  int64_t max_sstables = 0);
  Result<RewriteResult> RewriteLocked(const ShardList& shards, const CommitFn& commit,
                                      shard::Deadline deadline);
  Result<CompactionResult> CompactLocked(const ShardList& shards, const CommitFn& commit,
                                         shard::Deadline deadline, int64_t max_sstables);

  std::shared_ptr<io::ObjectStore> store_;
  std::string table_prefix_;
  std::vector<int> key_columns_;
  CompactionOptions options_;
  std::shared_ptr<shard::BaseSource> source_;
  std::unique_ptr<WriteThrottle> throttle_;  // set by Open; internally locked

  std::mutex stop_mu_;  // serialises Stop (see file comment)
  // Serialises compactions, GC and the builder's install step (see the file comment); guards
  // the installed indexes' growth (source_->SetIndex) and state_'s commits.
  std::mutex work_mu_;
  mutable std::mutex mu_;
  std::condition_variable cv_;           // with mu_: Notify, Stop, index work, build done
  format::BaseTable state_;              // guarded by mu_ (changed only under work_mu_ too)
  std::vector<index::IndexSpec> specs_;  // guarded by mu_
  bool index_work_ = true;               // guarded by mu_: the index builder may have work
  bool building_ = false;                // guarded by mu_: the index builder runs a pass
  bool stop_ = false;                    // guarded by mu_
  bool wake_ = false;                    // guarded by mu_: maintenance thread woken
  // guarded by mu_: uuids of IVF definitions whose first training on L0 rows failed (their
  // first compaction no longer waits for it)
  std::set<std::string> l0_training_failed_;
  // guarded by mu_: a due compaction waits for a first training (set by DeferForFirstTraining;
  // the builder trains on L0 rows only then)
  bool first_training_wanted_ = false;
  BaseStats stats_;  // guarded by mu_
  // guarded by mu_: definitions whose vector index checkpoint stored at open the index builder has
  // not finished loading (AwaitCheckpointLoads; set by StartMaintenance, erased as BuildIndex
  // ends for the definition, by SetIndexes for dropped ones, cleared by Stop)
  // uuid -> the definition's column (vector definitions only)
  std::map<std::string, std::string> checkpoint_loads_;
  // checkpoint_loads_.size(), stored under mu_ by LoadsChangedLocked (AwaitCheckpointLoads'
  // lock-free fast path)
  std::atomic<size_t> checkpoint_loads_pending_{0};
  // Guarded by mu_: set by StartMaintenance and SetShards; the threads take a copy (ShardsNow).
  ShardList shards_;
  /// shards_ now (under mu_).
  ShardList ShardsNow() const;
  // MarkShared: the base is shared however many shards write to it.
  std::atomic<bool> shared_{false};
  CommitFn commit_;
  GcFn gc_;
  std::thread thread_;   // guarded by mu_ (joined by Stop under stop_mu_): maintenance
  std::thread builder_;  // guarded by mu_ (joined by Stop under stop_mu_): index builder
};

/// "{table_prefix}/data" (fragments are SSTable-format directories under it).
std::string FragmentsPrefix(const std::string& table_prefix);

}  // namespace strata::base
