// Automatic recovery of a poisoned shard writer (issue 19; DESIGN.md §4 "Storage failures").
//
// A shard writer is poisoned by a storage error it cannot retry away: a failed WAL entry, or a
// flush that failed after its retries (shard/shard_writer.h). Reads keep working from what it
// holds; writes fail with WriterPoisoned (503). Before issue 19 only a restart cleared it.
// Now the catalog's supervisor (table/supervisor.h) notices the poison and the table reopens
// the shard by the ordinary recovery path, with exponential backoff:
//   1. probe: put and remove a 1 MiB object in the shard's folder (is the store taking
//      writes again? a full disk, a read-only remount, an object store returning 5xx);
//   2. stop writes to the table (its write lock); check the shard is still this writer's
//      (ShardWriter::CheckOwner: when another server claimed it meanwhile, the writer becomes
//      FENCED and is not reopened); stop the old base's maintenance thread;
//   3. open the base from the table manifest and a new ShardWriter on the same shard: a new
//      writer epoch (fencing the old writer), replay of the WAL after the manifest's
//      replay_after_wal_entry_position, a fence sentinel at the WAL tip;
//   4. swap them in under the table lock; close the old writer.
// Acknowledged rows are never lost or duplicated: every acknowledged put is a durable WAL
// entry, replayed exactly once by the new writer (the same path as a restart); the rows of the
// put that failed were never acknowledged (the client got an error), and are present after
// recovery only if their WAL entry did land despite the error (an unknown outcome, as after
// any storage error).
// Backoff: the first attempt when the poison is first seen, then after initial_backoff,
// doubling up to max_backoff (250 ms .. 8 s by default), so a store that recovers is written
// again within max_backoff + one reopen. A writer poisoned again within kStablePeriod (60 s)
// of a reopen keeps its backoff (no reopen-fail cycle on a disk that takes the probe but not
// the next write). A fenced writer is never reopened (another writer owns the shard).
// Thread-safety: RecoveryBackoff is internally locked (`mu_` guards every field).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "common/status.h"
#include "table/table.h"

namespace strata::table {

/// Bytes of the probe write (step 1).
inline constexpr size_t kProbeBytes = 1 << 20;
/// A reopen that held this long resets the backoff.
inline constexpr std::chrono::seconds kStablePeriod{60};

struct RecoveryOptions {
  bool enabled = true;                             // false: a poisoned writer stays poisoned
  std::chrono::milliseconds poll{200};             // the supervisor's tick
  std::chrono::milliseconds initial_backoff{250};  // wait after the first failed attempt
  std::chrono::milliseconds max_backoff{8000};     // cap of the doubling backoff
  /// How often an open shard writer checks that it still owns its shard (one read of the
  /// shard's newest manifest): another server that claimed the shard fences this one within
  /// this time, even while no write arrives (409 `fenced`, /readyz 503). 0: only a write or a
  /// compaction finds out.
  std::chrono::milliseconds owner_check{5000};
};

/// The backoff and counters of one table's writer recovery.
class RecoveryBackoff {
 public:
  using Clock = std::chrono::steady_clock;

  /// Whether an attempt is due at `now` for a poisoned writer. The first call after a healthy
  /// period returns true (and returns `first` = true so the caller logs the poison once).
  bool Due(Clock::time_point now, bool* first, const RecoveryOptions& options);
  /// The writer is healthy (or fenced: not ours to recover): the next poison starts afresh.
  void Healthy();
  /// An attempt failed with `error`: the next one is due after the current backoff
  /// (options.initial_backoff at first), which doubles up to options.max_backoff.
  void Failed(const Status& error, Clock::time_point now, const RecoveryOptions& options);
  /// An attempt succeeded; returns the milliseconds since the poison was first seen.
  int64_t Succeeded(Clock::time_point now);
  WriterRecoveryInfo info() const;

 private:
  mutable std::mutex mu_;
  bool poisoned_ = false;                 // guarded by mu_: a poison is being handled
  Clock::time_point poisoned_at_;         // guarded by mu_
  Clock::time_point next_attempt_;        // guarded by mu_
  Clock::time_point recovered_at_;        // guarded by mu_: newest successful reopen
  std::chrono::milliseconds backoff_{0};  // guarded by mu_
  WriterRecoveryInfo info_;               // guarded by mu_
};

}  // namespace strata::table
