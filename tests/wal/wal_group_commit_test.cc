// Group commit, generation boundaries, fence sentinels and torn-run skipping of the WAL.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "../io/forwarding_store.h"
#include "../io/storage_test_util.h"
#include "io/local_object_store.h"
#include "memtable/memtable.h"
#include "wal/wal_entry.h"
#include "wal/wal_reader.h"
#include "wal/wal_writer.h"

namespace strata::wal {
namespace {

using strata::testing::Ids;
using strata::testing::MakeBatch;
using strata::testing::Range;
using strata::testing::TempDir;
using strata::testing::TestSchema;

constexpr char kShard[] = "db/t/_mem_wal/g1";

/// Local store whose PutIfAbsent can be slowed down or made to fail (test-local decorator).
class HookedStore : public strata::testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  Status PutIfAbsent(const std::string& k, std::string_view d) override {
    puts.fetch_add(1);
    if (delay_ms.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    if (fail.load()) return Status::IOError("injected put failure of " + k);
    return inner()->PutIfAbsent(k, d);
  }

  std::atomic<int> delay_ms{0};
  std::atomic<bool> fail{false};
  std::atomic<int> puts{0};
};

struct Replayed {
  Result<WalReplaySummary> summary = Status::Internal("unset");
  std::vector<WalEntry> entries;
};

Replayed ReplayAll(io::ObjectStore& store, uint64_t from = 1) {
  Replayed r;
  r.summary = WalReader::Replay(store, kShard, from, [&](WalEntry&& e) {
    r.entries.push_back(std::move(e));
    return Status::OK();
  });
  return r;
}

std::vector<int64_t> AllIds(const std::vector<WalEntry>& entries) {
  std::vector<int64_t> out;
  for (const auto& e : entries) {
    auto ids = Ids(e.batches);
    out.insert(out.end(), ids.begin(), ids.end());
  }
  return out;
}

// 16 writers of 1-row appends against a slow disk: entries carry many appends each, every
// row is in the log exactly once, callbacks run in position order.
void RunConcurrentAppends(bool group_commit, uint64_t* entries_out, uint64_t* max_group_out) {
  TempDir dir;
  auto store = std::make_shared<HookedStore>(*io::LocalObjectStore::Open(dir.path()));
  store->delay_ms = 5;
  WalWriterOptions opt;
  opt.group_commit = group_commit;
  WalWriter w(store, kShard, TestSchema(), 1, opt);
  constexpr int kThreads = 16, kPerThread = 8;
  std::mutex order_mu;
  std::vector<uint64_t> callback_positions;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto pos = w.Append({MakeBatch(t * 1000 + i, 1)}, 1, [&](uint64_t p) {
          std::lock_guard<std::mutex> l(order_mu);
          callback_positions.push_back(p);
        });
        if (!pos.ok()) failures.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);
  auto stats = w.stats();
  EXPECT_EQ(stats.appends, static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_EQ(stats.entries_written, stats.fsyncs);
  EXPECT_EQ(static_cast<int>(stats.entries_written), store->puts.load());
  EXPECT_EQ(callback_positions.size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_TRUE(std::is_sorted(callback_positions.begin(), callback_positions.end()));
  uint64_t hist_total = 0;
  for (auto h : stats.group_size_histogram) hist_total += h;
  EXPECT_EQ(hist_total, stats.entries_written);

  auto r = ReplayAll(*store);
  ASSERT_TRUE(r.summary.ok()) << r.summary.status().ToString();
  EXPECT_EQ(r.summary->entries, stats.entries_written);
  auto ids = AllIds(r.entries);
  std::sort(ids.begin(), ids.end());
  std::vector<int64_t> expected;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) expected.push_back(t * 1000 + i);
  }
  EXPECT_EQ(ids, expected);
  *entries_out = stats.entries_written;
  *max_group_out = stats.max_group_size;
}

TEST(WalGroupCommit, ConcurrentAppendsShareEntries) {
  uint64_t entries = 0, max_group = 0;
  RunConcurrentAppends(true, &entries, &max_group);
  // 128 appends; while one 5 ms put is in flight the other 15 writers queue up.
  EXPECT_LE(entries, 64u);
  EXPECT_GE(max_group, 4u);
}

TEST(WalGroupCommit, DisabledWritesOneEntryPerAppend) {
  uint64_t entries = 0, max_group = 0;
  RunConcurrentAppends(false, &entries, &max_group);
  EXPECT_EQ(entries, 128u);
  EXPECT_EQ(max_group, 1u);
}

TEST(WalGroupCommit, EntryNeverSpansTwoGenerations) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  WalWriter w(store, kShard, TestSchema(), 1, {.writer_epoch = 4});
  std::vector<AppendHandle> handles;
  for (int i = 0; i < 3; ++i) handles.push_back(*w.Enqueue({MakeBatch(i, 1)}, 1));
  for (int i = 3; i < 5; ++i) handles.push_back(*w.Enqueue({MakeBatch(i, 1)}, 2));
  EXPECT_EQ(w.stats().entries_written, 0u);  // nothing is written until someone waits
  auto bad = w.Enqueue({MakeBatch(9, 1)}, 1);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(w.Sync().ok());
  std::vector<uint64_t> positions;
  for (auto& h : handles) positions.push_back(*w.Wait(h));
  EXPECT_EQ(positions, (std::vector<uint64_t>{1, 1, 1, 2, 2}));
  auto r = ReplayAll(*store);
  ASSERT_TRUE(r.summary.ok());
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(r.entries[0].generation, 1u);
  EXPECT_EQ(r.entries[0].writer_epoch, 4u);
  EXPECT_EQ(Ids(r.entries[0].batches), Range(0, 3));
  EXPECT_EQ(r.entries[1].generation, 2u);
  EXPECT_EQ(Ids(r.entries[1].batches), Range(3, 2));
  EXPECT_EQ(r.summary->last_generation, 2u);
}

