// Compaction and base rewrite of a base shared by several shards (base/base_table.h ShardList,
// docs/SHARDING.md "One base for all shards"): the SSTables of every shard merge into ONE
// fragment appended once, each shard's part installed in its writer; deletion vectors and the
// rewrite judge each mark by the compacted generation of the shard (lane) that made it; a
// reopen from the committed manifest sees the same rows; and concurrent upserts in both shards
// while compactions and rewrites install never show a key twice or an older value.
// The table's lock is played by `table_mu` (what LocalTable's mu_ does): views are built under
// it shared, the commit step holds it exclusively.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <shared_mutex>
#include <thread>

#include "../shard/shard_test_util.h"
#include "base/base_table.h"

namespace strata::base {
namespace {

using namespace std::chrono_literals;
using shard::ShardWriter;
using shard::ShardWriterOptions;
using shard::testing::kTable;
using shard::testing::KvRows;
using shard::testing::KvSchema;

using Model = std::map<int64_t, int64_t>;  // id -> v

std::shared_ptr<arrow::Schema> KeysSchema() {
  return std::make_shared<arrow::Schema>(
      std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64(), false)});
}

arrow::RecordBatchPtr Keys(const std::vector<int64_t>& ids) {
  std::vector<std::optional<int64_t>> idv(ids.begin(), ids.end());
  return std::make_shared<arrow::RecordBatch>(
      KeysSchema(), static_cast<int64_t>(ids.size()),
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(idv)});
}

// A table of two shards sharing one base: even keys in shard "even" (lane 0), odd keys in
// "odd" (lane 1).
struct Table {
  shard::testing::ShardFixture f;
  std::shared_ptr<BaseTable> base;
  std::vector<std::unique_ptr<ShardWriter>> shards;
  format::BaseTable committed;  // the base as the last commit left it
  int commits = 0;
  std::shared_mutex table_mu;
  int64_t max_memtable_rows = 0;

  static CompactionOptions Manual() {
    CompactionOptions o;
    o.background = false;
    o.gc = false;
    o.min_checkpoint_rows = 50;
    return o;
  }
  // Opens (or reopens) the base from `committed` and both shard writers over it.
  void Open() {
    shards.clear();
    if (base) base->Stop();
    ShardWriterOptions probe_opts;
    probe_opts.primary_key = {"id"};
    auto probe = ShardWriter::Open(f.faults, kTable, "probe", KvSchema(), probe_opts);
    ASSERT_TRUE(probe.ok()) << probe.status().ToString();
    auto b =
        BaseTable::Open(f.faults, kTable, committed, (*probe)->storage_schema(), {0}, {}, Manual());
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    base = *b;
    for (int lane = 0; lane < 2; ++lane) {
      ShardWriterOptions o;
      o.primary_key = {"id"};
      o.base = base->source();
      o.base_lane = lane;
      o.base_in_view = false;
      if (max_memtable_rows > 0) o.max_memtable_rows = max_memtable_rows;
      const std::string id = lane == 0 ? "even" : "odd";
      auto it = committed.compacted_generation().find(id);
      o.compacted_generation = it == committed.compacted_generation().end() ? 0 : it->second;
      auto w = ShardWriter::Open(f.faults, kTable, id, KvSchema(), o);
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      shards.push_back(std::move(*w));
    }
  }
  ShardList List() { return {shards[0].get(), shards[1].get()}; }
  BaseTable::CommitFn Commit() {
    return [this](const format::BaseTable& next, const std::function<Status()>& install) {
      std::unique_lock<std::shared_mutex> lock(table_mu);
      committed = next;
      ++commits;
      return install();
    };
  }
  Result<CompactionResult> Compact() {
    return base->Compact(List(), Commit(), shard::Clock::now() + 60s);
  }
  Result<RewriteResult> Rewrite() {
    return base->Rewrite(List(), Commit(), shard::Clock::now() + 60s);
  }

