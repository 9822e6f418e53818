// A table: its schema, version, and the one shard that holds its rows (issue 2: one shard per
// table, unsharded). Thread-safety: every method may be called from many threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "base/base_table.h"
#include "common/status.h"
#include "shard/shard_writer.h"
#include "table/lsm_write_spec.h"

namespace strata::table {

/// A consistent read view: every live row acknowledged before Snapshot() returned (newest
/// version per key across MemTables and SSTables, tombstones dropped), oldest first.
/// Batches are immutable and shared (no copy when no row of a batch was dropped).
struct TableSnapshot {
  arrow::SchemaPtr schema;  // user columns only
  uint64_t version = 0;
  int64_t num_rows = 0;  // live rows
  /// Names of the storage key columns (primary key, or `_rowid`).
  std::vector<std::string> key_columns;
  /// The shard's read view (sources with liveness and indexes, index definitions; no row
  /// copies: shard::LiveBatches materialises rows for the rare caller that needs them all);
  /// null only when the snapshot failed (then the table reads as empty).
  std::shared_ptr<const shard::ShardSnapshot> shard;
  /// A table of several shards (docs/SHARDING.md): its LSM write spec and shard count; the
  /// sources of `shard` carry their shard index (SourceView::shard), so a read may skip the
  /// shards its filter cannot match (query/shard_pruning.h). Null for a one-shard table.
  std::shared_ptr<const LsmWriteSpec> sharding;
  int64_t num_shards = 1;
  /// With `sharding`: per shard i, the view of the base and shard i's sources only (the
  /// same rows of shard i as `shard`, no other shard's), which a read pruned to one shard
  /// uses as is. Null otherwise.
  std::shared_ptr<const std::vector<std::shared_ptr<const shard::ShardSnapshot>>> shard_views;
  /// With `sharding` in identity mode: per shard i, the value it holds (Table::IdentityValues),
  /// so an equality on the shard column finds its shard. Null otherwise.
  std::shared_ptr<const std::vector<std::string>> shard_values;
};

/// What the base table really built for a definition (issue 15: index/{n}/stats/ reports it).
struct BaseIndexBuilt {
  std::string type;  // "IVF_FLAT" | "IVF_PQ" | "IVF_SQ" (FAISS) | "HNSW" | "BTREE" | "FTS"
  int64_t rows = 0;  // base rows covered
  int64_t memory_bytes = 0;
  // IVF: resolved parameters and the rows trained on. HNSW: m / ef_construction.
  int64_t num_partitions = 0, num_sub_vectors = 0, num_bits = 0, trained_rows = 0;
  int m = 0, ef_construction = 0;
};

/// One index definition with its progress (index/list/, index/{n}/stats/).
struct IndexStatus {
  index::IndexSpec spec;
  int64_t num_indexed_rows = 0;
  int64_t num_unindexed_rows = 0;  // falls to 0 once every source holds the index
  int64_t size_bytes = 0;
  std::optional<BaseIndexBuilt> base;  // unset while the base has no index for it
};

/// What Table::Flush did for one shard (PROTOCOL.md §0 flush/).
struct ShardFlushResult {
  std::string shard_id;
  std::optional<uint64_t> sealed_generation;  // what force_seal_active froze
  std::optional<uint64_t> waited_generation;  // the generation waited for (sealed or older)
  uint64_t current_generation = 0;            // after the wait
};

/// One atomic write produced by a read-modify-write (update/, delete/, merge_insert/).
struct Mutation {
  /// Rows under the storage schema (shard::ShardSnapshot::storage_schema: user columns, then
  /// `_rowid` for tables without a primary key, then `_tombstone`) that keep the key they
  /// carry: replacement versions (`_tombstone` false) and tombstones (`_tombstone` true, other
  /// non-key columns null). Written first.
  std::vector<arrow::RecordBatchPtr> storage_rows;
  /// New rows under the user schema (tables without a primary key get fresh `_rowid` keys),
  /// written after storage_rows in the same WAL entry (so they win over an equal key there).
  std::vector<arrow::RecordBatchPtr> inserts;