TEST(WalGroupCommit, AMultiShardPartIsAloneInItsTaggedEntry) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  WalWriter w(store, kShard, TestSchema(), 1, {.writer_epoch = 2});
  std::vector<AppendHandle> handles;
  handles.push_back(*w.Enqueue({MakeBatch(0, 1)}, 1));
  handles.push_back(*w.Enqueue({MakeBatch(1, 2)}, 1, {}, TxnTag{"tx-a", 3}));
  handles.push_back(*w.Enqueue({MakeBatch(3, 1)}, 1));
  handles.push_back(*w.Enqueue({MakeBatch(4, 1)}, 1));
  EXPECT_TRUE(w.Enqueue({MakeBatch(5, 1)}, 1, {}, TxnTag{"tx-b", 1}).status().IsInvalid());
  EXPECT_TRUE(w.Enqueue({MakeBatch(5, 1)}, 1, {}, TxnTag{"", 2}).status().IsInvalid());
  ASSERT_TRUE(w.Sync().ok());
  std::vector<uint64_t> positions;
  for (auto& h : handles) positions.push_back(*w.Wait(h));
  EXPECT_EQ(positions, (std::vector<uint64_t>{1, 2, 3, 3}));
  auto r = ReplayAll(*store);
  ASSERT_TRUE(r.summary.ok());
  ASSERT_EQ(r.entries.size(), 3u);
  EXPECT_TRUE(r.entries[0].txn.empty());
  EXPECT_EQ(r.entries[1].txn.id, "tx-a");
  EXPECT_EQ(r.entries[1].txn.shards, 3u);
  EXPECT_EQ(Ids(r.entries[1].batches), Range(1, 2));
  EXPECT_TRUE(r.entries[2].txn.empty());
  // The tags do not leak into the entry's schema.
  EXPECT_TRUE(r.entries[1].schema->Equals(*TestSchema()));
}

