// A table stored through an ObjectStore (DESIGN.md §3): versioned base manifests under
// {table}/_versions/ and its shards under {table}/_mem_wal/{shard_id}/: one (unsharded, or a
// bucket spec of 1 bucket), one per bucket of its LSM write spec (docs/SHARDING.md):
// manifest.shard_ids[i] is bucket i and the shard's lane in the one base all shards share,
// or, identity sharding, one per value of the shard column (manifest.shard_values[i]), added
// as values arrive (local_table_shards.cc routes writes and builds the table's view over them).
// Versions: version = manifest.base_version + the sum of the shards' last WAL positions, so
// every insert (at least one WAL entry) makes a higher version and versions survive restarts.
// Overwrite writes the new rows into a fresh shard, then commits a manifest pointing at it
// (base_version above every earlier version), then swaps it in and removes the old shard's files:
// readers see either the old schema and rows or the new ones. Index definitions live in the
// manifest (index_specs_json); CreateIndex / DropIndex commit a new manifest version with the
// changed list and base_version + 1 (so the reported table version, base_version + WAL position,
// grows by one) and hand the list to the shard writer, which indexes MemTables and SSTables
// (ShardWriter::SetIndexes). An overwrite keeps no index definitions (the schema may change). Tags
// live in the manifest too (tags); a tag change commits a new manifest with base_version unchanged
// (not a new table version). Locking: `write_mu_` (shared_mutex) orders row writes against
// read-modify-writes: Insert, Delete and Overwrite take it shared (they run concurrently with each
// other; the ShardWriter orders concurrent puts), ReadModifyWrite and RewriteColumns exclusively,
// from before their snapshot until their write is durable and visible (RewriteColumns: until the
// fresh shard is swapped in), so no write lands between the read and the write.
// `mu_` (shared_mutex) guards manifest_, schema_, shards_ and dropped_; Insert, Delete and
// Snapshot take it shared, Overwrite, Drop, CreateIndex, DropIndex, the tag changes and
// CloseForRename exclusively.
// `publish_mu_` (shared_mutex, a leaf taken under mu_): a multi-shard write publishes its parts
// holding it exclusively and a multi-shard Snapshot reads its shards holding it shared, so a
// view holds all of such a write or none of it.
// Lock order: write_mu_ before mu_ before publish_mu_ (never the reverse); ReadModifyWrite
// calls its function holding only write_mu_.
// Thread-safety: every method may be called from many threads at once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "format/proto/table_manifest.pb.h"
#include "io/object_store.h"
#include "shard/shard_writer.h"
#include "table/multi_shard_group.h"
#include "table/table.h"
#include "table/txn_log.h"
#include "table/writer_recovery.h"

namespace strata::table {

class LocalTable : public Table {
 public:
  /// Opens the table whose newest manifest is `manifest`, replaying its shard's WAL.
  /// Errors: Corruption (bad schema bytes, no shard, WAL corruption); IOError.
  static Result<std::shared_ptr<LocalTable>> Open(std::shared_ptr<io::ObjectStore> store,
                                                  std::string prefix, std::string name,
                                                  format::TableManifest manifest,
                                                  shard::ShardWriterOptions options = {},
                                                  base::CompactionOptions compaction = {});

  /// Creates a new table at `prefix` (which must hold no manifest; leftovers of an earlier
  /// failed create are removed) with `schema` and initial rows `batches`.
  /// Errors: Invalid (schema or batches; nothing is left behind); AlreadyExists when a
  /// concurrent creator committed first; IOError.
  static Result<std::shared_ptr<LocalTable>> Create(
      std::shared_ptr<io::ObjectStore> store, std::string prefix, std::string name,
      arrow::SchemaPtr schema, const std::vector<arrow::RecordBatchPtr>& batches,
      shard::ShardWriterOptions options = {}, base::CompactionOptions compaction = {},
      const std::optional<LsmWriteSpec>& lsm_spec = std::nullopt);
  /// Stops the base's maintenance thread (compaction, index builds).
  ~LocalTable() override;

