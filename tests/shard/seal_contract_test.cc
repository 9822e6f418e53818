// The seal/flush contract (issue 3 tests 1 and 2, DESIGN.md §4 rules 5 and 7):
// force_seal_active returns the generation it froze; wait_for_generation(g) is bounded under
// sustained writes (it never waits for MemTables frozen later); flushes publish strictly in
// generation order, also when a flush fails and is retried; a flush that keeps failing
// poisons the writer and reopening recovers everything.
#include <gtest/gtest.h>

#include <thread>

#include "format/shard_manifest.h"
#include "shard_test_util.h"
#include "sstable/sstable_reader.h"

namespace strata::shard {
namespace {

using strata::testing::Ids;
using strata::testing::MakeBatch;
using strata::testing::Range;
using namespace strata::shard::testing;
using namespace std::chrono_literals;

/// Ids stored in the published SSTable of `generation`.
std::vector<int64_t> SSTableIds(ShardFixture& f, const ShardWriter& w, uint64_t generation) {
  for (const auto& s : w.Describe().sstables) {
    if (s.generation != generation) continue;
    auto dir = s.path.substr(s.path.rfind('/') + 1);
    auto r = sstable::SSTableReader::Open(*f.local, f.shard_prefix(), dir);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {};
    return Ids((*r)->batches());
  }
  ADD_FAILURE() << "generation " << generation << " not published";
  return {};
}

TEST(SealContract, SealReturnsExactlyTheRowsWrittenBeforeIt) {
  ShardFixture f;
  auto w = f.OpenOrDie();
  auto empty = w->force_seal_active();
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->has_value());
  ASSERT_TRUE(w->Put({MakeBatch(0, 10)}).ok());
  auto p2 = w->Put({MakeBatch(10, 5)});
  ASSERT_TRUE(p2.ok());
  auto sealed = w->force_seal_active();
  ASSERT_TRUE(sealed.ok() && sealed->has_value()) << sealed.status().ToString();
  EXPECT_EQ((*sealed)->generation, 1u);
  EXPECT_EQ((*sealed)->rows, 15);
  EXPECT_EQ((*sealed)->last_wal_position, p2->wal_position);
  EXPECT_EQ((*sealed)->shard_id, kShardId);
  auto p3 = w->Put({MakeBatch(100, 3)});
  ASSERT_TRUE(p3.ok());
  EXPECT_EQ(p3->generation, 2u);
  ASSERT_TRUE(w->wait_for_generation(1, In(10s)).ok());
  EXPECT_EQ(SSTableIds(f, *w, 1), Range(0, 15));
  auto d = w->Describe();
  EXPECT_EQ(d.current_generation, 2u);
  EXPECT_EQ(d.replay_after_wal_entry_position, p2->wal_position);
  EXPECT_EQ(d.active.rows, 3);
  // Flushed rows stay visible, with the active ones.
  auto want = Range(0, 15);
  for (int64_t i = 100; i < 103; ++i) want.push_back(i);
  EXPECT_EQ(SortedIds(*w), want);
  auto s2 = w->force_seal_active();
  ASSERT_TRUE(s2.ok() && s2->has_value());
  EXPECT_EQ((*s2)->generation, 2u);
  EXPECT_EQ((*s2)->rows, 3);
  auto s3 = w->force_seal_active();
  ASSERT_TRUE(s3.ok());
  EXPECT_FALSE(s3->has_value());
}

// Four writers keep the frozen queue non-empty (the flusher is slowed by delaying SSTable
// puts); wait_for_generation(g) still returns, while wait_for_flush_drain times out.
TEST(SealContract, WaitForGenerationIsBoundedUnderFourHardWriters) {
  ShardFixture f;
  ShardWriterOptions o;
  o.max_memtable_rows = 300;
  auto w = f.OpenOrDie(o);
  f.faults->DelayPutsContaining("_gen_", 60ms);  // 4 files per SSTable: ~250 ms per flush
  std::atomic<bool> stop{false};
  std::atomic<int64_t> next_id{1000000};
  std::atomic<int> errors{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      while (!stop.load()) {
        int64_t first = next_id.fetch_add(20);
        if (!w->Put({MakeBatch(first, 20)}).ok()) ++errors;
      }
    });
  }
  // Let the frozen queue build up.
  const auto build_deadline = Clock::now() + 20s;
  while (w->Describe().frozen.size() < 3 && Clock::now() < build_deadline) {
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_GE(w->Describe().frozen.size(), 3u);
  ASSERT_TRUE(w->Put({MakeBatch(0, 7)}).ok());  // marker rows, acknowledged before the seal
  auto sealed = w->force_seal_active();
  ASSERT_TRUE(sealed.ok() && sealed->has_value());
  const uint64_t g = (*sealed)->generation;
  std::atomic<size_t> min_frozen{1000};
  std::atomic<bool> waiting{true};
  std::thread monitor([&] {
    while (waiting.load()) {
      size_t n = w->Describe().frozen.size();
      size_t m = min_frozen.load();
      while (n < m && !min_frozen.compare_exchange_weak(m, n)) {
      }
      std::this_thread::sleep_for(2ms);
    }
  });
  const auto t0 = Clock::now();
  Status st = w->wait_for_generation(g, In(60s));
  const double waited_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  waiting = false;
  monitor.join();
  ASSERT_TRUE(st.ok()) << st.ToString();
  auto d = w->Describe();
  EXPECT_GT(d.current_generation, g);
  EXPECT_GE(min_frozen.load(), 1u) << "the frozen set emptied during the wait";
  EXPECT_FALSE(d.frozen.empty());
  // The marker rows are in L0 (in the SSTable of a generation <= g).
  bool found = false;
  for (const auto& s : d.sstables) {
    if (s.generation > g) continue;
    auto ids = SSTableIds(f, *w, s.generation);
    if (std::count(ids.begin(), ids.end(), 0) == 1) found = true;
  }
  EXPECT_TRUE(found);
  // In the same setting, waiting for the frozen set to drain times out.
  const auto t1 = Clock::now();
  Status drain = w->wait_for_flush_drain(In(5s));
  const double drain_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
  EXPECT_EQ(drain.code(), StatusCode::kTimeout) << drain.ToString();
  EXPECT_GE(drain_ms, 4900);
  stop = true;
  for (auto& t : writers) t.join();
  EXPECT_EQ(errors.load(), 0);
  std::printf(
      "[figures] wait_for_generation(%llu) under 4 writers: %.0f ms; frozen at seal >= 3, "
      "min frozen during wait %zu\n",
      static_cast<unsigned long long>(g), waited_ms, min_frozen.load());
  f.faults->ClearFaults();
}