  // Routes rows by parity.
  void Put(const std::vector<int64_t>& ids, int64_t v, Model* m) {
    for (int parity = 0; parity < 2; ++parity) {
      std::vector<int64_t> part;
      for (int64_t id : ids) {
        if (id % 2 == parity) part.push_back(id);
      }
      if (part.empty()) continue;
      std::vector<std::optional<int64_t>> vs(part.size(), v);
      ASSERT_TRUE(shards[static_cast<size_t>(parity)]->Put({KvRows(part, vs)}).ok());
      for (int64_t id : part) (*m)[id] = v;
    }
  }
  void Delete(const std::vector<int64_t>& ids, Model* m) {
    for (int parity = 0; parity < 2; ++parity) {
      std::vector<int64_t> part;
      for (int64_t id : ids) {
        if (id % 2 == parity) part.push_back(id);
      }
      if (part.empty()) continue;
      ASSERT_TRUE(shards[static_cast<size_t>(parity)]->Delete({Keys(part)}).ok());
      for (int64_t id : part) m->erase(id);
    }
  }
  void Flush(int lane) {
    auto sealed = shards[static_cast<size_t>(lane)]->force_seal_active();
    ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
    // Also MemTables sealed earlier by max_memtable_rows, still flushing.
    ASSERT_TRUE(
        shards[static_cast<size_t>(lane)]->wait_for_flush_drain(shard::Clock::now() + 60s).ok());
  }
  size_t L0(int lane) { return shards[static_cast<size_t>(lane)]->Describe().sstables.size(); }

  // The table's view under table_mu shared: the base once (both lanes' visibilities), then
  // each shard's sources. Fails on a key seen twice or a source whose live_rows disagrees.
  Model Read(int64_t* base_live = nullptr) {
    std::shared_lock<std::shared_mutex> lock(table_mu);
    const shard::BaseSource& src_base = *base->source();
    const shard::BaseSource::State st = src_base.CurrentState();
    auto vis = std::make_shared<shard::Visibility>();
    std::vector<std::shared_ptr<const shard::ShardSnapshot>> snaps;
    for (const auto& w : shards) {
      snaps.push_back(*w->Snapshot());
      vis->lanes.push_back(snaps.back()->visibility);
    }
    std::vector<shard::SourceView> sources;
    if (auto v = src_base.View(st, vis, {}, {0})) sources.push_back(std::move(*v));
    for (const auto& s : snaps) sources.insert(sources.end(), s->sources.begin(), s->sources.end());
    lock.unlock();
    Model out;
    if (base_live) *base_live = 0;
    for (const shard::SourceView& src : sources) {
      int64_t live = 0;
      for (size_t k = 0; k < src.batches.size(); ++k) {
        const arrow::RecordBatchPtr& b = src.batches[k];
        const arrow::Array id = b->column(0), v = b->column(1), tomb = b->column(2);
        for (int64_t r = 0; r < b->num_rows(); ++r) {
          if (!src.IsLive(src.batch_starts[k] + r)) continue;
          ++live;
          if (tomb.IsValid(r) && tomb.BoolValue(r)) continue;
          const int64_t key = id.Value<int64_t>(r);
          EXPECT_EQ(out.count(key), 0u) << "key " << key << " live twice (" << src.name << ")";
          out[key] = v.Value<int64_t>(r);
        }
      }
      EXPECT_EQ(live, src.live_rows) << src.name << ": live_rows disagrees with IsLive";
      if (base_live && src.name == "base") *base_live = live;
    }
    return out;
  }
  ~Table() {
    shards.clear();
    if (base) base->Stop();
  }
};

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> out;
  for (int64_t i = from; i < to; ++i) out.push_back(i);
  return out;
}

int64_t DeletedRows(const format::BaseTable& b) {
  int64_t n = 0;
  for (const auto& f : b.fragments()) n += f.deleted_rows();
  return n;
}

