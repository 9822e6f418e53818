// Write throttling by L0 backlog (DESIGN.md §7): when compaction falls behind the writers,
// puts are slowed and then stopped so that the number of uncompacted SSTables a query must
// search stays bounded, instead of growing without limit under sustained ingest.
//
// Backlog = published, uncompacted SSTables (L0) + frozen MemTables (sealed, flushing: each
// becomes an L0 SSTable shortly). Two thresholds (CompactionOptions):
//   - backlog >= slowdown_count: each write of n rows is admitted at a table-wide rate R rows/s
//     (a token bucket shared by all writers of the table: the write waits until the bucket
//     reaches it, n / R seconds after the previous admission). On entering the slowdown R is
//     the lower of (a) C * min(1/2, (stop_count - backlog) / backlog), C the compaction
//     throughput (rows compacted per second of compaction wall time, exponentially weighted
//     over compactions; initial_rate before any), so the MemTables left before the stop fill
//     no sooner than compaction clears the backlog, and (b) half the table's recent write rate
//     (rows/s over ~1 s windows, weighted). While slowed, R shrinks x0.8 whenever the backlog
//     grew, grows x1.25 whenever it shrank (up to C), and halves when a write reached the stop
//     (once per compaction); never below min_rate.
//     While a compaction runs (NoteCompactionStart .. NoteCompaction), the SSTables it took leave
//     L0 at its commit, so the rule above would slow every write for the whole compaction (it
//     starts at the trigger, which is the slowdown count by default: measured, a 300k-row HNSW
//     base held a 2,500 rows/s writer at 1,250 rows/s for 29 s, p99 20 s). Instead a write is
//     slowed only if the room left before the stop would fill before the compaction is
//     estimated to commit: room = (stop_count - backlog) MemTables' rows - the active
//     MemTable's rows; remaining = max(its rows / C - elapsed, its rows / C / 4); writes pass
//     freely while the recent write rate <= room / remaining, else at R = room / remaining
//     (never below min_rate). Without a measured C the rule above applies.
//   - backlog >= stop_count: writes wait until the backlog falls below it (a compaction
//     committed), up to the caller's deadline, then fail with Backpressure (HTTP 503,
//     retryable) naming the backlog and the flag.
// The pattern is RocksDB's level-0 slowdown / stop triggers (level0_slowdown_writes_trigger,
// level0_stop_writes_trigger, delayed_write_rate); the rate rule is our own.
// Writers call Admit with no lock held (a compaction commit needs the table lock exclusively,
// so a writer waiting here while holding it would deadlock the compaction it waits for).
// Thread-safety: all methods may be called from many threads at once (internally locked by
// mu_, which guards every member below it).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

#include "common/status.h"

namespace strata::base {

/// What a table's shard has waiting for compaction.
struct L0Backlog {
  int64_t sstables = 0;       // published, uncompacted SSTables
  int64_t frozen = 0;         // frozen MemTables (sealed, not yet published)
  int64_t active_rows = 0;    // rows in the active MemTable
  int64_t memtable_rows = 0;  // rows at which a MemTable seals (estimate; 0 = unknown)
  int64_t total() const { return sstables + frozen; }
};

/// Cumulative counters (metrics: strata_l0_slowdowns_total, strata_l0_stops_total, ...).
struct WriteThrottleStats {
  uint64_t slowed_writes = 0;    // writes admitted through the rate limit
  uint64_t stopped_writes = 0;   // writes that waited at the stop threshold
  uint64_t stop_timeouts = 0;    // of those, refused with Backpressure at their deadline
  uint64_t inflight_passed = 0;  // writes at the slowdown let through while a compaction ran
  double delay_seconds_total = 0;
  double rate_rows_per_second = 0;  // the current slowdown rate R
};

class WriteThrottle {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    int64_t slowdown_count = 4;   // 0 = never slow down
    int64_t stop_count = 5;       // 0 = never stop
    double initial_rate = 20000;  // rows/s before a compaction was measured
    double min_rate = 500;        // R never goes below this (rows/s)
  };
  explicit WriteThrottle(Options options) : options_(options) {}

