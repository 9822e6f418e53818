// WAL writer of one shard with group commit (DESIGN.md §3-§4, issue 3). Each entry is written
// with put_if_absent at the next position, so a taken name means another writer owns the shard
// (fencing). An entry is durable (file and directory synced by the store) before anyone
// waiting on it is told so.
//
// Group commit (leader/follower, no timer): appends go into a FIFO queue. A caller waiting for
// its append when no write is in flight becomes the leader: it takes the longest prefix of the
// queue whose appends share the first one's generation and whose encoded size stays within
// max_wal_entry_bytes (at least one append), writes it as ONE entry (one put = one fsync
// round), runs the appends' OnDurable callbacks in queue order, and wakes the followers. While
// it writes, arriving appends queue up and ride in the next entry. An idle writer therefore
// syncs at once; under load, entries grow with the queue. A WAL entry never spans two
// generations. `group_commit = false` writes one entry per append (for comparison).
//
// Order: positions follow queue order, and OnDurable callbacks run in position order, one at
// a time, on the leader's thread, before the next entry is started. Enqueue order is the order
// the caller's own lock gives (e.g. the ShardWriter appends rows to its MemTable and enqueues
// under one lock, then waits outside it, and advances the MemTable watermark in OnDurable).
//
// Failure handling (sticky; reopen of the shard replays the WAL and recovers):
// - a taken name -> Fenced for the group, every queued append and every later call;
// - any other failed entry write -> the group gets the error (IOError); the writer becomes
//   WriterPoisoned for every queued append and every later call, because its caller has
//   already made the failed appends' rows part of in-memory state.
// Thread-safety: all methods may be called from many threads at once. `mu_` guards the queue,
// the position counter, stats and the sticky error; only the leader (writing_ = true) does I/O.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
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
#include "wal/wal_entry.h"

namespace strata::wal {

struct WalWriterOptions {
  /// Epoch recorded in every entry (claimed through the shard manifest).
  uint64_t writer_epoch = 1;
  /// Generation recorded by the Append/Enqueue overloads without an explicit generation
  /// (issue 2 callers; see set_generation).
  uint64_t generation = 1;
  /// Body compression of entries.
  arrow::ipc::Compression compression = arrow::ipc::Compression::kNone;
  /// Group many queued appends into one entry (true) or write one entry per append (false).
  bool group_commit = true;
  /// Upper bound of the column-buffer bytes grouped into one entry (an append larger than
  /// this still gets an entry of its own). Default 8 MiB.
  int64_t max_wal_entry_bytes = 8ll << 20;
};

/// Counters since the writer was created (for metrics and benchmarks).
struct WalWriterStats {
  uint64_t entries_written = 0;  // durable entries, fence sentinels included
  uint64_t appends = 0;          // appends made durable
  uint64_t bytes_written = 0;    // encoded entry bytes
  uint64_t fsyncs = 0;           // entry puts (each put syncs the file and its directory)
  uint64_t fence_sentinels = 0;  // fence sentinel entries written
  uint64_t max_group_size = 0;   // most appends in one entry
  /// Entries by appends per entry: [0] 1, [1] 2-3, [2] 4-7, [3] 8-15, [4] 16-31, [5] 32-63,
  /// [6] 64-127, [7] >= 128 (power-of-two buckets).
  std::array<uint64_t, 8> group_size_histogram{};
};

/// One queued append; obtained from Enqueue, passed to Wait. Opaque (defined in the .cc).
struct PendingAppend;
using AppendHandle = std::shared_ptr<PendingAppend>;

class WalWriter {
 public:
  /// Called once the entry holding an append is durable, with that entry's position. Calls
  /// happen in position order (queue order inside one entry), one at a time, on the thread
  /// that wrote the entry; the callback must not call back into this WalWriter.
  using OnDurable = std::function<void(uint64_t position)>;

  /// A writer for the shard at `shard_prefix` ("{table}/_mem_wal/{shard_id}") whose entries
  /// carry `schema`; the first entry goes to `next_position` (>= 1: highest position present
  /// in the store + 1, torn ones included).
  WalWriter(std::shared_ptr<io::ObjectStore> store, std::string shard_prefix,
            arrow::SchemaPtr schema, uint64_t next_position, WalWriterOptions options = {});
  /// Waits for an in-flight entry write to finish; appends still queued are failed.
  ~WalWriter();