TEST(WalEntry, TxnTagsRoundTripAndBadOnesAreCorruption) {
  auto bytes = EncodeWalEntry(*TestSchema(), {MakeBatch(0, 2)}, 1, 1,
                              arrow::ipc::Compression::kNone, false, 0, TxnTag{"t", 2});
  ASSERT_TRUE(bytes.ok());
  auto e = DecodeWalEntry(7, *bytes);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->txn.id, "t");
  EXPECT_EQ(e->txn.shards, 2u);
  EXPECT_TRUE(EncodeWalEntry(*TestSchema(), {}, 1, 1, arrow::ipc::Compression::kNone, true, 0,
                             TxnTag{"t", 2})
                  .status()
                  .IsInvalid());
  auto with_md = [](std::vector<std::pair<std::string, std::string>> extra) {
    arrow::KeyValueMetadata md;
    md.Set(kWriterEpochKey, "1");
    md.Set(kGenerationKey, "1");
    for (auto& [k, v] : extra) md.Set(k, v);
    auto schema = std::make_shared<arrow::Schema>(TestSchema()->fields(), std::move(md));
    return *arrow::ipc::WriteStream(*schema, {}, {});
  };
  EXPECT_EQ(DecodeWalEntry(1, with_md({{kTxnIdKey, "t"}})).status().code(),
            StatusCode::kCorruption);  // no txn_shards
  EXPECT_EQ(DecodeWalEntry(1, with_md({{kTxnIdKey, "t"}, {kTxnShardsKey, "1"}})).status().code(),
            StatusCode::kCorruption);
  EXPECT_EQ(DecodeWalEntry(1, with_md({{kTxnShardsKey, "2"}})).status().code(),
            StatusCode::kCorruption);
  EXPECT_EQ(DecodeWalEntry(1, with_md({{kTxnIdKey, ""}, {kTxnShardsKey, "2"}})).status().code(),
            StatusCode::kCorruption);
  EXPECT_TRUE(DecodeWalEntry(1, with_md({{kTxnIdKey, "t"}, {kTxnShardsKey, "4"}})).ok());
}

TEST(WalGroupCommit, MaxEntryBytesSplitsGroups) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  auto batch = MakeBatch(0, 10);
  int64_t one = 0;
  for (const auto& c : batch->columns()) one += memtable::ArrayDataBytes(*c);
  WalWriterOptions opt;
  opt.max_wal_entry_bytes = 3 * one + one / 2;
  WalWriter w(store, kShard, TestSchema(), 1, opt);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(w.Enqueue({MakeBatch(i * 10, 10)}, 1).ok());
  ASSERT_TRUE(w.Sync().ok());
  auto r = ReplayAll(*store);
  ASSERT_TRUE(r.summary.ok());
  std::vector<int64_t> rows;
  for (const auto& e : r.entries) rows.push_back(e.num_rows);
  EXPECT_EQ(rows, (std::vector<int64_t>{30, 30, 30, 10}));
  EXPECT_EQ(AllIds(r.entries), Range(0, 100));
  EXPECT_EQ(w.stats().max_group_size, 3u);
}

TEST(WalGroupCommit, FencedWriterFailsQueuedAppends) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  WalWriter a(store, kShard, TestSchema(), 1);
  ASSERT_TRUE(a.Append({MakeBatch(0, 1)}, 1, {}).ok());
  WalWriter b(store, kShard, TestSchema(), 2, {.writer_epoch = 2});
  auto fence = b.WriteFenceSentinel(1);
  ASSERT_TRUE(fence.ok()) << fence.status().ToString();
  EXPECT_EQ(*fence, 2u);
  auto h1 = *a.Enqueue({MakeBatch(1, 1)}, 1);
  auto h2 = *a.Enqueue({MakeBatch(2, 1)}, 1);
  EXPECT_EQ(a.Wait(h2).status().code(), StatusCode::kFenced);
  EXPECT_EQ(a.Wait(h1).status().code(), StatusCode::kFenced);
  EXPECT_EQ(a.health().code(), StatusCode::kFenced);
  EXPECT_EQ(a.Enqueue({MakeBatch(3, 1)}, 1).status().code(), StatusCode::kFenced);
  auto r = ReplayAll(*store);
  ASSERT_TRUE(r.summary.ok());
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_TRUE(r.entries[1].fence_sentinel);
  EXPECT_EQ(r.entries[1].writer_epoch, 2u);
  EXPECT_EQ(r.entries[1].num_rows, 0);
  EXPECT_EQ(r.summary->fence_sentinels, 1u);
  EXPECT_EQ(b.stats().fence_sentinels, 1u);
}