  const std::string& name() const override { return name_; }
  arrow::SchemaPtr schema() const override;
  uint64_t version() const override;
  Result<uint64_t> Insert(const std::vector<arrow::RecordBatchPtr>& batches) override;
  Result<uint64_t> Overwrite(arrow::SchemaPtr schema,
                             const std::vector<arrow::RecordBatchPtr>& batches) override;
  TableSnapshot Snapshot() const override;
  Result<uint64_t> Delete(const std::vector<arrow::RecordBatchPtr>& keys) override;
  Result<uint64_t> ReadModifyWrite(
      const std::function<Result<Mutation>(const TableSnapshot&)>& fn) override;
  Result<std::vector<ShardFlushResult>> Flush(shard::Deadline deadline) override;
  std::vector<shard::ShardDescription> DescribeShards() const override;
  /// Defined in local_table_metrics.cc; takes mu_ shared.
  std::vector<shard::ShardWriterStats> ShardStats() const override;
  Result<index::IndexSpec> CreateIndex(index::IndexSpec spec) override;
  Status DropIndex(const std::string& name) override;
  std::vector<IndexStatus> ListIndexes() const override;
  Result<base::CompactionResult> Compact(shard::Deadline deadline) override;
  Result<base::RewriteResult> RewriteBase(shard::Deadline deadline) override;
  std::optional<BaseDescription> DescribeBase() const override;
  void AwaitIndexLoads(const std::string& column) override;
  // LSM write spec: defined in local_table_lsm.cc.
  std::optional<LsmWriteSpec> GetLsmWriteSpec() const override;
  /// Takes write_mu_ and mu_ exclusively (as a read-modify-write: puts wait for it).
  Status SetLsmWriteSpec(std::optional<LsmWriteSpec> spec) override;
  Result<base::GcStats> CollectGarbage() override;
  /// Defined in local_table_rewrite.cc; see Table::RewriteColumns.
  Result<uint64_t> RewriteColumns(
      const std::function<Result<ColumnRewrite>(const RewriteSource&)>& plan) override;

  // Versions, tags and stats: defined in local_table_versions.cc.
  VersionInfo CurrentVersion() const override;
  Result<std::map<std::string, TagInfo>> ListTags() const override;
  Status CreateTag(const std::string& tag, uint64_t version) override;
  Status UpdateTag(const std::string& tag, uint64_t version) override;
  Status DeleteTag(const std::string& tag) override;
  Result<TableStats> Stats() const override;

  /// For Catalog::RenameTable (local_table_versions.cc): waits for in-flight writes (takes
  /// write_mu_ and mu_ exclusively), marks the table gone (every later call through this
  /// object fails NotFound "... (renamed)") and closes the shard writer, leaving every file in
  /// place. Errors: NotFound when already dropped or renamed.
  Status CloseForRename();

  /// Marks the table dropped (later calls fail NotFound), closes the shard writer and removes
  /// its files: manifests
  /// first, oldest version first (so a crash mid-drop never exposes an older version), then
  /// everything else under the prefix. First stops the current base's maintenance thread
  /// with mu_ released (again if an overwrite swapped the base in meanwhile), so no base
  /// thread outlives the drop.
  Status Drop();

  // Recovery of a poisoned shard writer: defined in writer_recovery.cc (see its header).
  /// Reopens the shard when its writer is poisoned: probe write, then (holding write_mu_
  /// exclusively, so writes wait) a new base and ShardWriter swapped in under mu_. Returns
  /// true when it reopened, false when there was nothing to do (not poisoned, dropped or
  /// replaced meanwhile). Errors: the probe's or the reopen's (the poisoned writer stays; the
  /// old base's maintenance thread stays stopped until a reopen succeeds).
  Result<bool> RecoverWriter();
  /// The supervisor's tick (table/supervisor.h): when the writer is poisoned and an attempt is
  /// due (backoff), RecoverWriter; logs the poison once and the recovery once.
  void Supervise(RecoveryBackoff::Clock::time_point now, const RecoveryOptions& options);
  WriterRecoveryInfo RecoveryInfo() const override;

  /// Object-store prefix of the table ("{database_dir}/{table_dir}").
  const std::string& prefix() const { return prefix_; }
  /// Id of the first shard (the only one of an unsharded table).
  std::string shard_id() const;
  /// Ids of every shard, bucket order.
  std::vector<std::string> shard_ids() const;
  /// Identity sharding: each shard's value (manifest shard_values); else empty.
  std::vector<std::string> IdentityValues() const override;

 private:
  LocalTable(std::shared_ptr<io::ObjectStore> store, std::string prefix, std::string name,
             shard::ShardWriterOptions options, base::CompactionOptions compaction)
      : store_(std::move(store)),
        prefix_(std::move(prefix)),
        name_(std::move(name)),
        options_(std::move(options)),
        compaction_(compaction),
        txn_log_(std::make_shared<TxnLog>(store_, prefix_)) {}
  /// Opens an empty or stored base for a shard `shard_id` of `schema` with `options` (primary
  /// key, index definitions) and points options->base / compacted_generation at it.
  Result<std::shared_ptr<base::BaseTable>> OpenBase(const format::BaseTable& stored,
                                                    const arrow::SchemaPtr& schema,
                                                    const std::string& shard_id,
                                                    shard::ShardWriterOptions* options) const;
  /// Starts base_'s maintenance thread over shards_ (callers hold mu_ or own the table alone).
  void StartBaseLocked();