TEST(SharedBaseCompaction, MergesEveryShardIntoOneFragmentJudgingMarksByTheirLane) {
  Table t;
  ASSERT_NO_FATAL_FAILURE(t.Open());
  Model m;
  ASSERT_NO_FATAL_FAILURE(t.Put(Range(0, 200), 0, &m));
  t.Flush(0);
  t.Flush(1);
  ASSERT_NO_FATAL_FAILURE(t.Put(Range(0, 100), 1, &m));  // upserts in both shards
  ASSERT_NO_FATAL_FAILURE(t.Delete(Range(180, 200), &m));
  t.Flush(0);
  t.Flush(1);
  ASSERT_EQ(t.L0(0), 2u);
  ASSERT_EQ(t.L0(1), 2u);

  // One compaction takes both shards' SSTables into ONE fragment of the live rows.
  auto r = t.Compact();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->compacted_generations.size(), 4u);
  EXPECT_EQ(r->rows_in, 200 + 100 + 20);
  EXPECT_EQ(r->rows_written, 180);
  EXPECT_EQ(t.committed.fragments_size(), 1);
  ASSERT_EQ(t.committed.compacted_generation().size(), 2u);
  EXPECT_EQ(t.committed.compacted_generation().at("even"), t.shards[0]->compacted_generation());
  EXPECT_EQ(t.committed.compacted_generation().at("odd"), t.shards[1]->compacted_generation());
  EXPECT_EQ(t.shards[0]->compacted_generation(), 2u);
  EXPECT_EQ(t.shards[1]->compacted_generation(), 2u);
  EXPECT_EQ(t.L0(0), 0u);
  EXPECT_EQ(t.L0(1), 0u);
  int64_t base_live = 0;
  EXPECT_EQ(t.Read(&base_live), m);
  EXPECT_EQ(base_live, 180);

  // Both shards upsert keys [0, 50); only the even shard flushes, and a compaction takes only
  // its SSTable: the deletion vector kills the even keys' base rows (lane 0 compacted), not
  // the odd ones (lane 1's marks name an uncompacted generation, still in its MemTable).
  ASSERT_NO_FATAL_FAILURE(t.Put(Range(0, 50), 2, &m));
  t.Flush(0);
  r = t.Compact();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->compacted_generations, std::vector<uint64_t>{3});
  EXPECT_EQ(r->rows_written, 25);
  EXPECT_EQ(t.committed.compacted_generation().at("even"), 3u);
  EXPECT_EQ(t.committed.compacted_generation().at("odd"), 2u);
  EXPECT_EQ(DeletedRows(t.committed), 25);  // the even keys 0, 2, ..., 48 of the first fragment
  EXPECT_EQ(t.Read(&base_live), m);
  EXPECT_EQ(base_live, 180 - 25 + 25 - 25);  // the odd keys' base rows are dead by lane 1

  // A reopen from the committed manifest: deletion vectors, each shard's compacted generation
  // and the odd shard's WAL give the same rows.
  ASSERT_NO_FATAL_FAILURE(t.Open());
  EXPECT_EQ(t.Read(), m);
  t.Flush(1);
  r = t.Compact();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->compacted_generations.size(), 1u);
  EXPECT_EQ(t.committed.compacted_generation().at("even"), 3u);
  EXPECT_GT(t.committed.compacted_generation().at("odd"), 2u);
  EXPECT_EQ(DeletedRows(t.committed), 50);
  EXPECT_EQ(t.Read(&base_live), m);
  EXPECT_EQ(base_live, 180);

  // The rewrite keeps exactly the live rows.
  auto rw = t.Rewrite();
  ASSERT_TRUE(rw.ok()) << rw.status().ToString();
  EXPECT_EQ(rw->rows_before, 180 + 25 + 25);
  EXPECT_EQ(rw->rows_after, 180);
  EXPECT_EQ(t.Read(&base_live), m);
  EXPECT_EQ(base_live, 180);
  ASSERT_NO_FATAL_FAILURE(t.Open());
  EXPECT_EQ(t.Read(&base_live), m);
  EXPECT_EQ(base_live, 180);
}