  bool empty() const;
};

/// Rows per put when Table::RewriteColumns writes the fresh shard (bounded so MemTable seals
/// and backpressure work as for ordinary inserts).
inline constexpr int64_t kRewriteChunkRows = 50000;

/// What a column rewrite reads (Table::RewriteColumns): the snapshot taken under the write
/// lock, the declared primary key (empty: hidden `_rowid`) and the index definitions.
struct RewriteSource {
  const TableSnapshot& snapshot;
  /// The snapshot's live rows under the user schema (shard::LiveBatches).
  const std::vector<arrow::RecordBatchPtr>& batches;
  std::vector<std::string> primary_key;
  std::vector<index::IndexSpec> indexes;
};

/// A column rewrite (add_columns/, alter_columns/, drop_columns/): the new user schema,
/// primary key and index definitions, and `transform`, which maps live batch
/// `RewriteSource::batches[index]` (old schema) to a batch of the same rows under `schema`.
struct ColumnRewrite {
  arrow::SchemaPtr schema;
  std::vector<std::string> primary_key;
  std::vector<index::IndexSpec> indexes;
  std::function<Result<arrow::RecordBatchPtr>(const arrow::RecordBatchPtr& batch, size_t index)>
      transform;
};

/// The current table version and when it was committed (version/list/).
struct VersionInfo {
  uint64_t version = 0;
  /// Microseconds since the UNIX epoch of the newest commit this process knows of: the last
  /// write or manifest commit it made, or, after a restart, the newest table-manifest commit
  /// (WAL entries carry no time).
  int64_t timestamp_micros = 0;
};

/// One tag (tags/list/): the version it names and the size of the manifest current when it
/// was set.
struct TagInfo {
  uint64_t version = 0;
  int64_t manifest_size = 0;
};

/// Table statistics (stats/, PROTOCOL.md §5.1). A "fragment" is one non-empty source of the
/// shard: a published SSTable, a frozen MemTable or the active MemTable.
struct TableStats {
  int64_t total_bytes = 0;  // sum of the sources' bytes (SSTable files, MemTable estimates)
  int64_t num_rows = 0;     // live rows (snapshot)
  int64_t num_indices = 0;
  std::vector<int64_t> fragment_rows;  // physical rows per non-empty source, ascending
};

/// The base table for `mem_wal/describe/` (DESIGN.md §7).
struct BaseDescription {
  uint64_t version = 0;  // compactions committed into it
  int64_t rows = 0;      // physical rows (deleted ones included)
  int64_t live_rows = 0;
  int64_t fragments = 0;
  int64_t bytes = 0;                                     // fragment files and index checkpoints
  std::map<std::string, uint64_t> compacted_generation;  // shard id -> generation
  std::vector<base::BaseIndexInfo> indexes;
  base::BaseStats stats;
};

/// Automatic recovery of a poisoned shard writer (table/writer_recovery.h), for describe,
/// /metrics and /readyz.
struct WriterRecoveryInfo {
  uint64_t attempts = 0;          // reopen attempts since start (failed ones included)
  uint64_t recoveries = 0;        // successful reopens since start
  std::string last_error;         // why the newest failed attempt failed ("" = none since success)
  int64_t next_attempt_ms = -1;   // milliseconds to the next attempt (-1 = none scheduled)
  int64_t last_recovery_ms = -1;  // duration of the newest successful recovery, from poison
};

class Table {
 public:
  virtual ~Table() = default;

  /// The writer-recovery state (default: never recovers).
  virtual WriterRecoveryInfo RecoveryInfo() const { return {}; }