  /// Waits as the thresholds say before a write of `rows` rows; `backlog` reads the shard's
  /// current backlog (called without any lock of this class held; it may take the table's
  /// lock shared). OK when the write may proceed. Errors: Backpressure when the backlog is
  /// still at stop_count at `deadline` (nothing was written).
  Status Admit(int64_t rows, const std::function<L0Backlog()>& backlog,
               std::chrono::steady_clock::time_point deadline);

  /// Records a finished compaction (rows taken, wall seconds) for the rate, and wakes writers
  /// stopped at the threshold.
  void NoteCompaction(int64_t rows, double seconds);
  /// A compaction took `sstables` SSTables of `rows` rows and runs until NoteCompaction: while
  /// it runs, writes are slowed only as far as needed to reach its commit before the stop.
  void NoteCompactionStart(int64_t sstables, int64_t rows);
  /// While true (a base index build holds the compaction work lock), writes are neither
  /// slowed nor stopped, and writers already stopped are released: no compaction can drain
  /// the backlog meanwhile, and an index build over a large base takes minutes (90 s of 503s
  /// at 570k rows otherwise). L0 grows for the build's duration instead.
  void SetCompactionBlocked(bool blocked);

  /// How many SSTables a background compaction should take at most now, so that writes keep
  /// their latency while it runs: 0 (no limit) when no write was admitted in the last 2 s or
  /// no compaction throughput C is measured yet; else max(1, floor(C / (2 W))), W the recent
  /// write rate. Why: a compaction of k SSTables of M rows runs k M / C seconds, while the
  /// room before the stop (one MemTable at the default trigger 4 / stop 5) fills in M / W; so
  /// writes pass the in-flight rule only while k <= C / W (the factor 2 leaves room for the
  /// active MemTable's rows and the estimate's error). Measured with k = every waiting SSTable
  /// (4 at the trigger): put p99 during compaction 2.28x idle at W = 0.2 C, writes stopped at
  /// 0.5 C (docs/COMPACTION.md). Idle and compact/ compactions take everything.
  int64_t CompactionUnit() const;

  WriteThrottleStats stats() const;

 private:
  /// R when a slowdown starts (see the file comment).
  double EntryRateLocked(int64_t backlog) const;
  /// While a compaction runs and C is measured: the rate writes may keep so that the stop is
  /// not reached before its estimated commit (see the file comment); nullopt otherwise.
  std::optional<double> InflightRateLocked(const L0Backlog& b, Clock::time_point now) const;
  /// Counts an admitted write in the write-rate window.
  void CountWriteLocked(int64_t rows, Clock::time_point now);

  const Options options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;      // with mu_: NoteCompaction / SetCompactionBlocked
  double compaction_rate_ = 0;      // rows/s, EWMA; 0 = none measured
  double write_rate_ = 0;           // rows/s admitted, EWMA over ~1 s windows; 0 = none yet
  Clock::time_point last_write_{};  // the last admitted (or counted) write
  std::chrono::steady_clock::time_point window_start_{};
  int64_t window_rows_ = 0;
  bool slowed_ = false;              // the last admission was in the slowdown
  double rate_ = 0;                  // R while slowed_
  int64_t last_backlog_ = 0;         // backlog at the last slowed admission
  bool stop_halved_ = false;         // R was halved by a stop since the last compaction
  bool blocked_ = false;             // SetCompactionBlocked
  int64_t compacting_sstables_ = 0;  // the running compaction's SSTables (0 = none runs)
  int64_t compacting_rows_ = 0;      // and rows
  Clock::time_point compaction_start_{};
  std::chrono::steady_clock::time_point next_free_{};  // token bucket: next admission time
  uint64_t wakeups_ = 0;  // bumped by NoteCompaction / SetCompactionBlocked
  WriteThrottleStats stats_;
};

}  // namespace strata::base
