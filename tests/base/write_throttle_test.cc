// The L0 write throttle (base/write_throttle.h): the stop threshold refuses with a clear
// Backpressure at the deadline and releases writers when compaction commits, the slowdown
// admits writes at half the measured compaction rate, and, through a real table, a compactor
// that cannot commit stops writes at the threshold (L0 bounded) without losing or duplicating
// an acknowledged row, and writes resume once it can.
#include "base/write_throttle.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "arrow/builder.h"
#include "io/fault_injecting_store.h"
#include "io/local_object_store.h"
#include "table/local_table.h"
#include "table/primary_key.h"

namespace strata::base {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(WriteThrottle, StopRefusesAtTheDeadlineNamingTheBacklogAndTheFlag) {
  WriteThrottle t({/*slowdown_count=*/4, /*stop_count=*/5, /*initial_rate=*/20000,
                   /*min_rate=*/500});
  int calls = 0;
  const auto t0 = Clock::now();
  Status st = t.Admit(
      10,
      [&] {
        ++calls;
        return L0Backlog{4, 1};
      },
      Clock::now() + 120ms);
  EXPECT_GE(Clock::now() - t0, 120ms);
  EXPECT_EQ(st.code(), StatusCode::kBackpressure);
  EXPECT_NE(st.message().find("4 SSTables and 1 frozen MemTables"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("--compaction-l0-stop"), std::string::npos) << st.message();
  EXPECT_GE(calls, 2);  // read again after each bounded wait
  const WriteThrottleStats s = t.stats();
  EXPECT_EQ(s.stopped_writes, 1u);
  EXPECT_EQ(s.stop_timeouts, 1u);
  EXPECT_EQ(s.slowed_writes, 0u);
  EXPECT_GE(s.delay_seconds_total, 0.12);
}

TEST(WriteThrottle, CompactionReleasesStoppedWriters) {
  WriteThrottle t({/*slowdown_count=*/0, /*stop_count=*/3, 20000, 500});
  std::atomic<int64_t> sstables{3};
  std::vector<std::thread> writers;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    writers.emplace_back([&] {
      Status st = t.Admit(
          1,
          [&] {
            return L0Backlog{sstables.load(), 0};
          },
          Clock::now() + 30s);
      if (st.ok()) ++ok;
    });
  }
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(ok.load(), 0);  // all four wait at the stop threshold
  sstables = 1;
  t.NoteCompaction(2000, 1.0);
  for (auto& w : writers) w.join();
  EXPECT_EQ(ok.load(), 4);
  const WriteThrottleStats s = t.stats();
  EXPECT_EQ(s.stopped_writes, 4u);
  EXPECT_EQ(s.stop_timeouts, 0u);
}

// A base index build holds the compaction work lock (for minutes on a large base): writers
// stopped at the threshold are released, and nothing is throttled until the build ends (a
// break test saw 90 s of 503s while create_index rebuilt 570k rows).
TEST(WriteThrottle, IndexBuildBlockingCompactionReleasesAndSuspendsTheStop) {
  WriteThrottle t({/*slowdown_count=*/2, /*stop_count=*/3, 20000, 500});
  auto full = [] { return L0Backlog{3, 0}; };
  std::atomic<int> done{0};
  Status waited;
  std::thread writer([&] {
    waited = t.Admit(1, full, Clock::now() + 30s);
    ++done;
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(done.load(), 0);  // stopped
  t.SetCompactionBlocked(true);
  writer.join();
  EXPECT_TRUE(waited.ok()) << waited.ToString();
  // While blocked: no stop, no slowdown, whatever the backlog.
  EXPECT_TRUE(t.Admit(
                   1000,
                   [] {
                     return L0Backlog{50, 2};
                   },
                   Clock::now())
                  .ok());
  EXPECT_EQ(t.stats().stopped_writes, 1u);
  EXPECT_EQ(t.stats().slowed_writes, 0u);
  // After the build the stop applies again.
  t.SetCompactionBlocked(false);
  EXPECT_EQ(t.Admit(1, full, Clock::now() + 60ms).code(), StatusCode::kBackpressure);
  EXPECT_EQ(t.stats().stop_timeouts, 1u);
}

TEST(WriteThrottle, SlowdownAdmitsAtHalfTheMeasuredCompactionRate) {
  WriteThrottle t({/*slowdown_count=*/2, /*stop_count=*/0, /*initial_rate=*/20000, 500});
  EXPECT_EQ(t.stats().rate_rows_per_second, 20000);  // nothing measured yet
  t.NoteCompaction(10000, 1.0);                      // 10,000 rows/s
  EXPECT_EQ(t.stats().rate_rows_per_second, 5000);
  t.NoteCompaction(30000, 1.0);  // EWMA: (10,000 + 30,000) / 2 = 20,000 rows/s
  EXPECT_EQ(t.stats().rate_rows_per_second, 10000);

  // Below the threshold nothing waits and nothing is counted.
  ASSERT_TRUE(t.Admit(
                   1000,
                   [] {
                     return L0Backlog{1, 0};
                   },
                   Clock::now() + 10s)
                  .ok());
  EXPECT_EQ(t.stats().slowed_writes, 0u);
  // At it, four writes of 1,000 rows at 10,000 rows/s: admitted at 0, 0.1, 0.2, 0.3 s.
  const auto t0 = Clock::now();
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(t.Admit(
                     1000,
                     [] {
                       return L0Backlog{1, 1};
                     },
                     Clock::now() + 10s)
                    .ok());
  }
  EXPECT_GE(Clock::now() - t0, 300ms);
  const WriteThrottleStats s = t.stats();
  EXPECT_EQ(s.slowed_writes, 4u);
  // Each slowed write is counted as delayed from its call to its slot (0.1 s after the previous
  // slot), less the previous sleep's wake-up latency: 0.28 s was seen under ThreadSanitizer on
  // a loaded machine, so allow up to ~30 ms of latency per wake-up.
  EXPECT_GE(s.delay_seconds_total, 0.2);
}

// While a compaction runs, the SSTables it took leave L0 at its commit: writes pass at the
// slowdown count as long as the room before the stop outlasts the compaction's estimate, and
// are slowed (to room / remaining time, floored at min_rate) only when it would not.
TEST(WriteThrottle, RunningCompactionSlowsOnlyWhenTheStopWouldComeFirst) {
  WriteThrottle t({/*slowdown_count=*/4, /*stop_count=*/5, /*initial_rate=*/20000,
                   /*min_rate=*/500});
  t.NoteCompaction(10000, 1.0);  // C = 10,000 rows/s
  // A writer at ~2,000 rows/s: one window of 2,000 rows over ~1 s, below the slowdown.
  const auto low = [] { return L0Backlog{1, 0, 0, 10000}; };
  ASSERT_TRUE(t.Admit(1000, low, Clock::now() + 10s).ok());
  std::this_thread::sleep_for(1050ms);
  ASSERT_TRUE(t.Admit(1000, low, Clock::now() + 10s).ok());
  ASSERT_EQ(t.stats().slowed_writes, 0u);

  // Compaction of 4 SSTables, 40,000 rows: ~4 s at C. One MemTable (10,000 rows) of room before
  // the stop = 2,500 rows/s needed, more than the writer's ~1,900: writes pass.
  t.NoteCompactionStart(4, 40000);
  const auto at_trigger = [] { return L0Backlog{4, 0, 0, 10000}; };
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(t.Admit(100, at_trigger, Clock::now() + 10s).ok());
  EXPECT_EQ(t.stats().slowed_writes, 0u);
  EXPECT_EQ(t.stats().inflight_passed, 5u);

  // The active MemTable is nearly full: 50 rows of room over ~4 s. The writer is slowed to the
  // floor (min_rate 500 rows/s): two 100-row writes are 0.2 s apart.
  const auto nearly_full = [] { return L0Backlog{4, 0, 9950, 10000}; };
  const auto t0 = Clock::now();
  ASSERT_TRUE(t.Admit(100, nearly_full, Clock::now() + 10s).ok());
  ASSERT_TRUE(t.Admit(100, nearly_full, Clock::now() + 10s).ok());
  EXPECT_GE(Clock::now() - t0, 190ms);
  EXPECT_EQ(t.stats().slowed_writes, 2u);
  EXPECT_EQ(t.stats().rate_rows_per_second, 500);

  // The compaction committed: at the same backlog the ordinary slowdown applies again.
  t.NoteCompaction(40000, 4.0);
  ASSERT_TRUE(t.Admit(100, at_trigger, Clock::now() + 10s).ok());
  EXPECT_EQ(t.stats().slowed_writes, 3u);
  EXPECT_EQ(t.stats().inflight_passed, 5u);
}

TEST(WriteThrottle, CompactionUnitShrinksAsTheWriteRateApproachesCompactionThroughput) {
  WriteThrottle t({/*slowdown_count=*/4, /*stop_count=*/5, /*initial_rate=*/20000,
                   /*min_rate=*/500});
  const auto low = [] { return L0Backlog{1, 0, 0, 10000}; };
  // Nothing measured: no limit.
  EXPECT_EQ(t.CompactionUnit(), 0);
  t.NoteCompaction(100000, 1.0);     // C = 100,000 rows/s
  EXPECT_EQ(t.CompactionUnit(), 0);  // no write yet: take everything
  // A writer of 2,000 rows over one window of e >= 1.05 s: W = 2,000 / e, so
  // k = floor(C / 2W) = floor(25 e) >= 26, e bracketed by the two calls' start and end.
  const auto a0 = Clock::now();
  ASSERT_TRUE(t.Admit(1000, low, Clock::now() + 10s).ok());
  const auto a1 = Clock::now();
  std::this_thread::sleep_for(1050ms);
  const auto b0 = Clock::now();
  ASSERT_TRUE(t.Admit(1000, low, Clock::now() + 10s).ok());
  const auto b1 = Clock::now();
  const int64_t slow = t.CompactionUnit();
  EXPECT_GE(slow, static_cast<int64_t>(25 * std::chrono::duration<double>(b0 - a1).count()));
  EXPECT_LE(slow, static_cast<int64_t>(25 * std::chrono::duration<double>(b1 - a0).count()));
  EXPECT_GE(slow, 26);
  // 200,000 rows in the next window: the EWMA W >= 33,000 rows/s > C / 2: one SSTable each.
  std::this_thread::sleep_for(1050ms);
  ASSERT_TRUE(t.Admit(200000, low, Clock::now() + 10s).ok());
  EXPECT_EQ(t.CompactionUnit(), 1);
  // No write for over 2 s: compaction takes everything again.
  std::this_thread::sleep_for(2100ms);
  EXPECT_EQ(t.CompactionUnit(), 0);
}

TEST(WriteThrottle, MinimumRateBoundsTheDelay) {
  WriteThrottle t({/*slowdown_count=*/1, /*stop_count=*/0, 20000, /*min_rate=*/500});
  t.NoteCompaction(10, 10.0);  // 1 row/s measured: the floor applies
  EXPECT_EQ(t.stats().rate_rows_per_second, 500);
}

TEST(WriteThrottle, DisabledNeverReadsTheBacklog) {
  WriteThrottle t({/*slowdown_count=*/0, /*stop_count=*/0, 20000, 500});
  int calls = 0;
  EXPECT_TRUE(t.Admit(
                   1,
                   [&] {
                     ++calls;
                     return L0Backlog{100, 100};
                   },
                   Clock::now())
                  .ok());
  EXPECT_EQ(calls, 0);
}

// ---- Through a table: a compactor that cannot commit stops writes; L0 stays bounded. ----

arrow::SchemaPtr Schema() {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("v", arrow::int64(), true)});
  return *table::DeclarePrimaryKey(s, {"id"});
}

