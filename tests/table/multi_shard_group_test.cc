// MultiShardWriteGroup (table/multi_shard_group.h): the multi-shard writes that wait while a
// transaction runs are merged into the next one, in queue order, shard by shard; a write whose
// storage rows would follow another's new rows in a shard waits for the next group; a write
// not taken by its deadline leaves with Backpressure and is in no group; a group's error is
// every member's. Run here is a recorder (no shard writers): the merged parts it receives are
// compared with the writes' rows.
#include "table/multi_shard_group.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "arrow/builder.h"

namespace strata::table {
namespace {

using namespace std::chrono_literals;

arrow::RecordBatchPtr Ids(std::vector<int64_t> ids) {
  std::vector<std::optional<int64_t>> v(ids.begin(), ids.end());
  auto schema = std::make_shared<arrow::Schema>(
      std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64(), false)});
  return std::make_shared<arrow::RecordBatch>(
      schema, static_cast<int64_t>(ids.size()),
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(v)});
}

std::vector<int64_t> IdsOf(const std::vector<arrow::RecordBatchPtr>& batches) {
  std::vector<int64_t> out;
  for (const auto& b : batches) {
    for (int64_t i = 0; i < b->num_rows(); ++i) out.push_back(b->column(0).Value<int64_t>(i));
  }
  return out;
}

// Two shards; user rows `a` in shard 0 and `b` in shard 1 (empty: none).
std::vector<ShardWrite> Parts(std::vector<int64_t> a, std::vector<int64_t> b,
                              bool storage = false) {
  std::vector<ShardWrite> p(2);
  auto put = [&](ShardWrite& w, std::vector<int64_t> ids) {
    if (ids.empty()) return;
    (storage ? w.storage_rows : w.user_rows).push_back(Ids(std::move(ids)));
  };
  put(p[0], std::move(a));
  put(p[1], std::move(b));
  return p;
}

// A Run that records the merged parts and blocks its first call until released.
struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  int calls = 0;
  std::vector<std::vector<ShardWrite>> runs;
  Status fail;
  MultiShardWriteGroup::Run Fn() {
    return [this](std::vector<ShardWrite> parts) {
      std::unique_lock<std::mutex> lock(mu);
      runs.push_back(parts);
      if (calls++ == 0) cv.wait(lock, [&] { return release; });
      return fail;
    };
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu);
      release = true;
    }
    cv.notify_all();
  }
  int Calls() {
    std::lock_guard<std::mutex> lock(mu);
    return calls;
  }
};

// Starts `n` threads running fn(i), one after another, each given time to queue its write
// before the next starts (so the queue order is 0, 1, ...).
std::vector<std::thread> StartInOrder(size_t n, const std::function<void(size_t)>& fn) {
  std::vector<std::thread> out;
  std::atomic<size_t> started{0};
  for (size_t i = 0; i < n; ++i) {
    out.emplace_back([fn, &started, i] {  // fn by value: the threads outlive the call
      started++;
      fn(i);
    });
    while (started.load() <= i) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(20ms);
  }
  return out;
}

TEST(MultiShardWriteGroup, WritesWaitingForATransactionRunAsOneInQueueOrder) {
  MultiShardWriteGroup g;
  Recorder rec;
  int64_t first_size = 0;
  std::thread leader(
      [&] { EXPECT_TRUE(g.Write(Parts({1}, {2}), rec.Fn(), "w", 60s, &first_size).ok()); });
  while (rec.Calls() == 0) std::this_thread::sleep_for(1ms);
  // Three writes queue while the first runs; they start one after another so the queue order
  // is known.
  std::vector<int64_t> sizes(3, 0);
  std::vector<std::thread> followers = StartInOrder(3, [&](size_t i) {
    const int64_t k = static_cast<int64_t>(i);
    EXPECT_TRUE(g.Write(Parts({10 + k}, {20 + k}), rec.Fn(), "w", 60s, &sizes[i]).ok());
  });
  rec.Release();
  leader.join();
  for (auto& t : followers) t.join();
  EXPECT_EQ(first_size, 1);
  EXPECT_EQ(sizes, (std::vector<int64_t>{3, 3, 3}));
  ASSERT_EQ(rec.runs.size(), 2u);
  ASSERT_EQ(rec.runs[1].size(), 2u);
  EXPECT_EQ(IdsOf(rec.runs[1][0].user_rows), (std::vector<int64_t>{10, 11, 12}));
  EXPECT_EQ(IdsOf(rec.runs[1][1].user_rows), (std::vector<int64_t>{20, 21, 22}));
}

TEST(MultiShardWriteGroup, StorageRowsAfterNewRowsOfTheSameShardWaitForTheNextGroup) {
  MultiShardWriteGroup g;
  Recorder rec;
  std::thread leader([&] { EXPECT_TRUE(g.Write(Parts({1}, {2}), rec.Fn(), "w", 60s).ok()); });
  while (rec.Calls() == 0) std::this_thread::sleep_for(1ms);
  // Queue: new rows in shard 0 only; then tombstones (storage rows) in both shards; then new
  // rows in both. The tombstones cannot follow shard 0's new rows in one Apply (they would be
  // written first), so they lead the next group, which the last write joins.
  const std::vector<std::vector<ShardWrite>> writes = {
      Parts({5}, {}), Parts({5}, {6}, /*storage=*/true), Parts({7}, {8})};
  std::vector<std::thread> ts = StartInOrder(
      writes.size(), [&](size_t i) { EXPECT_TRUE(g.Write(writes[i], rec.Fn(), "w", 60s).ok()); });
  rec.Release();
  leader.join();
  for (auto& t : ts) t.join();
  ASSERT_EQ(rec.runs.size(), 3u);
  EXPECT_EQ(IdsOf(rec.runs[1][0].user_rows), (std::vector<int64_t>{5}));
  EXPECT_TRUE(rec.runs[1][0].storage_rows.empty());
  EXPECT_TRUE(rec.runs[1][1].user_rows.empty());
  EXPECT_EQ(IdsOf(rec.runs[2][0].storage_rows), (std::vector<int64_t>{5}));
  EXPECT_EQ(IdsOf(rec.runs[2][1].storage_rows), (std::vector<int64_t>{6}));
  EXPECT_EQ(IdsOf(rec.runs[2][0].user_rows), (std::vector<int64_t>{7}));
  EXPECT_EQ(IdsOf(rec.runs[2][1].user_rows), (std::vector<int64_t>{8}));
}