  WalWriter(const WalWriter&) = delete;
  WalWriter& operator=(const WalWriter&) = delete;

  /// Queues `batches` (already validated against the schema) for the entry of `generation`
  /// without waiting; `on_durable` (may be empty) runs once they are durable. Generations
  /// must not decrease between consecutive Enqueue calls (the caller seals under its lock).
  /// Nothing is written until someone waits (Wait, Append, Sync).
  /// Errors: the sticky Fenced / WriterPoisoned; Invalid for a generation lower than the
  /// last queued one.
  Result<AppendHandle> Enqueue(std::vector<arrow::RecordBatchPtr> batches, uint64_t generation,
                               OnDurable on_durable = {});
  /// Enqueue of one shard's part of a multi-shard write (wal_entry.h TxnTag): written alone in
  /// its entry, which carries `txn`. Errors: as Enqueue; Invalid for an empty id or
  /// txn.shards < 2.
  Result<AppendHandle> Enqueue(std::vector<arrow::RecordBatchPtr> batches, uint64_t generation,
                               OnDurable on_durable, TxnTag txn);

  /// Blocks until the append of `handle` is durable (writing entries itself when no write is
  /// in flight) and returns its entry position. Errors: Fenced; IOError (this append's entry
  /// failed); WriterPoisoned (an earlier entry failed); Invalid from the IPC writer.
  Result<uint64_t> Wait(const AppendHandle& handle);

  /// Enqueue + Wait.
  Result<uint64_t> Append(const std::vector<arrow::RecordBatchPtr>& batches, uint64_t generation,
                          const OnDurable& on_durable);
  /// Issue 2 form: Enqueue + Wait with the generation of set_generation/options.
  Result<uint64_t> Append(const std::vector<arrow::RecordBatchPtr>& batches,
                          const OnDurable& on_durable = {});

  /// Makes every append queued before the call durable (for non-durable puts: a background
  /// thread calls this). Errors: as Wait.
  Status Sync();

  /// Writes a data-less fence sentinel entry of `generation` at the next position (after
  /// everything queued before it), alone in its entry, and returns its position.
  /// `skip_from` > 0 marks positions [skip_from, sentinel position) as torn entries replay
  /// must skip: pass WalReplaySummary::torn_position when replay ended at a torn run, and
  /// construct this writer at torn_last_position + 1. Errors: as Wait; Invalid when
  /// skip_from >= the sentinel's position.
  Result<uint64_t> WriteFenceSentinel(uint64_t generation, uint64_t skip_from = 0);

  /// Position the next entry will get.
  uint64_t next_position() const;
  /// Position of the newest durable entry written by this writer (next_position at
  /// construction - 1 before any).
  uint64_t last_durable_position() const;
  /// Generation recorded by the issue-2 Append overload from now on.
  void set_generation(uint64_t generation);
  uint64_t writer_epoch() const { return options_.writer_epoch; }
  WalWriterStats stats() const;
  /// OK, or the sticky Fenced/WriterPoisoned error.
  Status health() const;

 private:
  // Writes one group (caller is the leader, `lock` held on entry and exit, released while
  // doing I/O).
  void WriteGroup(std::unique_lock<std::mutex>& lock);
  Result<AppendHandle> EnqueueLocked(std::vector<arrow::RecordBatchPtr> batches,
                                     uint64_t generation, OnDurable on_durable, bool fence_sentinel,
                                     uint64_t skip_from, TxnTag txn);
  Result<uint64_t> WaitFor(const AppendHandle& handle);

  const std::shared_ptr<io::ObjectStore> store_;
  const std::string shard_prefix_;
  const arrow::SchemaPtr schema_;
  const WalWriterOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;             // signalled when a group completes
  std::deque<AppendHandle> queue_;         // guarded by mu_: appends not yet written
  bool writing_ = false;                   // guarded by mu_: a leader is doing I/O
  uint64_t next_position_;                 // guarded by mu_
  uint64_t generation_;                    // guarded by mu_: issue-2 overload's generation
  uint64_t last_enqueued_generation_ = 0;  // guarded by mu_
  WalWriterStats stats_;                   // guarded by mu_
  Status sticky_error_;                    // guarded by mu_
};

}  // namespace strata::wal
