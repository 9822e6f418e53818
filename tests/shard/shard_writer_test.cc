// ShardWriter basics: puts and reopen, validation, concurrent puts, torn tail (issue 3 test 4),
// fencing (test 5), backpressure (test 6), newest wins (test 7).
#include "shard/shard_writer.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "../live_rows_util.h"
#include "arrow/builder.h"
#include "shard_test_util.h"
#include "wal/wal_entry.h"

namespace strata::shard {
namespace {

using strata::testing::Ids;
using strata::testing::MakeBatch;
using strata::testing::Range;
using namespace strata::shard::testing;
using namespace std::chrono_literals;

TEST(ShardWriter, PutIsVisibleAndSurvivesReopen) {
  ShardFixture f;
  {
    auto w = f.OpenOrDie();
    auto p1 = w->Put({MakeBatch(0, 10)});
    ASSERT_TRUE(p1.ok()) << p1.status().ToString();
    EXPECT_EQ(p1->num_rows, 10);
    EXPECT_EQ(p1->generation, 1u);
    auto p2 = w->Put({MakeBatch(10, 5), MakeBatch(15, 5)});
    ASSERT_TRUE(p2.ok());
    EXPECT_GT(p2->wal_position, p1->wal_position);
    EXPECT_EQ(SortedIds(*w), Range(0, 20));
    auto p3 = w->Put({MakeBatch(99, 0)});  // zero rows: nothing written
    ASSERT_TRUE(p3.ok());
    EXPECT_EQ(p3->wal_position, 0u);
    EXPECT_EQ((*w->Snapshot())->num_rows, 20);
  }
  auto w = f.OpenOrDie();
  EXPECT_EQ(Ids(strata::testing::Live(**w->Snapshot())), Range(0, 20));  // order kept
  EXPECT_EQ(w->writer_epoch(), 2u);
  // Hidden _rowid values are 0..19 and new puts continue after them.
  auto snap = *w->Snapshot();
  ASSERT_GE(snap->rowid_column, 0);
  ASSERT_TRUE(w->Put({MakeBatch(20, 1)}).ok());
  auto after = *w->Snapshot();
  const auto rows = strata::testing::Live(*after, /*storage=*/true);
  ASSERT_FALSE(rows.empty());
  const arrow::Array last = rows.back()->column(after->rowid_column);
  EXPECT_EQ(last.Value<uint64_t>(last.length() - 1), 20u);
}

TEST(ShardWriter, InvalidBatchesChangeNothing) {
  ShardFixture f;
  auto w = f.OpenOrDie();
  ASSERT_TRUE(w->Put({MakeBatch(0, 3)}).ok());
  auto wrong_type = std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(
          std::vector<arrow::FieldPtr>{arrow::field("id", arrow::utf8(), false)}),
      1, std::vector<arrow::ArrayDataPtr>{arrow::MakeUtf8Array({"x"})});
  auto r = w->Put({MakeBatch(100, 2), wrong_type});
  EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
  EXPECT_EQ(SortedIds(*w), Range(0, 3));
  w.reset();
  EXPECT_EQ(SortedIds(*f.OpenOrDie()), Range(0, 3));
}

TEST(ShardWriter, ConcurrentPutsGroupCommitAndSurviveReopen) {
  ShardFixture f;
  constexpr int kThreads = 4, kPuts = 40, kRows = 3;
  {
    auto w = f.OpenOrDie();
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPuts; ++i) {
          if (!w->Put({MakeBatch((t * kPuts + i) * kRows, kRows)}).ok()) ++failures;
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(SortedIds(*w), Range(0, kThreads * kPuts * kRows));
    auto st = w->stats();
    EXPECT_EQ(st.puts, static_cast<uint64_t>(kThreads * kPuts));
    EXPECT_LE(st.wal_entries, st.puts + 1);  // + the fence sentinel
  }
  EXPECT_EQ(SortedIds(*f.OpenOrDie()), Range(0, kThreads * kPuts * kRows));
}

// Issue 3 test 4: a torn last entry (truncated mid-file) or garbage appended as the next entry
// -> open succeeds with the valid prefix, later writes survive another reopen.
TEST(ShardWriter, TornTailOpensWithValidPrefix) {
  ShardFixture f;
  uint64_t last = 0;
  {
    auto w = f.OpenOrDie();
    for (int i = 0; i < 3; ++i) last = w->Put({MakeBatch(i * 4, 4)})->wal_position;
  }
  auto path = f.local->PathOf(wal::WalEntryKey(f.shard_prefix(), last));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  {
    auto w = f.OpenOrDie();
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(SortedIds(*w), Range(0, 8));
    ASSERT_TRUE(w->Put({MakeBatch(100, 1)}).ok());
  }
  auto want = Range(0, 8);
  want.push_back(100);
  uint64_t tip = 0;
  {
    auto w = f.OpenOrDie();
    EXPECT_EQ(SortedIds(*w), want);
    tip = w->Describe().wal_entry_position_last_seen;
  }
  // Garbage as the next entry file.
  ASSERT_TRUE(f.local->Put(wal::WalEntryKey(f.shard_prefix(), tip + 1), "garbage!garbage!").ok());
  auto w = f.OpenOrDie();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(SortedIds(*w), want);
  ASSERT_TRUE(w->Put({MakeBatch(200, 1)}).ok());
  w.reset();
  want.push_back(200);
  EXPECT_EQ(SortedIds(*f.OpenOrDie()), want);
}

// Issue 3 test 5: writer B opening the shard fences writer A.
TEST(ShardWriter, SecondWriterFencesFirst) {
  ShardFixture f;
  auto a = f.OpenOrDie();
  ASSERT_TRUE(a->Put({MakeBatch(0, 5)}).ok());
  ASSERT_TRUE(a->Put({MakeBatch(5, 5)}).ok());
  auto b = f.OpenOrDie();
  ASSERT_NE(b, nullptr);
  EXPECT_GT(b->writer_epoch(), a->writer_epoch());
  auto r = a->Put({MakeBatch(10, 1)});
  EXPECT_EQ(r.status().code(), StatusCode::kFenced) << r.status().ToString();
  EXPECT_EQ(a->health().code(), StatusCode::kFenced);
  EXPECT_EQ(a->force_seal_active().status().code(), StatusCode::kFenced);
  EXPECT_EQ(SortedIds(*b), Range(0, 10));  // every row A acknowledged
  EXPECT_EQ(SortedIds(*a), Range(0, 10));  // A still reads
  ASSERT_TRUE(b->Put({MakeBatch(10, 1)}).ok());
  // B flushes; A (fenced) cannot.
  auto sealed = b->force_seal_active();
  ASSERT_TRUE(sealed.ok() && sealed->has_value());
  EXPECT_EQ((*sealed)->rows, 11);
  EXPECT_TRUE(b->wait_for_generation((*sealed)->generation, In(10s)).ok());
  a.reset();
  b.reset();
  EXPECT_EQ(SortedIds(*f.OpenOrDie()), Range(0, 11));
}

// Issue 3 test 6: stalled flushes -> puts fail with Backpressure within write_stall_timeout
// plus a margin; memory stays bounded; writes resume once the stall clears.
TEST(ShardWriter, BackpressureFailsWithinStallTimeoutAndRecovers) {
  ShardFixture f;
  ShardWriterOptions o;
  o.max_memtable_rows = 50;
  o.max_unflushed_bytes = 64 << 10;
  o.write_stall_timeout = 500ms;
  auto w = f.OpenOrDie(o);
  io::PutFault hold;
  hold.key_contains = "_gen_";
  hold.hold = true;
  hold.fail = false;
  const int rule = f.faults->AddFault(hold);
  int64_t next = 0;
  Status failure;
  double failed_after_ms = 0;
  int64_t max_unflushed = 0;
  for (int i = 0; i < 10000 && failure.ok(); ++i) {
    const auto t0 = Clock::now();
    auto r = w->Put({MakeBatch(next, 20)});
    if (!r.ok()) {
      failure = r.status();
      failed_after_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      break;
    }
    next += 20;
    auto d = w->Describe();
    int64_t bytes = d.active.bytes;
    for (const auto& fr : d.frozen) bytes += fr.bytes;
    max_unflushed = std::max(max_unflushed, bytes);
  }
  ASSERT_EQ(failure.code(), StatusCode::kBackpressure) << failure.ToString();
  EXPECT_GE(failed_after_ms, 450);
  EXPECT_LE(failed_after_ms, 500 + 300);
  // Bounded: at most the limit plus one MemTable's worth (the put that crossed it).
  EXPECT_LE(max_unflushed, (64 << 10) + (32 << 10)) << max_unflushed;
  EXPECT_GE(w->stats().backpressure_timeouts, 1u);
  EXPECT_EQ(SortedIds(*w), Range(0, next));  // the failed put wrote nothing
  f.faults->RemoveFault(rule);
  ASSERT_TRUE(w->wait_for_flush_drain(In(20s)).ok());
  auto r = w->Put({MakeBatch(next, 20)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(SortedIds(*w), Range(0, next + 20));
}

arrow::RecordBatchPtr Kv(int64_t id, std::optional<int64_t> v) {
  return testing::KvRows({id}, {v});
}

std::vector<std::pair<int64_t, std::optional<int64_t>>> Rows(const ShardWriter& w) {
  std::vector<std::pair<int64_t, std::optional<int64_t>>> out;
  auto snap = *w.Snapshot();
  for (const auto& b : strata::testing::Live(*snap)) {
    arrow::Array id = b->column(0), v = b->column(1);
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      out.emplace_back(id.Value<int64_t>(i),
                       v.IsNull(i) ? std::nullopt : std::optional<int64_t>(v.Value<int64_t>(i)));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

using testing::OpenKv;

// Issue 3 test 7a: upsert id=7 {v:1} then {v:null} in one MemTable, flush -> v is null.
TEST(ShardWriter, NewestWinsAcrossFlushRepeated) {
  for (int rep = 0; rep < 50; ++rep) {
    ShardFixture f;
    auto w = std::move(OpenKv(f)).value();
    ASSERT_TRUE(w->Put({Kv(7, 1)}).ok());
    ASSERT_TRUE(w->Put({Kv(7, std::nullopt)}).ok());
    using Row = std::pair<int64_t, std::optional<int64_t>>;
    const std::vector<Row> want{{7, std::nullopt}};
    ASSERT_EQ(Rows(*w), want) << "rep " << rep << " before flush";
    auto sealed = w->force_seal_active();
    ASSERT_TRUE(sealed.ok() && sealed->has_value());
    EXPECT_EQ((*sealed)->rows, 2);
    ASSERT_TRUE(w->wait_for_generation((*sealed)->generation, In(10s)).ok());
    ASSERT_EQ(w->Describe().sstables.size(), 1u);
    ASSERT_EQ(Rows(*w), want) << "rep " << rep << " after flush";
    if (rep % 10 == 0) {
      w.reset();
      ASSERT_EQ(Rows(*std::move(OpenKv(f)).value()), want) << "rep " << rep << " reopened";
    }
  }
}

// Issue 3 test 7b: insert id=1, seal, delete id=1 before the flush -> gone before and after.
TEST(ShardWriter, DeleteBeforeFlushOfSealedRow) {
  ShardFixture f;
  auto w = std::move(OpenKv(f)).value();
  io::PutFault hold;
  hold.key_contains = "_gen_";
  hold.hold = true;
  hold.fail = false;
  const int rule = f.faults->AddFault(hold);
  ASSERT_TRUE(w->Put({Kv(1, 10), Kv(2, 20)}).ok());
  auto sealed = w->force_seal_active();
  ASSERT_TRUE(sealed.ok() && sealed->has_value());
  auto keys = std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(
          std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64(), false)}),
      1, std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array({1})});
  auto d = w->Delete({keys});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->generation, (*sealed)->generation + 1);
  using Row = std::pair<int64_t, std::optional<int64_t>>;
  const std::vector<Row> want{{2, 20}};
  EXPECT_EQ(Rows(*w), want);
  EXPECT_EQ(w->Describe().frozen.size(), 1u);
  f.faults->RemoveFault(rule);
  ASSERT_TRUE(w->wait_for_generation((*sealed)->generation, In(10s)).ok());
  EXPECT_EQ(Rows(*w), want);
  // Flush the tombstone too, then reopen.
  auto s2 = w->force_seal_active();
  ASSERT_TRUE(s2.ok() && s2->has_value());
  ASSERT_TRUE(w->wait_for_generation((*s2)->generation, In(10s)).ok());
  EXPECT_EQ(Rows(*w), want);
  w.reset();
  EXPECT_EQ(Rows(*std::move(OpenKv(f)).value()), want);
}

// Issue 3 test 7c: 30 rows inserted, no flush, kill -9, restart -> 30 rows.
TEST(ShardWriter, ThirtyRowsSurviveKill9) {
  ShardFixture f;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    auto store = *io::LocalObjectStore::Open(f.dir.path());
    auto w = ShardWriter::Open(store, kTable, kShardId, strata::testing::TestSchema());
    if (!w.ok()) _exit(2);
    for (int i = 0; i < 30; ++i) {
      if (!(*w)->Put({MakeBatch(i, 1)}).ok()) _exit(3);
    }
    char c = 1;
    if (::write(fds[1], &c, 1) != 1) _exit(4);
    ::pause();
    _exit(5);
  }
  ::close(fds[1]);
  char c = 0;
  ASSERT_EQ(::read(fds[0], &c, 1), 1);
  ::close(fds[0]);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  auto w = f.OpenOrDie();
  EXPECT_EQ(SortedIds(*w), Range(0, 30));
  EXPECT_EQ((*w->Snapshot())->num_rows, 30);
}

}  // namespace
}  // namespace strata::shard
