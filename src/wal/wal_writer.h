// WAL writer of one shard (DESIGN.md §3-§4): each Append becomes a durable WAL entry, written
// with put_if_absent at the next position so that a taken name means another writer owns the
// shard (fencing). The entry is durable (file and directory fdatasync'ed by the store) before
// Append returns.
//
// Issue 2 writes one entry per Append, serialised by `mu_`. The interface is shaped for group
// commit (issue 3): callers hand over batches plus an `on_durable` callback and block until
// their entry is durable; a group-committing implementation may put many callers' batches into
// one entry and then run their callbacks in position/arrival order, without callers changing.
//
// Failure handling: a taken name -> Fenced, and every later Append fails Fenced. An IOError
// whose outcome is unknown (the entry may exist) poisons the writer (WriterPoisoned on every
// later Append; reopening the shard replays the WAL and recovers). An IOError that provably
// wrote nothing leaves the writer usable; the same position is tried again next time.
// Thread-safety: all methods may be called from many threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/ipc/writer.h"
#include "arrow/type.h"
#include "common/status.h"
#include "io/object_store.h"

namespace strata::wal {

struct WalWriterOptions {
  /// Epoch recorded in every entry (issue 3: claimed through the shard manifest).
  uint64_t writer_epoch = 1;
  /// Generation of the active MemTable, recorded in every entry.
  uint64_t generation = 1;
  /// Body compression of entries.
  arrow::ipc::Compression compression = arrow::ipc::Compression::kNone;
};

/// Counters since the writer was created (for metrics and benchmarks).
struct WalWriterStats {
  uint64_t entries_written = 0;  // durable entries (= object puts = fsync rounds)
  uint64_t appends = 0;          // acknowledged Append calls
  uint64_t bytes_written = 0;    // encoded entry bytes
};

class WalWriter {
 public:
  /// Called once the entry holding an Append is durable, with that entry's position. Calls
  /// happen in position order, one at a time (the ShardWriter appends to its MemTable here, so
  /// MemTable order equals WAL order).
  using OnDurable = std::function<void(uint64_t position)>;

  /// A writer for the shard at `shard_prefix` ("{table}/_mem_wal/{shard_id}") whose entries
  /// carry `schema`; the first entry goes to `next_position` (>= 1: last replayed + 1).
  WalWriter(std::shared_ptr<io::ObjectStore> store, std::string shard_prefix,
            arrow::SchemaPtr schema, uint64_t next_position, WalWriterOptions options = {});

  /// Writes `batches` (already validated against the schema) durably, runs `on_durable`
  /// (may be empty) and returns the entry position.
  /// Errors: Fenced (position taken); WriterPoisoned (earlier unknown-outcome failure);
  /// IOError (nothing written); Invalid from the IPC writer.
  Result<uint64_t> Append(const std::vector<arrow::RecordBatchPtr>& batches,
                          const OnDurable& on_durable = {});

  /// Position the next entry will get.
  uint64_t next_position() const;
  /// Generation recorded in entries written from now on (issue 3: set when sealing).
  void set_generation(uint64_t generation);
  WalWriterStats stats() const;
  /// OK, or the sticky Fenced/WriterPoisoned error.
  Status health() const;

 private:
  const std::shared_ptr<io::ObjectStore> store_;
  const std::string shard_prefix_;
  const arrow::SchemaPtr schema_;

  mutable std::mutex mu_;  // guards everything below and serialises entry writes
  uint64_t next_position_;
  WalWriterOptions options_;
  WalWriterStats stats_;
  Status sticky_error_;
};

}  // namespace strata::wal
