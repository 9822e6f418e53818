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
#include <map>
#include <random>
#include <set>
#include <thread>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "arrow/builder.h"
#include "table/catalog.h"
#include "table/primary_key.h"

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

// Compaction (DESIGN.md §7) as often as it can run: the kills land inside compactions too,
// and inside base rewrites (a low trigger: the upsert test's dead rows reach it every few
// compactions).
base::CompactionOptions CrashCompaction() {
  base::CompactionOptions o;
  o.l0_trigger_count = 2;
  o.poll_interval = std::chrono::milliseconds(5);
  o.min_checkpoint_rows = 64;
  o.rewrite_min_dead_rows = 64;
  o.rewrite_dead_fraction = 0.5;
  return o;
}

[[noreturn]] void ChildInsertLoop(const std::string& root, int fd, int64_t first_id) {
  auto catalog = Catalog::Open(root, CrashOptions(), CrashCompaction());
  if (!catalog.ok()) _exit(2);
  auto table =
      (*catalog)->CreateTable("default", "crash t", TestSchema(), {}, CreateMode::kExistOk);
  if (!table.ok()) {
    std::fprintf(stderr, "child: open: %s\n", table.status().ToString().c_str());
    _exit(3);
  }
  std::atomic<int64_t> next{first_id};
  auto loop = [&](int t) {
    for (int64_t i = 0;; ++i) {
      const int64_t n = 1 + ((i + t) % 4);
      const int64_t first = next.fetch_add(n);
      if (auto r = (*table)->Insert({MakeBatch(first, n)}); !r.ok()) {
        std::fprintf(stderr, "child: insert: %s\n", r.status().ToString().c_str());
        _exit(4);
      }
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
  int64_t base_rows = 0;
  uint64_t compactions = 0;
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
    if (::read(fds[0], &v, sizeof(v)) != static_cast<ssize_t>(sizeof(v))) {
      int status = 0;
      ::waitpid(pid, &status, 0);
      FAIL() << "cycle " << cycle << ": the child exited before its first acknowledgement (exit "
             << (WIFEXITED(status) ? WEXITSTATUS(status) : -1) << ")";
    }
    acked.insert(v);
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 120));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited on its own with " << WEXITSTATUS(status);
    while (::read(fds[0], &v, sizeof(v)) == sizeof(v)) acked.insert(v);
    ::close(fds[0]);
    total_acked += static_cast<int64_t>(acked.size());

    auto catalog = Catalog::Open(dir.path(), CrashOptions(), CrashCompaction());
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
    base_rows = (*table)->DescribeBase() ? (*table)->DescribeBase()->rows : 0;
    compactions = (*table)->DescribeBase() ? (*table)->DescribeBase()->version : 0;
  }
  EXPECT_GT(total_acked, cycles);  // the children did make progress
  // ...and flushes (and compactions) happened between kills.
  EXPECT_TRUE(sstables > 0 || base_rows > 0);
  std::printf(
      "[figures] %d SIGKILL cycles, %lld acknowledged rows, %zu SSTables, %lld base rows after "
      "%llu compactions\n",
      cycles, static_cast<long long>(total_acked), sstables, static_cast<long long>(base_rows),
      static_cast<unsigned long long>(compactions));
}

// Upserts and deletes of 200 keys in a primary-key table: liveness marks, supersedes.bin and
// the deletion vectors race with the kill. After each restart every key holds at most one row,
// at least as new as its newest acknowledged upsert, and a key whose newest acknowledged
// operation is a delete is absent unless a newer (unacknowledged) upsert landed.
constexpr int64_t kCrashKeys = 200;

arrow::SchemaPtr KeyedSchema() {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("version", arrow::int64(), false)});
  return DeclarePrimaryKey(s, {"id"}).value();
}

// One acknowledged operation on the pipe: key, version, 1 = delete.
struct Acked {
  int64_t key = 0, version = 0, deleted = 0;
};

// The child's next operation: (key, delete?). The parent replays it to know the operation in
// flight at the kill.
std::pair<int64_t, bool> NextOp(std::mt19937& rng) {
  const int64_t key = static_cast<int64_t>(rng() % kCrashKeys);
  const bool del = rng() % 5 == 0;
  return {key, del};
}

[[noreturn]] void ChildUpsertLoop(const std::string& root, int fd, int64_t first_version) {
  auto catalog = Catalog::Open(root, CrashOptions(), CrashCompaction());
  if (!catalog.ok()) _exit(2);
  auto table = (*catalog)->CreateTable("default", "keyed", KeyedSchema(), {}, CreateMode::kExistOk);
  if (!table.ok()) _exit(3);
  std::mt19937 rng(static_cast<uint32_t>(first_version));
  for (int64_t version = first_version;; ++version) {
    const auto [key, del] = NextOp(rng);
    auto batch = std::make_shared<arrow::RecordBatch>(
        KeyedSchema(), 1,
        std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array({key}),
                                         arrow::MakeInt64Array({version})});
    const Status st = (del ? (*table)->Delete({batch}) : (*table)->Insert({batch})).status();
    if (!st.ok()) {
      std::fprintf(stderr, "child: %s\n", st.ToString().c_str());
      _exit(4);
    }
    const Acked a{key, version, del ? 1 : 0};
    if (::write(fd, &a, sizeof(a)) != sizeof(a)) _exit(5);
  }
}

