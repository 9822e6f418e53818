// FairRwLock: a reader/writer lock fair to both sides, for the vector indexes (HnswIndex,
// IvfIndex). Thread-safety: it is the synchronisation.
#pragma once

#include <condition_variable>
#include <mutex>

namespace strata::index {

// A reader/writer lock that alternates between the two sides when both wait, so neither a
// stream of searches nor a stream of inserts starves the other (glibc's default rwlock, under
// std::shared_mutex, prefers readers). Readers share; a writer is alone.
class FairRwLock {
 public:
  void lock_shared() {
    std::unique_lock<std::mutex> l(mu_);
    ++waiting_readers_;
    cv_.wait(l, [&] { return !writer_ && (waiting_writers_ == 0 || turn_ == kReaders); });
    --waiting_readers_;
    ++readers_;
    turn_ = kWriters;  // a writer that arrives now goes next
  }
  void unlock_shared() {
    std::lock_guard<std::mutex> l(mu_);
    if (--readers_ == 0) cv_.notify_all();
  }
  void lock() {
    std::unique_lock<std::mutex> l(mu_);
    ++waiting_writers_;
    cv_.wait(l, [&] {
      return !writer_ && readers_ == 0 && (waiting_readers_ == 0 || turn_ == kWriters);
    });
    --waiting_writers_;
    writer_ = true;
    turn_ = kReaders;  // readers that arrive now go next
  }
  void unlock() {
    std::lock_guard<std::mutex> l(mu_);
    writer_ = false;
    cv_.notify_all();
  }

 private:
  enum Turn { kReaders, kWriters };
  std::mutex mu_;
  std::condition_variable cv_;
  int readers_ = 0;          // guarded by mu_
  int waiting_readers_ = 0;  // guarded by mu_
  int waiting_writers_ = 0;  // guarded by mu_
  bool writer_ = false;      // guarded by mu_
  Turn turn_ = kReaders;     // guarded by mu_
};

}  // namespace strata::index