arrow::RecordBatchPtr Rows(int64_t from, int64_t n) {
  std::vector<std::optional<int64_t>> ids, vs;
  for (int64_t i = from; i < from + n; ++i) {
    ids.push_back(i);
    vs.push_back(i * 3);
  }
  return std::make_shared<arrow::RecordBatch>(
      Schema(), n,
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids), arrow::MakeInt64Array(vs)});
}

std::map<int64_t, int> LiveIdCounts(table::LocalTable& t) {
  std::map<int64_t, int> out;
  for (const auto& b : testing::Live(t.Snapshot())) {
    arrow::Array ids = b->column(0);
    for (int64_t i = 0; i < b->num_rows(); ++i) ++out[ids.Value<int64_t>(i)];
  }
  return out;
}

TEST(WriteThrottle, FailingCompactionStopsWritesAtTheThresholdAndTheyResumeAfter) {
  strata::testing::TempDir dir;
  auto faults = std::make_shared<io::FaultInjectingStore>(*io::LocalObjectStore::Open(dir.path()));
  shard::ShardWriterOptions so;
  so.max_memtable_rows = 100;  // every 100-row insert seals a MemTable
  so.write_stall_timeout = 300ms;
  CompactionOptions co;
  co.l0_trigger_count = 2;
  co.l0_slowdown_count = 2;
  co.l0_stop_count = 4;
  co.poll_interval = 20ms;
  co.gc = false;
  auto created = table::LocalTable::Create(faults, "db/t", "t", Schema(), {}, so, co);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::shared_ptr<table::LocalTable> t = *created;
  // Compaction writes its fragment under {table}/data: it fails until the fault is removed.
  const int fault = faults->FailPutsUnder("db/t/data/");

  std::vector<int64_t> acked;
  Status refused;
  int64_t next = 0;
  for (int i = 0; i < 40 && refused.ok(); ++i) {
    auto r = t->Insert({Rows(next, 100)});
    if (r.ok()) {
      for (int64_t id = next; id < next + 100; ++id) acked.push_back(id);
    } else {
      refused = r.status();
    }
    next += 100;
  }
  ASSERT_EQ(refused.code(), StatusCode::kBackpressure) << refused.ToString();
  EXPECT_NE(refused.message().find("--compaction-l0-stop"), std::string::npos);
  const auto d = t->DescribeShards().at(0);
  EXPECT_LE(d.sstables.size(), 4u);  // L0 bounded by the stop count
  EXPECT_GE(d.sstables.size() + d.frozen.size(), 4u);
  EXPECT_GE(t->DescribeBase()->stats.compaction_failures, 1u);
  EXPECT_GE(t->DescribeBase()->stats.throttle.stop_timeouts, 1u);

  // The compactor can commit again: writes resume (a client retrying 503s gets through).
  faults->RemoveFault(fault);
  Status st;
  const auto until = Clock::now() + 30s;
  do {
    auto r = t->Insert({Rows(next, 100)});
    st = r.status();
    if (r.ok()) {
      for (int64_t id = next; id < next + 100; ++id) acked.push_back(id);
    }
  } while (st.code() == StatusCode::kBackpressure && Clock::now() < until);
  ASSERT_TRUE(st.ok()) << st.ToString();
  next += 100;
  // The stop releases writers at the compaction's install (inside Compact); the count follows
  // once Compact returns.
  for (int i = 0; i < 1500 && t->DescribeBase()->stats.compactions < 1; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_GE(t->DescribeBase()->stats.compactions, 1u);

  // Every acknowledged row exactly once; the refused write left nothing.
  const std::map<int64_t, int> live = LiveIdCounts(*t);
  EXPECT_EQ(live.size(), acked.size());
  for (int64_t id : acked) {
    auto it = live.find(id);
    ASSERT_TRUE(it != live.end()) << "acknowledged id " << id << " lost";
    EXPECT_EQ(it->second, 1) << "id " << id << " duplicated";
  }
}

}  // namespace
}  // namespace strata::base