  // The shards (local_table_shards.cc).
  /// The base and every shard writer of `shard_ids` (lane = index) for a table of `schema`
  /// with manifest `m` (its base, key, index definitions, LSM write spec): existing shards
  /// replay their WAL, new ids start empty. One shard reads the base in its own views; with
  /// several the base is shared (base_in_view = false). On failure nothing stays open.
  struct Tier {
    std::shared_ptr<base::BaseTable> base;
    std::vector<std::unique_ptr<shard::ShardWriter>> shards;
    std::vector<std::string> values;  // identity sharding: each shard's value (WriteFreshTier)
  };
  Result<Tier> OpenTier(const format::TableManifest& m, const arrow::SchemaPtr& schema,
                        const std::vector<std::string>& shard_ids) const;
  /// A new tier of `count` fresh shards (fresh ids, an empty base) for manifest `m` holding
  /// `batches`, routed by m's LSM write spec; identity sharding ignores `count`: one shard
  /// per value of `batches` (Tier::values, ascending), or one spare shard (value "") when
  /// there is no row. On failure removes what it wrote.
  Result<Tier> WriteFreshTier(const format::TableManifest& m, const arrow::SchemaPtr& schema,
                              int count, const std::vector<arrow::RecordBatchPtr>& batches) const;
  /// Ends `tier` (a fresh one whose commit failed, or the one a commit replaced): stops its
  /// base, closes its writers and removes their files (failures logged, naming `what`). Call
  /// without mu_ for a tier whose base thread ran (it may wait for mu_ in CommitBase).
  void DiscardTier(Tier& tier, const std::string& what) const;
  /// Writes `storage_rows` / `user_rows` (as ShardWriter::Apply takes them) to the shards
  /// their keys route to: one shard -> its Apply (or Put / Delete as `kind` says); several ->
  /// all or nothing (multi_shard_write.h). Holds write_mu_ (any mode) and mu_ shared. Returns
  /// the table version after it.
  /// Identity sharding: rows of a value no shard holds write nothing; their values are put in
  /// `*missing` (ascending) and the caller adds the shards (WriteAddingShards). A delete's
  /// key of such a value is skipped (no shard, no row).
  enum class WriteKind { kPut, kDelete, kApply };
  Result<uint64_t> WriteLocked(WriteKind kind,
                               const std::vector<arrow::RecordBatchPtr>& storage_rows,
                               const std::vector<arrow::RecordBatchPtr>& user_rows,
                               std::vector<std::string>* missing);
  /// WriteLocked with mu_ taken here (the caller holds write_mu_): shared for the write; when
  /// it names values no shard holds, exclusively to add them (AddIdentityShardsLocked), then
  /// the write again. Errors: WriteLocked's, AddIdentityShardsLocked's, NotFound (dropped).
  Result<uint64_t> WriteAddingShards(WriteKind kind,
                                     const std::vector<arrow::RecordBatchPtr>& storage_rows,
                                     const std::vector<arrow::RecordBatchPtr>& user_rows);
  /// Identity sharding: gives each of `values` (key components) a shard: the spare shard
  /// first, then fresh shards (new lanes of the base), committed in one manifest (shard_ids,
  /// shard_values; base_version unchanged: no row moved), then handed to the base's threads.
  /// Values that have a shard by now are skipped; nothing to do unless the spec is identity.
  /// Errors (nothing committed, new shard files removed): Invalid past
  /// Liveness::kMaxLanes shards; the commit's (Fenced...). Holds write_mu_ (any mode) and
  /// mu_ exclusively.
  Status AddIdentityShardsLocked(const std::vector<std::string>& values);
  /// Whether the base is shared by lanes (several shards, or identity sharding, whose shards
  /// are added later): writers have base_in_view = false and reads merge the shards'
  /// views (ShardedViewLocked). Holds mu_.
  bool SharedBaseLocked() const;
  /// The options of lane `lane` (shard `id`) of manifest `m`: `opts` (ShardOptionsFor, with
  /// its base attached) with the lane, the shard's compacted generation, whether the base is
  /// shared and the transaction-log check of multi-shard writes.
  shard::ShardWriterOptions LaneOptions(shard::ShardWriterOptions opts,
                                        const format::TableManifest& m, const std::string& id,
                                        size_t lane, bool shared) const;
  /// Points `options` at `base` (options->base, on_publish).
  static void AttachBase(const std::shared_ptr<base::BaseTable>& base,
                         shard::ShardWriterOptions* options);
  /// base_version + the sum of the shards' last WAL positions. Holds mu_.
  uint64_t VersionLocked() const;
  /// base_version + the sum of the shards' VISIBLE WAL positions (their snapshots'): what a
  /// write of several shards answers, so a snapshot taken after the answer has at least that
  /// version (the durable positions may include another write's rows not yet published,
  /// which VersionLocked would count: a client's describe/ of the version its write returned
  /// could then 404). Holds mu_.
  uint64_t VisibleVersionLocked() const;
  /// The version a reader is told (version(), describe/, an empty read-modify-write):
  /// VisibleVersionLocked for a shared base (several shards, identity), else VersionLocked.
  /// (VersionLocked stays for the base_version of a new tier, which must exceed every
  /// version ever reported.) Holds mu_.
  uint64_t ReportedVersionLocked() const;
  /// The table's view: the one shard's, or (several) the base once under every shard's
  /// visibility followed by each shard's sources. Holds mu_ (takes publish_mu_, view_mu_).
  Result<std::shared_ptr<const shard::ShardSnapshot>> SnapshotLocked() const;
  /// A view of several shards: `merged` (what SnapshotLocked returns) and, per shard i, the
  /// base with shard i's sources only (TableSnapshot::shard_views, for pruned reads).
  struct ShardedView {
    std::vector<std::shared_ptr<const shard::ShardSnapshot>> parts;  // each shard's own view
    shard::BaseSource::State base;                                   // the base state seen
    std::vector<std::shared_ptr<index::ColumnIndex>> covering;       // base indexes it took
    std::shared_ptr<const shard::ShardSnapshot> merged;
    std::shared_ptr<const std::vector<std::shared_ptr<const shard::ShardSnapshot>>> by_shard;
  };
  /// The ShardedView of now: the cached one (view_) while no shard's view and no base state
  /// changed since it was built (every read of a sharded table takes one), else a new one.
  /// Holds mu_ (takes publish_mu_, then view_mu_); shards_.size() > 1.
  Result<std::shared_ptr<const ShardedView>> ShardedViewLocked() const;
  /// Drops the cached view (view_), so the tier it holds (MemTables, SSTable readers, the base)
  /// is freed: called where shards_ or base_ are replaced and where the table is dropped.
  void ForgetView() const;
  /// SetLsmWriteSpec's change of the shard count (local_table_lsm.cc): refused (Invalid) when
  /// the table has live rows; else commits `m` with `count` fresh empty shards and an empty
  /// base, swaps them in and hands the old base and writers to `old` (the caller stops and
  /// removes them with mu_ released). Holds write_mu_ and mu_ exclusively.
  Status ReshardEmptyLocked(format::TableManifest m, size_t count, Tier* old);
  /// Raw pointers to shards_ (lane order), for the base's maintenance. Holds mu_.
  base::ShardList ShardListLocked() const;
  /// The first shard health error (OK when every shard is healthy). Holds mu_.
  Status HealthLocked() const;
  /// Index progress of every definition over every shard and the base
  /// (local_table_indexes.cc). Holds mu_.
  std::vector<shard::IndexProgress> IndexProgressLocked() const;
  /// One multi-shard transaction at a time (WriteLocked): a part waits, before it is ready to
  /// publish, for every row ahead of it in its MemTable, so two transactions holding parts in
  /// each other's shards would wait on each other. The writes waiting meanwhile are merged
  /// into the next transaction (multi_shard_group.h); a write waits to be taken at most the
  /// write stall timeout (then Backpressure). Internally locked.
  MultiShardWriteGroup txn_group_;
  /// The base's commit step (base::BaseTable::CommitFn) for base `b`: takes mu_ exclusively,
  /// checks `b` is still the table's base and the shard writer still owns its shard, commits
  /// a table manifest with `next` as its base (base_version unchanged: the rows are the same),
  /// then runs `install`. A failed put is read back before it is reported as failed; when the
  /// outcome cannot be learnt the error is Internal.
  /// One GC pass over the current table manifest and shard manifest (loaded now).
  Result<base::GcStats> GcOnce();
  /// Commits `m` (the next version of manifest_) with put-if-absent, after checking that this
  /// server still owns every shard (ShardWriter::CheckOwner: Fenced otherwise, and the writer
  /// becomes fenced). A version another server
  /// committed first means this object no longer holds the newest manifest: Fenced (409)
  /// naming the version and `what` was not applied, instead of the store's AlreadyExists
  /// (which the HTTP layer answers as a 400 about the caller's input). Other errors as
  /// format::CommitTableManifest, with `what` as context.
  Status CommitNextManifest(const format::TableManifest& m, const std::string& what) const;
  Status CommitBase(const base::BaseTable* b, const format::BaseTable& next,
                    const std::function<Status()>& install);
  Status CheckNotDropped() const;
  /// options_ with what manifest `m` says for its shard: primary key, index definitions and,
  /// when it holds an LSM write spec, its writer_config_defaults and maintained_indexes
  /// (local_table_lsm.cc). Errors: Corruption for a manifest whose specs do not parse.
  Result<shard::ShardWriterOptions> ShardOptionsFor(const format::TableManifest& m) const;
  /// The base's write throttle (base/write_throttle.h) for a write of `rows` rows: waits while
  /// compaction is behind. Call with no lock of this table held except write_mu_.
  /// Errors: NotFound (dropped); Backpressure at the write stall timeout.
  Status Throttle(int64_t rows);
  /// Commits a manifest (version + 1, base_version + 1: a new table version) with `specs` as
  /// the index definitions, then applies them to the shard. Holds mu_ exclusively.
  Status CommitIndexSpecsLocked(const std::vector<index::IndexSpec>& specs);
  /// CreateTag (`create`: AlreadyExists when the tag exists) and UpdateTag (Invalid when it
  /// does not): validates the name and version, then commits a manifest with the tag. Takes
  /// mu_ exclusively.
  Status SetTag(const std::string& tag, uint64_t version, bool create);

