// A paced (open-loop) writer for benchmarks: puts at a fixed offered rate, so put latency is
// measured at a load the table can sustain, as a user's latency target is set, rather than
// at full speed, where a writer outrunning compaction is slowed by the L0 throttle and that
// delay becomes its latency (issue 21's "put p99 during compaction <= 2x idle").
//
// Schedule: put i is due at t0 + i * batch_rows / rows_per_second. A put starts when due, or at
// once when the previous one ran late; its latency counts from its due time, not its start,
// so a slow put also charges the puts queued behind it (no coordinated omission: Gil Tene,
// "How NOT to measure latency", and wrk2's constant-throughput mode, whose rule this is).
// Each put is classed "during compaction" when `compacting()` was true at its due time, its
// start or its end.
// Thread-safety: runs on the calling thread; `put` and `compacting` are called from it only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace strata::bench {

/// The p-quantile (0..1, nearest rank) of latencies `v` (0 when empty).
inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

struct PacedResult {
  std::vector<double> idle_ms;    // latencies of puts that overlapped no compaction
  std::vector<double> during_ms;  // latencies of puts that overlapped a compaction
  int64_t late = 0;               // puts that started after their due time
  double seconds = 0;             // wall time of the run
};

/// Calls put(i) (i = 0, 1, ...; each writes batch_rows rows; returns false to stop the run)
/// at rows_per_second for `seconds`, then on while more() is true, up to `max_seconds` in all
/// (when above `seconds`). rows_per_second > 0, batch_rows > 0.
template <class PutFn, class CompactingFn, class MoreFn>
PacedResult PacedPuts(double rows_per_second, int64_t batch_rows, double seconds, PutFn put,
                      CompactingFn compacting, MoreFn more, double max_seconds) {
  using Clock = std::chrono::steady_clock;
  PacedResult r;
  const auto t0 = Clock::now();
  const auto period =
      std::chrono::duration<double>(static_cast<double>(batch_rows) / rows_per_second);
  const auto at = [t0](double s) {
    return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  const auto end = at(seconds), hard_end = at(std::max(seconds, max_seconds));
  for (int64_t i = 0;; ++i) {
    const auto due = t0 + std::chrono::duration_cast<Clock::duration>(period * i);
    if (due >= end && (due >= hard_end || !more())) break;
    bool during = compacting();
    if (Clock::now() < due) {
      std::this_thread::sleep_until(due);
      during = during || compacting();
    } else if (i > 0) {
      ++r.late;
    }
    if (!put(i)) break;
    during = during || compacting();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - due).count();
    (during ? r.during_ms : r.idle_ms).push_back(ms);
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

/// PacedPuts for exactly `seconds`.
template <class PutFn, class CompactingFn>
PacedResult PacedPuts(double rows_per_second, int64_t batch_rows, double seconds, PutFn put,
                      CompactingFn compacting) {
  return PacedPuts(
      rows_per_second, batch_rows, seconds, put, compacting, [] { return false; }, seconds);
}

}  // namespace strata::bench
