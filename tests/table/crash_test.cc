// Crash test (issue 3 test 3): a forked child inserts rows through the catalog from two
// threads, with small MemTables so seals and flushes happen all the time, and reports each id
// after Insert returned (= acknowledged) on a pipe; the parent SIGKILLs it at a random moment,
// reopens the data directory and checks every acknowledged row is present exactly once (and no
// row twice). STRATA_CRASH_CYCLES sets the number of cycles (default 50; `make crash` runs
// more).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <random>
#include <set>
#include <thread>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "table/catalog.h"

namespace strata::table {
namespace {

using strata::testing::Ids;
using strata::testing::MakeBatch;
using strata::testing::TempDir;
using strata::testing::TestSchema;

shard::ShardWriterOptions CrashOptions() {
  shard::ShardWriterOptions o;
  o.max_memtable_rows = 40;  // a seal every few puts: flushes race with the kill
  return o;
}

[[noreturn]] void ChildInsertLoop(const std::string& root, int fd, int64_t first_id) {
  auto catalog = Catalog::Open(root, CrashOptions());
  if (!catalog.ok()) _exit(2);
  auto table =
      (*catalog)->CreateTable("default", "crash t", TestSchema(), {}, CreateMode::kExistOk);
  if (!table.ok()) _exit(3);
  std::atomic<int64_t> next{first_id};
  auto loop = [&](int t) {
    for (int64_t i = 0;; ++i) {
      const int64_t n = 1 + ((i + t) % 4);
      const int64_t first = next.fetch_add(n);
      if (!(*table)->Insert({MakeBatch(first, n)}).ok()) _exit(4);
      for (int64_t id = first; id < first + n; ++id) {
        if (::write(fd, &id, sizeof(id)) != sizeof(id)) _exit(5);
      }
    }
  };
  std::thread other(loop, 1);
  loop(0);
  other.join();
  _exit(6);
}

int Cycles() {
  const char* env = std::getenv("STRATA_CRASH_CYCLES");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 50;
}

TEST(CrashTest, AcknowledgedRowsSurviveSigkill) {
  TempDir dir;
  std::mt19937 rng(12345);
  int64_t next_id = 0;
  int64_t total_acked = 0;
  const int cycles = Cycles();
  size_t sstables = 0;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      ChildInsertLoop(dir.path(), fds[1], next_id);
    }
    ::close(fds[1]);
    // Wait for the first acknowledgement (the child is up), then kill at a random moment.
    std::set<int64_t> acked;
    int64_t v;
    ASSERT_EQ(::read(fds[0], &v, sizeof(v)), static_cast<ssize_t>(sizeof(v))) << "cycle " << cycle;
    acked.insert(v);
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 120));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited on its own with " << WEXITSTATUS(status);
    while (::read(fds[0], &v, sizeof(v)) == sizeof(v)) acked.insert(v);
    ::close(fds[0]);
    total_acked += static_cast<int64_t>(acked.size());

    auto catalog = Catalog::Open(dir.path(), CrashOptions());
    ASSERT_TRUE(catalog.ok());
    auto table = (*catalog)->GetTable("default", "crash t");
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    auto ids = Ids(strata::testing::Live((*table)->Snapshot()));
    std::vector<int64_t> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end())
        << "a row is present twice after cycle " << cycle;
    for (int64_t id : acked) {
      ASSERT_TRUE(std::binary_search(sorted.begin(), sorted.end(), id))
          << "acknowledged id " << id << " lost in cycle " << cycle;
    }
    if (!sorted.empty()) next_id = std::max(next_id, sorted.back() + 1);
    next_id += 1000;  // unacknowledged ids of the killed child are never reused
    sstables = (*table)->DescribeShards().at(0).sstables.size();
  }
  EXPECT_GT(total_acked, cycles);  // the children did make progress
  EXPECT_GT(sstables, 0u);         // and flushes happened between kills
  std::printf("[figures] %d SIGKILL cycles, %lld acknowledged rows, %zu SSTables\n", cycles,
              static_cast<long long>(total_acked), sstables);
}

}  // namespace
}  // namespace strata::table