  /// Runs one bounded compaction of the table's SSTables into its base now (compact/).
  /// Errors: AlreadyExists "already running"; NotSupported; the compaction's.
  virtual Result<base::CompactionResult> Compact(shard::Deadline deadline) {
    (void)deadline;
    return Status::NotSupported("compaction is not supported by this table");
  }
  /// Rewrites the table's base now (base/base_table.h "Base rewrite": dead rows dropped,
  /// positions renumbered); waits for a running compaction. Errors: NotSupported; the
  /// rewrite's.
  virtual Result<base::RewriteResult> RewriteBase(shard::Deadline deadline) {
    (void)deadline;
    return Status::NotSupported("base rewrite is not supported by this table");
  }
  /// One garbage collection of the table's files now (base/gc.h rules). Errors: AlreadyExists
  /// while a compaction runs; NotSupported; the collector's.
  virtual Result<base::GcStats> CollectGarbage() {
    return Status::NotSupported("garbage collection is not supported by this table");
  }
  /// The base table, or nullopt for tables without one.
  virtual std::optional<BaseDescription> DescribeBase() const { return std::nullopt; }
  /// Before a vector query: waits, at most CompactionOptions::index_load_wait, for the base
  /// index checkpoints stored at open to be loaded (base::BaseTable::AwaitCheckpointLoads),
  /// so a restarted table's first queries use the index instead of scanning the base. Returns
  /// at once when nothing is loading (default: tables without a base). `column`: the query's
  /// vector column (empty: any). Not called for queries that bypass the vector index.
  virtual void AwaitIndexLoads(const std::string& column) { (void)column; }

  /// The table's LSM write spec (PROTOCOL.md §5.6), or nullopt when none is set.
  virtual std::optional<LsmWriteSpec> GetLsmWriteSpec() const { return std::nullopt; }
  /// Sets (`spec`) or unsets (nullopt) the LSM write spec in a new table manifest (the table
  /// version is unchanged) and applies it to the shard writer: writer_config_defaults over the
  /// server's writer options, maintained_indexes as the MemTables' index set (unset: the
  /// server options and every definition again). Errors (nothing changes): Invalid from
  /// ValidateLsmWriteSpec, or "no LSM write spec is set" for an unset without one, or a
  /// change of the shard layout on a table with rows; NotFound (dropped); IOError.
  virtual Status SetLsmWriteSpec(std::optional<LsmWriteSpec> spec) {
    (void)spec;
    return Status::NotSupported("LSM write specs are not supported by this table");
  }
  /// Identity sharding: per shard, in DescribeShards order, the shard column value it holds
  /// as its key component (format/key_encoding.h; empty for a spare shard that holds no value
  /// yet). Empty for every other table.
  virtual std::vector<std::string> IdentityValues() const { return {}; }

  virtual const std::string& name() const = 0;
  virtual arrow::SchemaPtr schema() const = 0;
  /// Version number; every committed write makes a new, higher one. Survives restarts.
  virtual uint64_t version() const = 0;

  /// Appends `batches` (all under the table schema; validated first: names, types,
  /// nullability, vector dimension; a bad batch changes nothing) as one durable WAL entry, then
  /// makes them visible. Returns the new version.
  /// Errors: Invalid naming the column and the mismatch; IOError when the WAL write fails.
  virtual Result<uint64_t> Insert(const std::vector<arrow::RecordBatchPtr>& batches) = 0;

  /// Replaces all rows (and the schema) with `batches` under `schema`. Returns the new version.
  virtual Result<uint64_t> Overwrite(arrow::SchemaPtr schema,
                                     const std::vector<arrow::RecordBatchPtr>& batches) = 0;

  virtual TableSnapshot Snapshot() const = 0;

  /// Writes tombstones for the keys of `keys` (batches holding the key columns by name, see
  /// ShardWriter::Delete). Returns the new version. Errors: as ShardWriter::Delete.
  virtual Result<uint64_t> Delete(const std::vector<arrow::RecordBatchPtr>& keys) = 0;

  /// Read-modify-write: takes the table's write lock exclusively (every other write of this
  /// table, Insert / Delete / Overwrite / another ReadModifyWrite, waits; reads do not), takes
  /// a snapshot that holds every write acknowledged before, calls `fn` on it, and writes the
  /// Mutation it returns as one durable WAL entry before releasing the lock, so concurrent
  /// updates are never lost. Returns the new version, or the current one when the mutation is
  /// empty (nothing is written). Errors: whatever `fn` returns (nothing written); Invalid when
  /// a mutation batch does not conform (nothing written); then as Insert.
  virtual Result<uint64_t> ReadModifyWrite(
      const std::function<Result<Mutation>(const TableSnapshot&)>& fn) = 0;