TEST(SharedBaseCompaction, ARewriteKeepsRowsOnlyOneLaneHasCompactedAway) {
  Table t;
  ASSERT_NO_FATAL_FAILURE(t.Open());
  Model m;
  ASSERT_NO_FATAL_FAILURE(t.Put(Range(0, 100), 0, &m));
  t.Flush(0);
  t.Flush(1);
  ASSERT_TRUE(t.Compact().ok());
  // Both shards upsert every key; the odd shard flushes and compacts, the even one does not.
  // Its marks (lane 0, generation 2, in its MemTable) are not compacted: the rewrite must copy
  // the even keys' base rows and carry their marks, or a reopen would lose nothing but a
  // view in between would show the even keys twice.
  ASSERT_NO_FATAL_FAILURE(t.Put(Range(0, 100), 1, &m));
  t.Flush(1);
  ASSERT_TRUE(t.Compact().ok());
  auto rw = t.Rewrite();
  ASSERT_TRUE(rw.ok()) << rw.status().ToString();
  EXPECT_EQ(rw->rows_before, 150);
  EXPECT_EQ(rw->rows_after, 100);  // 50 even keys (value 0, marked by lane 0) + 50 odd (value 1)
  int64_t base_live = 0;
  EXPECT_EQ(t.Read(&base_live), m);
  EXPECT_EQ(base_live, 50);
  ASSERT_NO_FATAL_FAILURE(t.Open());
  EXPECT_EQ(t.Read(&base_live), m);
  EXPECT_EQ(base_live, 50);
  t.Flush(0);
  ASSERT_TRUE(t.Compact().ok());
  EXPECT_EQ(t.Read(&base_live), m);
  EXPECT_EQ(base_live, 100);
}

TEST(SharedBaseCompaction, AnInstallRefusedForOneShardChangesNothing) {
  Table t;
  ASSERT_NO_FATAL_FAILURE(t.Open());
  Model m;
  ASSERT_NO_FATAL_FAILURE(t.Put(Range(0, 40), 0, &m));
  t.Flush(0);
  t.Flush(1);
  const int64_t rows_before = t.base->source()->rows();
  // A part naming a generation the odd shard does not have is refused before the shared
  // fragment is appended.
  shard::CompactionInstall bad;
  bad.compacted_generation = 7;
  bad.origins = {{7, 0}};
  bad.first_row = 0;
  EXPECT_TRUE(t.shards[1]->CheckCompactionInstall(bad, 1).IsInvalid());
  bad.origins = {{1, 0}};
  bad.compacted_generation = 1;
  EXPECT_TRUE(t.shards[1]->CheckCompactionInstall(bad, 0).IsInvalid());  // rows not in the base
  EXPECT_TRUE(t.shards[1]->CheckCompactionInstall(bad, 1).ok());
  EXPECT_EQ(t.base->source()->rows(), rows_before);
  EXPECT_EQ(t.Read(), m);
}