TEST(WalGroupCommit, FailedPutPoisonsTheWriter) {
  TempDir dir;
  auto store = std::make_shared<HookedStore>(*io::LocalObjectStore::Open(dir.path()));
  WalWriter w(store, kShard, TestSchema(), 1);
  ASSERT_TRUE(w.Append({MakeBatch(0, 1)}, 1, {}).ok());
  store->fail = true;
  bool called = false;
  auto failed = w.Append({MakeBatch(1, 1)}, 1, [&](uint64_t) { called = true; });
  EXPECT_EQ(failed.status().code(), StatusCode::kIOError) << failed.status().ToString();
  EXPECT_FALSE(called);
  store->fail = false;
  EXPECT_EQ(w.Append({MakeBatch(2, 1)}, 1, {}).status().code(), StatusCode::kWriterPoisoned);
  EXPECT_EQ(w.next_position(), 2u);
  auto r = ReplayAll(*store);
  EXPECT_EQ(AllIds(r.entries), (std::vector<int64_t>{0}));
}

class WalTornTail : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = *io::LocalObjectStore::Open(dir_.path());
    WalWriter w(store_, kShard, TestSchema(), 1);
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(w.Append({MakeBatch(i * 5, 5)}, 1, {}).ok());
  }
  void Tear(uint64_t position) {
    const std::string path = store_->PathOf(WalEntryKey(kShard, position));
    std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  }
  // What a recovering writer does: replay, then a fence sentinel after the torn run.
  WalReplaySummary Recover(uint64_t epoch, int64_t first_id) {
    auto r = ReplayAll(*store_);
    EXPECT_TRUE(r.summary.ok()) << r.summary.status().ToString();
    const WalReplaySummary s = *r.summary;
    WalWriter w(store_, kShard, TestSchema(), s.max_position_present + 1, {.writer_epoch = epoch});
    auto fence = w.WriteFenceSentinel(1, s.torn_position.value_or(0));
    EXPECT_TRUE(fence.ok()) << fence.status().ToString();
    EXPECT_TRUE(w.Append({MakeBatch(first_id, 5)}, 1, {}).ok());
    return s;
  }

  TempDir dir_;
  std::shared_ptr<io::LocalObjectStore> store_;
};

TEST_F(WalTornTail, RecoveryWritesSentinelAfterTornEntryAndNeverReusesIt) {
  Tear(4);
  const std::string torn_path = store_->PathOf(WalEntryKey(kShard, 4));
  const auto torn_size = std::filesystem::file_size(torn_path);
  auto s = Recover(2, 100);
  EXPECT_EQ(s.torn_position, std::optional<uint64_t>(4));
  EXPECT_EQ(s.torn_last_position, 4u);
  EXPECT_EQ(std::filesystem::file_size(torn_path), torn_size);  // left in place, not reused
  auto r = ReplayAll(*store_);
  ASSERT_TRUE(r.summary.ok()) << r.summary.status().ToString();
  EXPECT_EQ(r.summary->skipped_positions, (std::vector<uint64_t>{4}));
  EXPECT_FALSE(r.summary->torn_position.has_value());
  EXPECT_EQ(r.summary->last_position, 6u);
  EXPECT_EQ(r.entries[3].position, 5u);
  EXPECT_TRUE(r.entries[3].fence_sentinel);
  EXPECT_EQ(r.entries[3].fence_skip_from, 4u);
  auto expected = Range(0, 15);
  auto more = Range(100, 5);
  expected.insert(expected.end(), more.begin(), more.end());
  EXPECT_EQ(AllIds(r.entries), expected);
}

TEST_F(WalTornTail, RepeatedCrashesSkipEachVouchedRun) {
  Tear(4);
  Recover(2, 100);  // sentinel 5, data 6
  Tear(6);
  auto s = Recover(3, 200);  // sentinel 7 skips 6, data 8
  EXPECT_EQ(s.torn_position, std::optional<uint64_t>(6));
  auto r = ReplayAll(*store_);
  ASSERT_TRUE(r.summary.ok()) << r.summary.status().ToString();
  EXPECT_EQ(r.summary->skipped_positions, (std::vector<uint64_t>{4, 6}));
  auto expected = Range(0, 15);
  auto more = Range(200, 5);
  expected.insert(expected.end(), more.begin(), more.end());
  EXPECT_EQ(AllIds(r.entries), expected);  // the torn entry 6's rows (100..104) are gone
}