  /// DESIGN.md §4 rule 8: per shard, force_seal_active; when the seal was empty, the newest
  /// generation sealed and not yet published (if any); waits until those are published. When
  /// it returns OK every row acknowledged before the call is in an SSTable.
  /// Errors: Timeout at `deadline` naming the pending generation; WriterPoisoned; Fenced.
  virtual Result<std::vector<ShardFlushResult>> Flush(shard::Deadline deadline) = 0;

  /// ShardWriter::Describe of every shard (mem_wal/describe/).
  virtual std::vector<shard::ShardDescription> DescribeShards() const = 0;
  /// ShardWriter::stats() of every shard (GET /metrics); empty once dropped. The counters
  /// start at zero whenever a shard writer opens (table reopened, overwritten or rewritten).
  virtual std::vector<shard::ShardWriterStats> ShardStats() const { return {}; }

  /// Rewrites every live row into a new schema: takes the write lock exclusively (as
  /// ReadModifyWrite: no write lands between the read and the swap), snapshots, calls `plan`
  /// on the snapshot (it validates and returns the new layout), transforms every live batch,
  /// writes the results into a fresh shard (puts of at most kRewriteChunkRows rows) that
  /// maintains `indexes`, commits a table manifest (new schema, primary key, index
  /// definitions) and swaps the shard in, removing the old one's files. Readers see either the
  /// old schema and rows or the new ones. Tables without a primary key give the rows fresh
  /// hidden `_rowid`s (row ids of earlier query answers no longer address them). Returns the
  /// new version (higher than every earlier one).
  /// Errors (nothing changes; the fresh shard is removed): whatever `plan` or `transform`
  /// return; Invalid for a bad new schema / primary key / index definition, a transformed
  /// batch that does not conform, or index definitions changed by a concurrent CreateIndex /
  /// DropIndex during the rewrite (retry); then as Insert.
  virtual Result<uint64_t> RewriteColumns(
      const std::function<Result<ColumnRewrite>(const RewriteSource&)>& plan) = 0;

  /// Records index definition `spec` (name required; an existing index of the same name is
  /// replaced) in a new table manifest, adds it to every MemTable (new rows are indexed before
  /// they become visible; rows already held are indexed in the background) and builds it for
  /// published SSTables in the background. Returns the recorded spec (uuid and created_at set).
  /// Errors: Invalid / NotSupported from index::ValidateIndexSpec (nothing changes); IOError.
  virtual Result<index::IndexSpec> CreateIndex(index::IndexSpec spec) = 0;
  /// Removes index `name`. Errors: NotFound naming it; IOError.
  virtual Status DropIndex(const std::string& name) = 0;
  /// Every index definition with its progress, in creation order.
  virtual std::vector<IndexStatus> ListIndexes() const = 0;

  // --- Versions and tags (PROTOCOL.md §5.1/§5.3; only the current version is readable) ---

  /// The current version and its commit time.
  virtual VersionInfo CurrentVersion() const = 0;
  /// Every tag, by name. Errors: NotFound when the table was dropped or renamed.
  virtual Result<std::map<std::string, TagInfo>> ListTags() const = 0;
  /// Adds tag `tag` naming `version` in a new manifest (the table version does not change).
  /// Errors: Invalid for a bad name (empty, > 256 bytes, control characters) or a version
  /// outside [1, current]; AlreadyExists ("tag 'x' already exists"); IOError.
  virtual Status CreateTag(const std::string& tag, uint64_t version) = 0;
  /// Points existing tag `tag` at `version`. Errors: Invalid when the tag does not exist or
  /// the version is outside [1, current]; IOError.
  virtual Status UpdateTag(const std::string& tag, uint64_t version) = 0;
  /// Removes tag `tag`. Errors: Invalid when it does not exist; IOError.
  virtual Status DeleteTag(const std::string& tag) = 0;
  /// Statistics of the current data (see TableStats). Errors: NotFound when dropped.
  virtual Result<TableStats> Stats() const = 0;
};

}  // namespace strata::table