TEST(SharedBaseCompaction, ConcurrentUpsertsInBothShardsWhileCompactionsInstall) {
  Table t;
  t.max_memtable_rows = 60;  // seals and flushes while compactions run
  ASSERT_NO_FATAL_FAILURE(t.Open());
  constexpr int64_t kKeys = 300;
  Model m;
  ASSERT_NO_FATAL_FAILURE(t.Put(Range(0, kKeys), 0, &m));
  t.Flush(0);
  t.Flush(1);
  ASSERT_TRUE(t.Compact().ok());

  constexpr int kRounds = 8;
  auto writer = [&](int parity) {
    for (int64_t round = 1; round <= kRounds; ++round) {
      for (int64_t k = parity; k < kKeys; k += 30) {
        std::vector<int64_t> ids;
        for (int64_t j = k; j < std::min(kKeys, k + 30); j += 2) ids.push_back(j);
        std::vector<std::optional<int64_t>> vs(ids.size(), round);
        ASSERT_TRUE(t.shards[static_cast<size_t>(parity)]->Put({KvRows(ids, vs)}).ok());
      }
    }
  };
  std::atomic<bool> done{false};
  std::atomic<int> views{0};
  std::thread reader([&] {
    Model last;
    while (!done.load()) {
      Model rows = t.Read();
      ASSERT_EQ(rows.size(), static_cast<size_t>(kKeys));
      for (const auto& [k, v] : rows) {
        ASSERT_GE(v, last.count(k) ? last[k] : 0) << "key " << k << " went back";
      }
      last = std::move(rows);
      ++views;
    }
  });
  std::atomic<int> compactions{0}, rewrites{0};
  std::thread compactor([&] {
    while (!done.load()) {
      auto r = t.Compact();
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      if (!r->compacted_generations.empty()) ++compactions;
      if (compactions % 3 == 2) {
        auto rw = t.Rewrite();
        ASSERT_TRUE(rw.ok()) << rw.status().ToString();
        ++rewrites;
      }
      std::this_thread::sleep_for(2ms);
    }
  });
  std::thread a(writer, 0), b(writer, 1);
  a.join();
  b.join();
  done = true;
  reader.join();
  compactor.join();
  EXPECT_GT(compactions.load(), 0);
  EXPECT_GT(views.load(), 0);
  for (int64_t k = 0; k < kKeys; ++k) m[k] = kRounds;
  EXPECT_EQ(t.Read(), m);
  t.Flush(0);
  t.Flush(1);
  ASSERT_TRUE(t.Compact().ok());
  int64_t base_live = 0;
  EXPECT_EQ(t.Read(&base_live), m);
  EXPECT_EQ(base_live, kKeys);
  ASSERT_NO_FATAL_FAILURE(t.Open());
  EXPECT_EQ(t.Read(&base_live), m);
  EXPECT_EQ(base_live, kKeys);
}

// Every put of a two-shard compaction (fragment files, deletion vector, each shard's manifest
// update after the commit) failing in turn, then a reopen from what was committed: every row
// once, at its newest value, and the next compaction takes what is left.
TEST(SharedBaseCompaction, AFailedPutAtEveryStepThenAReopenKeepsEveryRowOnce) {
  int failed = 0, succeeded = 0;
  for (int n = 1; n <= 12; ++n) {
    SCOPED_TRACE("put " + std::to_string(n) + " fails");
    Table t;
    ASSERT_NO_FATAL_FAILURE(t.Open());
    Model m;
    ASSERT_NO_FATAL_FAILURE(t.Put(Range(0, 60), 0, &m));
    t.Flush(0);
    t.Flush(1);
    ASSERT_TRUE(t.Compact().ok());
    ASSERT_NO_FATAL_FAILURE(t.Put(Range(0, 30), 1, &m));
    ASSERT_NO_FATAL_FAILURE(t.Delete(Range(50, 60), &m));
    t.Flush(0);
    t.Flush(1);
    const int commits = t.commits;
    t.f.faults->FailNthPut(n);
    auto r = t.Compact();
    t.f.faults->ClearFaults();
    if (r.ok()) {
      ++succeeded;
      EXPECT_EQ(t.commits, commits + 1);
    } else {
      ++failed;
      EXPECT_EQ(t.commits, commits);  // nothing committed, nothing installed
    }
    EXPECT_EQ(t.Read(), m);
    ASSERT_NO_FATAL_FAILURE(t.Open());
    EXPECT_EQ(t.Read(), m);
    ASSERT_TRUE(t.Compact().ok());
    int64_t base_live = 0;
    EXPECT_EQ(t.Read(&base_live), m);
    EXPECT_EQ(base_live, 50);
  }
  EXPECT_GT(failed, 0);
  EXPECT_GT(succeeded, 0);
}

}  // namespace
}  // namespace strata::base