  const std::shared_ptr<io::ObjectStore> store_;
  const std::string prefix_;
  const std::string name_;
  const shard::ShardWriterOptions options_;  // for every shard this table opens
  const base::CompactionOptions compaction_;
  /// Decisions of multi-shard writes (txn_log.h); internally thread-safe.
  const std::shared_ptr<TxnLog> txn_log_;

  /// Row-write lock (see the file comment): shared by Insert / Delete / Overwrite, exclusive
  /// for ReadModifyWrite. Guards no data; it orders writes. Taken before mu_.
  std::shared_mutex write_mu_;
  mutable std::shared_mutex mu_;
  format::TableManifest manifest_;  // guarded by mu_
  arrow::SchemaPtr schema_;         // guarded by mu_
  /// One writer per shard, manifest_.shard_ids order (= bucket = base lane). Guarded by mu_
  /// (the vector and pointers); each writer is internally locked.
  std::vector<std::unique_ptr<shard::ShardWriter>> shards_;
  /// See the file comment: multi-shard publish (exclusive) against multi-shard views (shared).
  mutable std::shared_mutex publish_mu_;
  /// Guards view_, sharding_ and sharding_version_ (a leaf: nothing is taken under it).
  mutable std::mutex view_mu_;
  mutable std::shared_ptr<const ShardedView> view_;  // the last ShardedViewLocked built
  /// The manifest's LSM write spec as TableSnapshot::sharding, and its shard_values as
  /// TableSnapshot::shard_values (identity), taken at manifest version sharding_version_
  /// (0: not yet).
  mutable std::shared_ptr<const LsmWriteSpec> sharding_;
  mutable std::shared_ptr<const std::vector<std::string>> shard_values_;
  mutable uint64_t sharding_version_ = 0;
  /// The base of shards_' rows (replaced with shards_); its maintenance thread calls CommitBase,
  /// which takes mu_, so it is stopped only with mu_ released.
  std::shared_ptr<base::BaseTable> base_;  // guarded by mu_ (pointer); internally locked
  bool dropped_ = false;                   // guarded by mu_
  bool renamed_ = false;                   // guarded by mu_ (set with dropped_)
  /// Commit time of the newest write or manifest this object made (micros since the epoch;
  /// 0 = none yet, then the manifest's created_at_micros is reported). Atomic: written by
  /// concurrent writers (the larger value wins), read without locks.
  std::atomic<int64_t> last_commit_micros_{0};
  /// Records a commit at the current time in last_commit_micros_.
  void NoteCommit();
  /// Backoff and counters of RecoverWriter (internally locked).
  RecoveryBackoff recovery_;
  /// When Supervise next checks that the shard writer still owns its shard (owner_check).
  /// Touched only by the supervisor thread (Supervise), so no lock.
  RecoveryBackoff::Clock::time_point next_owner_check_{};
  /// Highest writer epoch a reopen attempt may have claimed, per shard id (guarded by
  /// write_mu_, held exclusively by RecoverWriter): a failed attempt leaves its claim behind,
  /// which is not another server's.
  std::map<std::string, uint64_t> attempt_epochs_;
};

}  // namespace strata::table