// Every manifest version lists generations 1..k with no gap (g+1 never without g).
void ExpectManifestsGapFree(ShardFixture& f) {
  format::ShardManifestStore ms(f.local, f.shard_prefix(), kShardId);
  auto latest = ms.LoadLatest();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  for (uint64_t v = 1; v <= (*latest)->version(); ++v) {
    auto m = ms.Load(v);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    uint64_t expect = 1;
    for (const auto& s : m->sstables()) EXPECT_EQ(s.generation(), expect++) << "version " << v;
    EXPECT_EQ(m->current_generation(), expect) << "version " << v;
  }
}

TEST(SealContract, FailedFlushIsRetriedInGenerationOrder) {
  ShardFixture f;
  auto w = f.OpenOrDie();
  io::PutFault fail_g1;
  fail_g1.key_contains = "_gen_1/";
  fail_g1.times = 2;  // the first file of two attempts fails
  f.faults->AddFault(fail_g1);
  ASSERT_TRUE(w->Put({MakeBatch(0, 5)}).ok());
  auto s1 = w->force_seal_active();
  ASSERT_TRUE(w->Put({MakeBatch(5, 5)}).ok());
  auto s2 = w->force_seal_active();
  ASSERT_TRUE(s1.ok() && s1->has_value() && s2.ok() && s2->has_value());
  ASSERT_EQ((*s2)->generation, 2u);
  Status st = w->wait_for_generation(2, In(20s));
  ASSERT_TRUE(st.ok()) << st.ToString();
  auto d = w->Describe();
  ASSERT_EQ(d.sstables.size(), 2u);
  EXPECT_EQ(d.sstables[0].generation, 1u);
  EXPECT_EQ(w->stats().flush_failures, 2u);
  EXPECT_EQ(SSTableIds(f, *w, 1), Range(0, 5));
  EXPECT_EQ(SSTableIds(f, *w, 2), Range(5, 5));
  ExpectManifestsGapFree(f);
}

TEST(SealContract, PermanentFlushFailurePoisonsAndReopenRecovers) {
  ShardFixture f;
  ShardWriterOptions o;
  o.flush_retry_backoff = 20ms;
  {
    auto w = f.OpenOrDie(o);
    io::PutFault fail;
    fail.key_contains = "_gen_";
    f.faults->AddFault(fail);
    ASSERT_TRUE(w->Put({MakeBatch(0, 5)}).ok());
    auto s1 = w->force_seal_active();
    ASSERT_TRUE(w->Put({MakeBatch(5, 5)}).ok());
    auto s2 = w->force_seal_active();
    ASSERT_TRUE(s1.ok() && s1->has_value() && s2.ok() && s2->has_value());
    Status w2 = w->wait_for_generation(2, In(20s));
    EXPECT_EQ(w2.code(), StatusCode::kWriterPoisoned) << w2.ToString();
    EXPECT_EQ(w->wait_for_generation(1, In(1s)).code(), StatusCode::kWriterPoisoned);
    EXPECT_EQ(w->Put({MakeBatch(10, 1)}).status().code(), StatusCode::kWriterPoisoned);
    EXPECT_EQ(w->force_seal_active().status().code(), StatusCode::kWriterPoisoned);
    EXPECT_EQ(SortedIds(*w), Range(0, 10));  // reads keep working
    EXPECT_EQ(w->Describe().current_generation, 1u);
    EXPECT_EQ(w->Describe().state, "poisoned");
    EXPECT_EQ(w->stats().flush_failures, 4u);  // 1 attempt + 3 retries
  }
  f.faults->ClearFaults();
  auto w = f.OpenOrDie(o);
  EXPECT_EQ(SortedIds(*w), Range(0, 10));
  // Replay rebuilt generation 1 (frozen) and 2 (active); publish both.
  auto sealed = w->force_seal_active();
  ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
  const uint64_t g = sealed->has_value() ? (*sealed)->generation : 1;
  ASSERT_TRUE(w->wait_for_generation(g, In(10s)).ok());
  auto d = w->Describe();
  ASSERT_EQ(d.sstables.size(), 2u);
  EXPECT_EQ(SSTableIds(f, *w, 1), Range(0, 5));
  EXPECT_EQ(SSTableIds(f, *w, 2), Range(5, 5));
  EXPECT_EQ(SortedIds(*w), Range(0, 10));
  ExpectManifestsGapFree(f);
  w.reset();
  EXPECT_EQ(SortedIds(*f.OpenOrDie(o)), Range(0, 10));
}

}  // namespace
}  // namespace strata::shard