TEST(MultiShardWriteGroup, AWriteNotTakenByItsDeadlineIsInNoGroup) {
  MultiShardWriteGroup g;
  Recorder rec;
  std::thread leader([&] { EXPECT_TRUE(g.Write(Parts({1}, {2}), rec.Fn(), "w", 60s).ok()); });
  while (rec.Calls() == 0) std::this_thread::sleep_for(1ms);
  const Status late =
      g.Write(Parts({3}, {4}), rec.Fn(), "table 't': a write across 2 shards", 50ms);
  EXPECT_EQ(late.code(), StatusCode::kBackpressure);
  EXPECT_EQ(late.message(),
            "table 't': a write across 2 shards waited longer than the write stall timeout (50 "
            "ms) for the multi-shard writes ahead of it; retry");
  rec.Release();
  leader.join();
  // The next write runs alone: the late one left the queue.
  int64_t size = 0;
  EXPECT_TRUE(g.Write(Parts({5}, {6}), rec.Fn(), "w", 60s, &size).ok());
  EXPECT_EQ(size, 1);
  ASSERT_EQ(rec.runs.size(), 2u);
  EXPECT_EQ(IdsOf(rec.runs[1][0].user_rows), (std::vector<int64_t>{5}));
}

TEST(MultiShardWriteGroup, AGroupsErrorIsEveryMembersAndTheRowCapSplitsGroups) {
  MultiShardWriteGroup g;
  Recorder rec;
  std::thread leader([&] {  // its own run fails too: rec.fail is read as the run returns
    EXPECT_EQ(g.Write(Parts({1}, {2}), rec.Fn(), "w", 60s).code(), StatusCode::kIOError);
  });
  while (rec.Calls() == 0) std::this_thread::sleep_for(1ms);
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    rec.fail = Status::IOError("commit record put failed");
  }
  // Writes of kMaxGroupRows / 2 + 1 rows: a group takes its first and one more (the cap
  // counts the rows past the first write), the third leads the next group, which the small
  // fourth joins.
  const int64_t half = MultiShardWriteGroup::kMaxGroupRows / 2 + 1;
  std::vector<int64_t> big(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) big[static_cast<size_t>(i)] = 100 + i;
  std::vector<Status> got(4);
  const std::vector<std::vector<ShardWrite>> writes = {Parts(big, {1}), Parts(big, {2}),
                                                       Parts(big, {3}), Parts({4}, {4})};
  std::vector<std::thread> ts = StartInOrder(
      writes.size(), [&](size_t i) { got[i] = g.Write(writes[i], rec.Fn(), "w", 60s); });
  rec.Release();
  leader.join();
  for (auto& t : ts) t.join();
  ASSERT_EQ(rec.runs.size(), 3u);
  EXPECT_EQ(IdsOf(rec.runs[1][1].user_rows), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(IdsOf(rec.runs[2][1].user_rows), (std::vector<int64_t>{3, 4}));
  for (const Status& st : got) {
    EXPECT_EQ(st.code(), StatusCode::kIOError);
    EXPECT_EQ(st.message(), "commit record put failed");
  }
}

// A leader whose run throws (e.g. bad_alloc) still hands every member of its group an outcome
// and lets the next write lead: a member left waiting would hold its table's locks for good.
TEST(MultiShardWriteGroup, ALeaderThatThrowsFailsItsGroupAndTheNextWriteLeads) {
  MultiShardWriteGroup g;
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> calls{0};
  MultiShardWriteGroup::Run run = [&](std::vector<ShardWrite>) -> Status {
    if (calls++ == 0) {  // the first group blocks, then commits
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return release; });
      return Status::OK();
    }
    throw std::runtime_error("out of memory");  // the second group's run throws
  };
  std::thread leader([&] { EXPECT_TRUE(g.Write(Parts({1}, {2}), run, "w", 60s).ok()); });
  while (calls.load() == 0) std::this_thread::sleep_for(1ms);
  // Two writes queue; the first leads the next group, the second is taken into it.
  bool led_threw = false;
  Status member;
  std::thread a([&] {
    try {
      (void)g.Write(Parts({3}, {4}), run, "w", 60s);
    } catch (const std::runtime_error&) {
      led_threw = true;
    }
  });
  std::this_thread::sleep_for(20ms);
  std::thread b([&] { member = g.Write(Parts({5}, {6}), run, "w", 60s); });
  std::this_thread::sleep_for(20ms);
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  leader.join();
  a.join();
  b.join();
  EXPECT_TRUE(led_threw);
  EXPECT_EQ(member.code(), StatusCode::kInternal);
  EXPECT_EQ(member.message(), "multi-shard write group: the leader failed");
  EXPECT_EQ(calls.load(), 2);  // the member was in the throwing group, not run on its own
  Recorder rec;
  rec.Release();
  int64_t size = 0;
  EXPECT_TRUE(g.Write(Parts({7}, {8}), rec.Fn(), "w", 60s, &size).ok());
  EXPECT_EQ(size, 1);
}

}  // namespace
}  // namespace strata::table
