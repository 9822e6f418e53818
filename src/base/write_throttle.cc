#include "base/write_throttle.h"

#include <algorithm>
#include <string>
#include <thread>

namespace strata::base {

using Clock = WriteThrottle::Clock;

double WriteThrottle::EntryRateLocked(int64_t backlog) const {
  // Writes at R fill the room left before the stop (stop - backlog MemTables) no sooner than
  // compaction at C clears the backlog: R = C * (stop - backlog) / backlog, at most C / 2.
  double share = 0.5;
  if (options_.stop_count > 0 && backlog > 0) {
    share =
        std::min(share, static_cast<double>(std::max<int64_t>(options_.stop_count - backlog, 1)) /
                            static_cast<double>(backlog));
  }
  double r = compaction_rate_ > 0 ? compaction_rate_ * share : options_.initial_rate;
  if (write_rate_ > 0) r = std::min(r, write_rate_ / 2);
  return std::max(r, options_.min_rate);
}

std::optional<double> WriteThrottle::InflightRateLocked(const L0Backlog& b,
                                                        Clock::time_point now) const {
  if (compacting_sstables_ <= 0 || compaction_rate_ <= 0 || options_.stop_count <= 0) {
    return std::nullopt;
  }
  const double estimate = static_cast<double>(compacting_rows_) / compaction_rate_;
  const double elapsed = std::chrono::duration<double>(now - compaction_start_).count();
  // Past its estimate the commit is near but not known: assume a quarter of it remains.
  const double remaining = std::max({estimate - elapsed, estimate / 4, 0.05});
  const double per_memtable = b.memtable_rows > 0 ? static_cast<double>(b.memtable_rows)
                                                  : static_cast<double>(compacting_rows_) /
                                                        static_cast<double>(compacting_sstables_);
  const double room =
      std::max(0.0, static_cast<double>(options_.stop_count - b.total()) * per_memtable -
                        static_cast<double>(b.active_rows));
  return room / remaining;
}

void WriteThrottle::CountWriteLocked(int64_t rows, Clock::time_point now) {
  if (window_start_ == Clock::time_point{}) window_start_ = now;
  last_write_ = now;
  window_rows_ += rows;
  const double elapsed = std::chrono::duration<double>(now - window_start_).count();
  if (elapsed >= 1.0) {
    const double w = static_cast<double>(window_rows_) / elapsed;
    write_rate_ = write_rate_ > 0 ? 0.5 * write_rate_ + 0.5 * w : w;
    window_start_ = now;
    window_rows_ = 0;
  }
}

Status WriteThrottle::Admit(int64_t rows, const std::function<L0Backlog()>& backlog,
                            Clock::time_point deadline) {
  if (options_.slowdown_count <= 0 && options_.stop_count <= 0) return Status::OK();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (blocked_) {
      CountWriteLocked(rows, Clock::now());
      slowed_ = false;
      return Status::OK();
    }
  }
  L0Backlog b = backlog();
  if (options_.stop_count > 0 && b.total() >= options_.stop_count) {
    std::unique_lock<std::mutex> lock(mu_);
    ++stats_.stopped_writes;
    // The slowdown was not slow enough for this compaction pace (once per compaction).
    if (slowed_ && !stop_halved_) {
      rate_ = std::max(options_.min_rate, rate_ / 2);
      stop_halved_ = true;
    }
    const auto t0 = Clock::now();
    while (b.total() >= options_.stop_count && !blocked_) {
      const auto now = Clock::now();
      if (now >= deadline) {
        ++stats_.stop_timeouts;
        stats_.delay_seconds_total += std::chrono::duration<double>(now - t0).count();
        return Status::Backpressure("writes stopped: " + std::to_string(b.sstables) +
                                    " SSTables and " + std::to_string(b.frozen) +
                                    " frozen MemTables wait for compaction (stop at " +
                                    std::to_string(options_.stop_count) +
                                    ", --compaction-l0-stop); retry once compaction catches up");
      }
      // Compaction commits call NoteCompaction; a flush that publishes does not, hence the
      // bounded wait before reading the backlog again.
      const uint64_t seen = wakeups_;
      cv_.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(50)),
                     [&] { return wakeups_ != seen; });
      lock.unlock();
      b = backlog();
      lock.lock();
    }
    stats_.delay_seconds_total += std::chrono::duration<double>(Clock::now() - t0).count();
    if (blocked_) return Status::OK();  // an index build started: released (see header)
  }
  Clock::time_point at;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = Clock::now();
    CountWriteLocked(rows, now);
    if (options_.slowdown_count <= 0 || b.total() < options_.slowdown_count) {
      slowed_ = false;
      return Status::OK();
    }
    if (const std::optional<double> inflight = InflightRateLocked(b, now)) {
      // A compaction runs: slow only as far as its commit before the stop needs.
      if (write_rate_ <= *inflight) {
        slowed_ = false;
        ++stats_.inflight_passed;
        return Status::OK();
      }
      slowed_ = true;
      rate_ = std::max(options_.min_rate, *inflight);
    } else if (!slowed_) {  // entering the slowdown
      slowed_ = true;
      rate_ = EntryRateLocked(b.total());
    } else if (b.total() > last_backlog_) {  // still growing: slower
      rate_ = std::max(options_.min_rate, rate_ * 0.8);
    } else if (b.total() < last_backlog_) {  // draining: a little faster
      rate_ =
          std::min(rate_ * 1.25, compaction_rate_ > 0 ? compaction_rate_ : options_.initial_rate);
    }
    last_backlog_ = b.total();
    const double rate = rate_;
    at = std::max(now, next_free_);
    next_free_ = at + std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(static_cast<double>(rows) / rate));
    ++stats_.slowed_writes;
    stats_.delay_seconds_total += std::chrono::duration<double>(at - now).count();
  }
  // Never past the caller's deadline: the slowdown shapes the rate; only the stop refuses.
  std::this_thread::sleep_until(std::min(at, deadline));
  return Status::OK();
}

void WriteThrottle::NoteCompaction(int64_t rows, double seconds) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (rows > 0 && seconds > 0) {
      const double r = static_cast<double>(rows) / seconds;
      compaction_rate_ = compaction_rate_ > 0 ? 0.5 * compaction_rate_ + 0.5 * r : r;
    }
    stop_halved_ = false;
    compacting_sstables_ = 0;
    compacting_rows_ = 0;
    ++wakeups_;
  }
  cv_.notify_all();
}

void WriteThrottle::NoteCompactionStart(int64_t sstables, int64_t rows) {
  std::lock_guard<std::mutex> lock(mu_);
  compacting_sstables_ = sstables;
  compacting_rows_ = rows;
  compaction_start_ = Clock::now();
}

void WriteThrottle::SetCompactionBlocked(bool blocked) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    blocked_ = blocked;
    ++wakeups_;
  }
  cv_.notify_all();
}

int64_t WriteThrottle::CompactionUnit() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (compaction_rate_ <= 0 || write_rate_ <= 0 || last_write_ == Clock::time_point{} ||
      Clock::now() - last_write_ > std::chrono::seconds(2)) {
    return 0;
  }
  const double k = compaction_rate_ / (2 * write_rate_);
  // Large enough to mean "no limit" (a compaction takes at most max_rows_per_compaction anyway).
  if (k >= 1e6) return 0;
  return std::max<int64_t>(1, static_cast<int64_t>(k));
}

WriteThrottleStats WriteThrottle::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  WriteThrottleStats s = stats_;
  s.rate_rows_per_second = slowed_ ? rate_ : EntryRateLocked(options_.slowdown_count);
  return s;
}

}  // namespace strata::base
