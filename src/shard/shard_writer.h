// ShardWriter: the write path of one shard (DESIGN.md §4). Open replays the shard's WAL into
// the active MemTable; Put validates batches against the table schema before anything is
// written, appends one durable WAL entry, then appends to the MemTable and returns. A failed
// WAL write changes nothing visible.
//
// Issue 2 scope: one active MemTable, no sealing/flushing, no epoch claim (entries carry
// writer_epoch/generation from the options). Issue 3 adds the shard manifest claim, fence
// sentinel, group commit (inside WalWriter), seal triggers, flush and backpressure behind the
// same Open/Put/Snapshot calls.
// Thread-safety: every method may be called from many threads at once; Put calls are ordered
// by the WalWriter (MemTable order = WAL order).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"
#include "io/object_store.h"
#include "memtable/memtable.h"
#include "wal/wal_reader.h"
#include "wal/wal_writer.h"

namespace strata::shard {

struct ShardWriterOptions {
  wal::WalWriterOptions wal;
};

/// What a Put did.
struct PutResult {
  uint64_t wal_position = 0;       // entry holding the rows (the current last one for 0 rows)
  int64_t first_row_position = 0;  // MemTable position of the first row
  int64_t num_rows = 0;
};

/// "{table_prefix}/_mem_wal/{shard_id}".
std::string ShardPrefix(const std::string& table_prefix, const std::string& shard_id);

class ShardWriter {
 public:
  /// Opens shard `shard_id` of the table at `table_prefix` (e.g. "default/t") with `schema`,
  /// replaying its WAL into the MemTable. A torn/corrupt last entry is moved to
  /// "{shard}/wal_quarantine/" (logged) and its position is reused.
  /// Errors: Invalid for a bad shard id or schema; Corruption (corrupt entry followed by
  /// others, a gap in positions, an entry whose schema differs from `schema`); IOError.
  static Result<std::unique_ptr<ShardWriter>> Open(std::shared_ptr<io::ObjectStore> store,
                                                   std::string table_prefix, std::string shard_id,
                                                   arrow::SchemaPtr schema,
                                                   ShardWriterOptions options = {});

  /// Validates `batches` (ConformBatches: names, types, nullability, vector dimension; columns
  /// matched by name, missing nullable ones filled with nulls), writes them as one durable WAL
  /// entry, appends them to the MemTable, returns. A Put of zero rows writes nothing.
  /// Errors: Invalid (nothing written); Fenced / WriterPoisoned / IOError from the WAL (nothing
  /// visible).
  Result<PutResult> Put(const std::vector<arrow::RecordBatchPtr>& batches);

  /// Every acknowledged row, oldest first, with the WAL position of the newest.
  memtable::MemTableSnapshot Snapshot() const { return memtable_->Snapshot(); }
  /// Newest WAL position whose rows are visible (0 = none).
  uint64_t last_wal_position() const { return memtable_->Snapshot().last_wal_position; }

  const arrow::SchemaPtr& schema() const { return schema_; }
  const std::string& shard_id() const { return shard_id_; }
  const std::string& shard_prefix() const { return shard_prefix_; }
  const wal::WalReplaySummary& replay_summary() const { return replay_; }
  wal::WalWriterStats wal_stats() const { return wal_->stats(); }

  /// Removes every file of shard `shard_id` (after an overwrite commits, or on drop).
  static Status RemoveShardFiles(io::ObjectStore& store, const std::string& table_prefix,
                                 const std::string& shard_id);

 private:
  ShardWriter() = default;

  std::shared_ptr<io::ObjectStore> store_;
  std::string shard_id_;
  std::string shard_prefix_;
  arrow::SchemaPtr schema_;
  wal::WalReplaySummary replay_;
  std::unique_ptr<memtable::MemTable> memtable_;  // active MemTable; internally locked
  std::unique_ptr<wal::WalWriter> wal_;           // internally locked
};

}  // namespace strata::shard
