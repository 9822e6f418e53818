// Crash test: a forked child inserts rows through the catalog and reports each id after
// Insert returned (= acknowledged) on a pipe; the parent SIGKILLs it at a random moment,
// reopens the data directory and checks every acknowledged row is present exactly once.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <thread>

#include "../io/storage_test_util.h"
#include "table/catalog.h"

namespace strata::table {
namespace {

using strata::testing::Ids;
using strata::testing::MakeBatch;
using strata::testing::TempDir;
using strata::testing::TestSchema;

[[noreturn]] void ChildInsertLoop(const std::string& root, int fd, int64_t next_id) {
  auto catalog = Catalog::Open(root);
  if (!catalog.ok()) _exit(2);
  auto table =
      (*catalog)->CreateTable("default", "crash t", TestSchema(), {}, CreateMode::kExistOk);
  if (!table.ok()) _exit(3);
  for (int64_t i = 0;; ++i) {
    int64_t n = 1 + (i % 4);
    if (!(*table)->Insert({MakeBatch(next_id, n)}).ok()) _exit(4);
    int64_t last = next_id + n - 1;
    if (::write(fd, &last, sizeof(last)) != sizeof(last)) _exit(5);
    next_id += n;
  }
}

TEST(CrashTest, AcknowledgedRowsSurviveSigkill) {
  TempDir dir;
  std::mt19937 rng(12345);
  int64_t next_id = 0;
  constexpr int kCycles = 8;
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      ChildInsertLoop(dir.path(), fds[1], next_id);
    }
    ::close(fds[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 80));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited on its own with " << WEXITSTATUS(status);
    int64_t acked = next_id - 1, v;
    while (::read(fds[0], &v, sizeof(v)) == sizeof(v)) acked = v;
    ::close(fds[0]);

    auto catalog = Catalog::Open(dir.path());
    ASSERT_TRUE(catalog.ok());
    auto table = (*catalog)->GetTable("default", "crash t");
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    auto ids = Ids((*table)->Snapshot().batches);
    // Single writer thread: the rows present are exactly 0..max with no duplicates, and max is
    // at least the last acknowledged id (an unacknowledged tail may also have landed).
    std::vector<int64_t> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(sorted, ids);
    ASSERT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
    ASSERT_GE(static_cast<int64_t>(ids.size()), acked + 1) << "cycle " << cycle;
    for (size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(ids[i], static_cast<int64_t>(i));
    next_id = static_cast<int64_t>(ids.size());
  }
  EXPECT_GT(next_id, kCycles);  // the children did make progress
}

}  // namespace
}  // namespace strata::table
