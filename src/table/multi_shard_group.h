// Group commit of a table's multi-shard writes (issue 16; docs/SHARDING.md "All-or-nothing
// multi-shard writes"): the writes that wait while one runs are merged into ONE transaction
// (one part per shard holding all their rows, one commit record), as the WAL group-commits
// single puts. A table runs one multi-shard transaction at a time (WriteAllOrNothing's
// AwaitPublishable rule), so without merging, four clients writing 1,000-row batches across
// four buckets ran one batch at a time: 1.02x the unsharded table's ingest on 2 cores, against
// 1.41x for overlapping transactions at the storage level (docs/BENCHMARKS.md).
//
// Protocol (leader/followers, as LevelDB's and RocksDB's write groups): a write queues itself;
// the first queued write, once no group runs, leads: it takes the queued writes that can join
// (below), merges their parts shard by shard in queue order, runs the merged transaction, and
// hands its outcome to every member. Each member is acknowledged only when the merged
// transaction committed, and is in no shard when it did not, so each write stays all or
// nothing: it is the merged transaction's.
// Order: within a shard's part, Apply writes storage rows (replacements, tombstones) before new
// (user) rows, and a later row of a key wins. Members merged in queue order therefore keep the
// order of a serial run unless a member with storage rows for a shard would follow one with
// user rows for it; such a write is left for the next group (it does not join). So the merged
// transaction equals running its members one after another in queue order.
// Limits: a group takes at most kMaxGroupWrites writes and, past its first write, at most
// kMaxGroupRows rows and kMaxGroupBytes bytes of buffers (one WAL entry per shard holds them). A
// write not taken into a group by its deadline leaves the queue with Backpressure; a taken one
// waits for its group (bounded by WriteAllOrNothing's own timeouts). Validation is each write's own
// (the caller checks its parts, ShardWriter::CheckApply, before queueing), so one client's bad rows
// never fail another's write. Thread-safety: Write may be called from many threads at once; `mu_`
// guards the queue and `running_`.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "table/multi_shard_write.h"

namespace strata::table {

class MultiShardWriteGroup {
 public:
  static constexpr size_t kMaxGroupWrites = 64;
  static constexpr int64_t kMaxGroupRows = 1 << 16;
  static constexpr int64_t kMaxGroupBytes = 64ll << 20;

  /// Runs one merged transaction (WriteAllOrNothing); `parts` has one entry per shard, in the
  /// order of the parts given to Write.
  using Run = std::function<Status(std::vector<ShardWrite> parts)>;

  /// Writes `parts` (one per shard, same order and writers for every caller of one group
  /// object; rows already validated) in a group (see the file comment). `group_size` (may be
  /// null) receives how many writes the group held. Errors: Backpressure "<what> waited
  /// longer than the write stall timeout (<timeout> ms) ..." when the write was not taken
  /// into a group within `timeout` (nothing written); else the group's Run error.
  Status Write(std::vector<ShardWrite> parts, const Run& run, const std::string& what,
               std::chrono::milliseconds timeout, int64_t* group_size = nullptr);

 private:
  struct Pending {
    std::vector<ShardWrite> parts;
    int64_t rows = 0;
    int64_t bytes = 0;   // buffer bytes of its rows
    bool taken = false;  // in a running group: waits for it whatever its deadline
    bool done = false;
    Status status;
    int64_t group_size = 0;
  };

  std::mutex mu_;
  std::condition_variable cv_;  // with mu_: a group ended or the queue changed
  std::deque<Pending*> queue_;  // guarded by mu_: writes not taken yet, in arrival order
  bool running_ = false;        // guarded by mu_: a leader runs a group
};

}  // namespace strata::table