TEST(CrashTest, UpsertsAndDeletesSurviveSigkill) {
  TempDir dir;
  std::mt19937 rng(777);
  int64_t next_version = 1;
  std::map<int64_t, Acked> newest;  // per key: the newest acknowledged operation, all cycles
  int64_t total_acked = 0;
  int64_t base_rows = 0, max_base_rows = 0;
  const int cycles = std::max(10, Cycles() / 2);
  for (int cycle = 0; cycle < cycles; ++cycle) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const int64_t cycle_first = next_version;
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      ChildUpsertLoop(dir.path(), fds[1], cycle_first);
    }
    ::close(fds[1]);
    Acked a;
    ASSERT_EQ(::read(fds[0], &a, sizeof(a)), static_cast<ssize_t>(sizeof(a))) << cycle;
    newest[a.key] = a;
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 150));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited on its own with " << WEXITSTATUS(status);
    int64_t acked = 1;
    while (::read(fds[0], &a, sizeof(a)) == sizeof(a)) {
      newest[a.key] = a;
      ++acked;
    }
    ::close(fds[0]);
    total_acked += acked;
    // The operation in flight at the kill (it may or may not have landed).
    std::mt19937 replay(static_cast<uint32_t>(cycle_first));
    std::pair<int64_t, bool> in_flight;
    for (int64_t i = 0; i <= acked; ++i) in_flight = NextOp(replay);

    auto catalog = Catalog::Open(dir.path(), CrashOptions(), CrashCompaction());
    ASSERT_TRUE(catalog.ok());
    auto table = (*catalog)->GetTable("default", "keyed");
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    std::map<int64_t, int64_t> live;  // key -> version
    int64_t rows = 0;
    for (const auto& b : strata::testing::Live((*table)->Snapshot())) {
      arrow::Array id = b->column(0), version = b->column(1);
      for (int64_t i = 0; i < b->num_rows(); ++i, ++rows) {
        ASSERT_TRUE(live.emplace(id.Value<int64_t>(i), version.Value<int64_t>(i)).second)
            << "key " << id.Value<int64_t>(i) << " twice after cycle " << cycle;
      }
    }
    EXPECT_EQ((*table)->Snapshot().num_rows, rows) << cycle;
    for (const auto& [key, op] : newest) {
      auto it = live.find(key);
      if (op.deleted != 0) {
        EXPECT_TRUE(it == live.end() || it->second > op.version)
            << "key " << key << " deleted at version " << op.version << " is back with version "
            << it->second << " after cycle " << cycle;
      } else {
        if (it == live.end() && in_flight.first == key && in_flight.second) continue;
        ASSERT_TRUE(it != live.end())
            << "key " << key << " upserted at version " << op.version << " lost, cycle " << cycle;
        EXPECT_GE(it->second, op.version) << "key " << key << " went back, cycle " << cycle;
      }
    }
    // The operation in flight at the kill, when it landed, is the key's newest from now on
    // (later cycles must see it).
    const int64_t in_flight_version = cycle_first + acked;
    auto landed = live.find(in_flight.first);
    if (in_flight.second && landed == live.end()) {
      newest[in_flight.first] = Acked{in_flight.first, in_flight_version, 1};
    } else if (!in_flight.second && landed != live.end() && landed->second == in_flight_version) {
      newest[in_flight.first] = Acked{in_flight.first, in_flight_version, 0};
    }
    // An unacknowledged write that landed is as new as any later one: start far above it.
    for (const auto& [key, version] : live) next_version = std::max(next_version, version + 1);
    for (const auto& [key, op] : newest) next_version = std::max(next_version, op.version + 1);
    next_version += 1000000;
    if (auto d = (*table)->DescribeBase()) {
      base_rows = d->rows;
      max_base_rows = std::max(max_base_rows, d->rows);
    }
  }
  EXPECT_GT(total_acked, cycles);
  // Base rewrites (in the killed children) keep the base near the 200 keys.
  std::printf(
      "[figures] %d SIGKILL cycles of upserts and deletes, %lld acknowledged; base rows at the "
      "end %lld, at most %lld\n",
      cycles, static_cast<long long>(total_acked), static_cast<long long>(base_rows),
      static_cast<long long>(max_base_rows));
}

}  // namespace
}  // namespace strata::table
