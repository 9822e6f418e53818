// SIGKILL cycles for crash tests of tables (sharded_table_test, identity_sharding_test): a
// forked child inserts runs of consecutive ids from two threads, reporting each write through a
// pipe before it starts and once it is acknowledged; the parent kills the child at a random
// moment after its first acknowledgement and gets every write's newest record, to check that
// every acknowledged write survives and every write in flight is all or nothing.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "table/table.h"

namespace strata::testing {

/// One write of ids [first, first + n): acked 0 before it starts, 1 once acknowledged.
struct WriteRecord {
  int64_t first = 0, n = 0;
  int64_t acked = 0;
};

/// The child's loop (never returns): two threads insert `rows(first, n, thread)` for runs of
/// n = 2 + (i + thread) % span ids from `first_id` on, writing a WriteRecord to `fd` before
/// and after each insert. Exits 4 when an insert fails (after printing it), 5 when the pipe
/// breaks.
[[noreturn]] inline void RunWriterChild(
    table::Table& t, int fd, int64_t first_id, int64_t span,
    const std::function<arrow::RecordBatchPtr(int64_t first, int64_t n, int thread)>& rows) {
  std::atomic<int64_t> next{first_id};
  auto loop = [&](int thread) {
    for (int64_t i = 0;; ++i) {
      const int64_t n = 2 + (i + thread) % span;
      WriteRecord r{next.fetch_add(n), n, 0};
      if (::write(fd, &r, sizeof(r)) != sizeof(r)) _exit(5);
      if (auto w = t.Insert({rows(r.first, n, thread)}); !w.ok()) {
        std::fprintf(stderr, "child: insert: %s\n", w.status().ToString().c_str());
        _exit(4);
      }
      r.acked = 1;
      if (::write(fd, &r, sizeof(r)) != sizeof(r)) _exit(5);
    }
  };
  std::thread other(loop, 1);
  loop(0);
  other.join();
  _exit(6);
}

/// Forks `child(fd)` (which must not return: RunWriterChild), waits for its first
/// acknowledged write, sleeps [0, max_delay_ms) ms, SIGKILLs it and returns every write's
/// newest record by first id. On failure (no fork, the child never acknowledged a write or
/// exited on its own) returns an empty map and sets `*error`.
inline std::map<int64_t, WriteRecord> RunAndKill(const std::function<void(int fd)>& child,
                                                 std::mt19937& rng, int max_delay_ms,
                                                 std::string* error) {
  std::map<int64_t, WriteRecord> writes;
  int fds[2];
  if (::pipe(fds) != 0) {
    *error = "pipe failed";
    return {};
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    *error = "fork failed";
    return {};
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1]);
    _exit(7);
  }
  ::close(fds[1]);
  WriteRecord r;
  bool up = false;
  while (!up && ::read(fds[0], &r, sizeof(r)) == sizeof(r)) {
    writes[r.first] = r;
    up = r.acked == 1;
  }
  if (up) std::this_thread::sleep_for(std::chrono::milliseconds(rng() % max_delay_ms));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  while (::read(fds[0], &r, sizeof(r)) == sizeof(r)) writes[r.first] = r;
  ::close(fds[0]);
  if (!up) {
    *error = "the child never acknowledged a write";
    return {};
  }
  if (!WIFSIGNALED(status)) {
    *error = "the child exited on its own with " + std::to_string(WEXITSTATUS(status));
    return {};
  }
  return writes;
}

/// Counts of CheckWrites.
struct WriteCheck {
  int64_t acked = 0;      // acknowledged writes checked
  int64_t in_flight = 0;  // unacknowledged writes checked
  std::string error;      // the first violation; empty when every write held
};

/// Checks `writes` after a restart: `present(first, n)` counts the rows of write [first,
/// first + n) the table holds. An acknowledged write must hold all n, an unacknowledged one 0
/// or n (all or nothing).
inline WriteCheck CheckWrites(const std::map<int64_t, WriteRecord>& writes,
                              const std::function<int64_t(int64_t first, int64_t n)>& present) {
  WriteCheck out;
  for (const auto& [first, w] : writes) {
    const int64_t have = present(first, w.n);
    const std::string range =
        "[" + std::to_string(first) + ", " + std::to_string(first + w.n) + ")";
    if (w.acked == 1) {
      ++out.acked;
      if (have != w.n && out.error.empty()) {
        out.error = "acknowledged write " + range + " has " + std::to_string(have) + " rows";
      }
    } else {
      ++out.in_flight;
      if (have != 0 && have != w.n && out.error.empty()) {
        out.error = "unacknowledged write " + range + " is torn: " + std::to_string(have) + " rows";
      }
    }
  }
  return out;
}

}  // namespace strata::testing