TEST_F(WalTornTail, TornRunOfTwoIsSkippedByOneSentinel) {
  Tear(3);
  Tear(4);
  auto s = Recover(2, 100);
  EXPECT_EQ(s.torn_position, std::optional<uint64_t>(3));
  EXPECT_EQ(s.torn_last_position, 4u);
  auto r = ReplayAll(*store_);
  ASSERT_TRUE(r.summary.ok()) << r.summary.status().ToString();
  EXPECT_EQ(r.summary->skipped_positions, (std::vector<uint64_t>{3, 4}));
  auto expected = Range(0, 10);
  auto more = Range(100, 5);
  expected.insert(expected.end(), more.begin(), more.end());
  EXPECT_EQ(AllIds(r.entries), expected);
}

TEST_F(WalTornTail, SentinelDoesNotVouchForAnEarlierCorruptEntry) {
  Tear(4);
  Recover(2, 100);  // sentinel at 5 skips only 4
  Tear(2);          // later damage in the middle
  auto r = ReplayAll(*store_);
  ASSERT_FALSE(r.summary.ok());
  EXPECT_EQ(r.summary.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.summary.status().message().find("entry 2"), std::string::npos)
      << r.summary.status().message();
}

TEST_F(WalTornTail, SentinelWithoutSkipDoesNotVouch) {
  Tear(4);
  WalWriter w(store_, kShard, TestSchema(), 5, {.writer_epoch = 2});
  ASSERT_TRUE(w.WriteFenceSentinel(1).ok());  // (a writer that ignored the torn run)
  auto r = ReplayAll(*store_);
  ASSERT_FALSE(r.summary.ok());
  EXPECT_EQ(r.summary.status().code(), StatusCode::kCorruption);
}

TEST_F(WalTornTail, SentinelCannotSkipItsOwnPosition) {
  WalWriter w(store_, kShard, TestSchema(), 5);
  EXPECT_EQ(w.WriteFenceSentinel(1, 5).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(w.health().ok());
  EXPECT_EQ(*w.WriteFenceSentinel(1, 0), 5u);
}

// The ShardWriter's pattern: MemTable insert + WAL enqueue under one lock, wait outside it,
// OnDurable advances the watermark. Readers only ever see durable rows, in WAL order.
TEST(WalGroupCommit, WatermarkFollowsDurabilityUnderConcurrentPuts) {
  TempDir dir;
  auto store = std::make_shared<HookedStore>(*io::LocalObjectStore::Open(dir.path()));
  store->delay_ms = 1;
  WalWriter w(store, kShard, TestSchema(), 1);
  auto mt = *memtable::MemTable::Make(
      TestSchema(), {.generation = 1, .key_columns = {0}, .tombstone_column = -1, .indexes = {}});
  std::mutex put_mu;
  // durable_hi is set before MarkDurable (rows known durable), durable_lo after it.
  std::atomic<int64_t> durable_hi{0}, durable_lo{0};
  std::atomic<bool> stop{false};
  std::atomic<int> violations{0};
  std::thread reader([&] {
    while (!stop.load()) {
      const int64_t lo = durable_lo.load();
      auto snap = mt->Snapshot();
      const int64_t hi = durable_hi.load();
      int64_t rows = 0;
      for (const auto& b : snap.batches) rows += b->num_rows();
      if (rows != snap.num_rows || snap.num_rows < lo || snap.num_rows > hi) {
        violations.fetch_add(1);
      }
    }
  });
  constexpr int kThreads = 8, kPerThread = 25;
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto batch = MakeBatch((t * kPerThread + i) * 2, 2);
        AppendHandle h;
        {
          std::lock_guard<std::mutex> l(put_mu);
          auto range = *mt->Insert({batch});
          h = *w.Enqueue({batch}, 1, [&, end = range.end](uint64_t pos) {
            durable_hi.store(end);
            mt->MarkDurable(end, pos);
            durable_lo.store(end);
          });
        }
        if (!w.Wait(h).ok()) violations.fetch_add(1);
      }
    });
  }
  for (auto& th : writers) th.join();
  stop = true;
  reader.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(mt->visible_rows(), kThreads * kPerThread * 2);
  EXPECT_EQ(mt->last_wal_position(), w.last_durable_position());
  auto r = ReplayAll(*store);
  ASSERT_TRUE(r.summary.ok());
  EXPECT_EQ(AllIds(r.entries), Ids(mt->Snapshot().batches));  // MemTable order = WAL order
  EXPECT_LT(w.stats().entries_written, static_cast<uint64_t>(kThreads * kPerThread));
}

}  // namespace
}  // namespace strata::wal
