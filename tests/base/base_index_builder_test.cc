// The base table's index builder (base/base_index_builder.cc, base_table.h "Index builds"): a
// compaction never trains an IVF index (it commits the fragment without it and the base is
// searched exactly meanwhile); the builder trains and indexes off the work lock while
// compactions keep committing, then catches up on their rows and installs an index covering
// every base row; a retrain keeps the old index serving (grown by compactions) until the new
// one is swapped in. CompactionOptions::index_build_hook holds the builder between its
// off-lock build and its install.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "../io/storage_test_util.h"
#include "arrow/builder.h"
#include "clustered_vectors_util.h"
#include "io/local_object_store.h"
#include "query/vector_search.h"
#include "table/local_table.h"
#include "table/primary_key.h"

namespace strata::base {
namespace {

using strata::testing::clustered::Data;
using strata::testing::clustered::Ids;
using strata::testing::clustered::kDim;
using strata::testing::clustered::Rows;
using strata::testing::clustered::VecSchema;

// Holds the index builder at its hook while closed.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = true;
  int arrived = 0;  // builds that reached the hook
  void Pass() {
    std::unique_lock<std::mutex> lock(mu);
    ++arrived;
    cv.notify_all();
    cv.wait(lock, [this] { return open; });
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu);
    open = false;
    arrived = 0;
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
  bool WaitArrived(int n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(60), [&] { return arrived >= n; });
  }
};

struct Fixture {
  strata::testing::TempDir dir;
  std::shared_ptr<io::LocalObjectStore> store = *io::LocalObjectStore::Open(dir.path());
  std::shared_ptr<Gate> gate = std::make_shared<Gate>();
  // Holds the builder at the third abandon check of a build (inside an IVF training).
  std::shared_ptr<Gate> train_gate = std::make_shared<Gate>();
  std::shared_ptr<table::LocalTable> table;
  Data data{11};
  int64_t next_id = 0;
  std::vector<float> all;  // every inserted vector, by id

  // `background`: the maintenance thread compacts at 2 SSTables (writes stop at 3) and polls
  // every 20 ms; otherwise only Compact() compacts.
  explicit Fixture(const std::string& type, const std::string& params_json,
                   bool background = false) {
    shard::ShardWriterOptions writer;
    writer.max_memtable_rows = 1000000;
    writer.max_memtable_bytes = 1ll << 32;
    writer.max_memtable_age = std::chrono::hours(1);
    writer.write_stall_timeout = std::chrono::milliseconds(500);
    CompactionOptions co;
    co.background = background;
    co.l0_trigger_count = 2;
    co.l0_slowdown_count = 2;
    co.l0_stop_count = 3;
    co.poll_interval = std::chrono::milliseconds(20);
    co.idle = std::chrono::milliseconds(0);
    co.gc = false;
    co.min_checkpoint_rows = 100;
    co.index_build_hook = [g = gate](const std::string&) { g->Pass(); };
    co.index_abandon_check_hook = [g = train_gate](const std::string&, int64_t check) {
      if (check == 3) g->Pass();
    };
    auto t = table::LocalTable::Create(store, "default/vec", "vec", VecSchema(), {}, writer, co);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    table = *t;
    index::IndexSpec spec;
    spec.name = "vector_idx";
    spec.column = "vector";
    spec.kind = index::IndexKind::kHnsw;
    spec.requested_type = type;
    spec.params_json = params_json;
    spec.base_ivf = true;
    auto made = table->CreateIndex(spec);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
  }
  ~Fixture() {
    gate->Open();  // a failed assertion must not leave the builder held (Stop joins it)
    train_gate->Open();
    table.reset();
  }
  // Inserts n rows and flushes them into an SSTable.
  Status AddAndFlush(int64_t n) {
    std::vector<float> v = data.Next(n);
    STRATA_RETURN_IF_ERROR(table->Insert({Rows(next_id, v)}).status());
    next_id += n;
    all.insert(all.end(), v.begin(), v.end());
    return table->Flush(shard::Clock::now() + std::chrono::minutes(1)).status();
  }
  // Inserts n rows, flushes and compacts them into the base (does not wait for indexes).
  Result<CompactionResult> AddAndCompact(int64_t n) {
    STRATA_RETURN_IF_ERROR(AddAndFlush(n));
    return table->Compact(shard::Clock::now() + std::chrono::minutes(5));
  }
  int64_t BaseRows() { return table->DescribeBase()->rows; }
  int64_t RowsIndexed() { return table->DescribeBase()->indexes.at(0).rows_indexed; }
  std::optional<table::BaseIndexBuilt> Base() {
    for (const auto& s : table->ListIndexes()) {
      if (s.spec.name == "vector_idx") return s.base;
    }
    return std::nullopt;
  }
  // Until the base index covers every row and is not due for retraining.
  void WaitIndexes() {
    for (int i = 0; i < 1200; ++i) {
      auto b = Base();
      if (b.has_value() && b->rows >= BaseRows() && b->rows < 4 * b->trained_rows) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "the base index was not ready in 60 s";
  }
  Result<query::QueryResult> Search(const float* q, bool exact, int64_t refine = 0) {
    query::VectorSearchOptions o;
    o.query.assign(q, q + kDim);
    o.k = 10;
    o.columns = {{"id", ""}};
    o.bypass_vector_index = exact;
    if (refine > 0) o.refine_factor = refine;
    o.nprobes = 20;
    return query::VectorSearch(table->Snapshot(), o);
  }
  // Searches for `queries` stored rows: each finds itself first; the fraction of the exact
  // top 10 the (index) search returns.
  double CheckSearches(const std::vector<int64_t>& rows) {
    int64_t hits = 0, total = 0;
    for (int64_t id : rows) {
      auto exact = Search(&all[id * kDim], true);
      auto got = Search(&all[id * kDim], false, 10);
      EXPECT_TRUE(exact.ok() && got.ok());
      if (!exact.ok() || !got.ok()) return 0;
      EXPECT_FALSE(Ids(*got).empty());
      if (!Ids(*got).empty()) {
        EXPECT_EQ(Ids(*got)[0], id);
      }
      const auto t = Ids(*exact);
      const std::set<int64_t> truth(t.begin(), t.end());
      for (int64_t i : Ids(*got)) hits += truth.count(i);
      total += static_cast<int64_t>(t.size());
    }
    return total == 0 ? 0 : static_cast<double>(hits) / static_cast<double>(total);
  }
};

TEST(BaseIndexBuilder, CompactionCommitsWithoutTrainingAndTheBaseAnswersExactly) {
  Fixture f("IVF_PQ", R"({"num_sub_vectors":8})");
  f.gate->Close();
  auto c = f.AddAndCompact(3000);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->rows_written, 3000);
  // Committed without the IVF index: nothing indexed, no base index built yet.
  EXPECT_EQ(f.BaseRows(), 3000);
  EXPECT_EQ(f.RowsIndexed(), 0);
  EXPECT_FALSE(f.Base().has_value());
  // Meanwhile the base is scanned exactly: the same ten as exact search.
  EXPECT_EQ(f.CheckSearches({0, 1234, 2999}), 1.0);
  auto plan = f.Search(&f.all[0], false);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->plan.at(0).find("base: exact scan of 3000 rows"), std::string::npos)
      << plan->plan.at(0);
  // The builder trained off the lock and waits at the hook; once released it installs.
  ASSERT_TRUE(f.gate->WaitArrived(1));
  EXPECT_EQ(f.RowsIndexed(), 0);
  f.gate->Open();
  ASSERT_NO_FATAL_FAILURE(f.WaitIndexes());
  auto b = f.Base();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->type, "IVF_PQ");
  EXPECT_EQ(b->rows, 3000);
  EXPECT_EQ(b->trained_rows, 3000);
  EXPECT_EQ(f.RowsIndexed(), 3000);
  plan = f.Search(&f.all[0], false, 10);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->plan.at(0).find("base: IVF_PQ 'vector_idx'"), std::string::npos)
      << plan->plan.at(0);
  const double recall = f.CheckSearches({0, 500, 1234, 2000, 2999});
  std::printf("[figures] IVF_PQ refine 10 recall@10 on own rows %.3f\n", recall);
  EXPECT_GE(recall, 0.8);
}

TEST(BaseIndexBuilder, CompactionsCommitWhileABuildRunsAndTheIndexCoversThemAll) {
  Fixture f("IVF_FLAT", "{}");
  f.gate->Close();
  ASSERT_TRUE(f.AddAndCompact(3000).ok());
  // The builder has trained and indexed the 3,000 rows and is held before its install.
  ASSERT_TRUE(f.gate->WaitArrived(1));
  // Two compactions commit meanwhile (not Busy: the builder does not hold the work lock).
  for (int i = 0; i < 2; ++i) {
    auto c = f.AddAndCompact(1000);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->rows_written, 1000);
  }
  EXPECT_EQ(f.BaseRows(), 5000);
  EXPECT_EQ(f.RowsIndexed(), 0);
  EXPECT_EQ(f.CheckSearches({10, 3500, 4999}), 1.0);  // exact scan of the base
  f.gate->Open();
  ASSERT_NO_FATAL_FAILURE(f.WaitIndexes());
  auto b = f.Base();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->type, "IVF_FLAT");
  EXPECT_EQ(b->trained_rows, 3000);
  EXPECT_EQ(b->rows, 5000);  // caught up on both compactions' rows
  EXPECT_EQ(f.RowsIndexed(), 5000);
  EXPECT_GE(f.CheckSearches({10, 2999, 3000, 3500, 4000, 4999}), 0.9);
  // A later compaction grows the installed index as before.
  ASSERT_TRUE(f.AddAndCompact(500).ok());
  EXPECT_EQ(f.RowsIndexed(), 5500);
  EXPECT_GE(f.CheckSearches({5000, 5499}), 0.9);
}

TEST(BaseIndexBuilder, RetrainedIndexReplacesTheServingOneAndCoversEveryRow) {
  Fixture f("IVF_PQ", R"({"num_sub_vectors":8})");
  ASSERT_TRUE(f.AddAndCompact(3000).ok());
  ASSERT_NO_FATAL_FAILURE(f.WaitIndexes());
  ASSERT_EQ(f.Base()->trained_rows, 3000);
  f.gate->Close();
  // 12,000 rows >= 4 x 3,000: a retrain is due; the old index keeps serving, grown.
  ASSERT_TRUE(f.AddAndCompact(9000).ok());
  auto b = f.Base();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->trained_rows, 3000);
  EXPECT_EQ(b->rows, 12000);
  ASSERT_TRUE(f.gate->WaitArrived(1));  // the retrained index waits to be installed
  auto c = f.AddAndCompact(1000);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  b = f.Base();
  EXPECT_EQ(b->trained_rows, 3000);
  EXPECT_EQ(b->rows, 13000);
  EXPECT_GE(f.CheckSearches({100, 12500}), 0.8);
  f.gate->Open();
  ASSERT_NO_FATAL_FAILURE(f.WaitIndexes());
  for (int i = 0; i < 1200 && f.Base()->trained_rows == 3000; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  b = f.Base();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->trained_rows, 12000);  // the snapshot the retrain started from
  EXPECT_EQ(b->rows, 13000);          // and the compaction's rows caught up under the lock
  EXPECT_EQ(f.RowsIndexed(), 13000);
  EXPECT_EQ(b->num_partitions, 110);  // round(sqrt(12000))
  EXPECT_GE(f.CheckSearches({0, 3000, 11999, 12000, 12999}), 0.8);
}

// Issue 15: a dropped definition (or Stop: the same check) abandons its IVF training midway
// instead of running it to the end (minutes at 1M rows, which also held a server's shutdown).
TEST(BaseIndexBuilder, DroppingTheDefinitionAbandonsItsTrainingMidway) {
  Fixture f("IVF_PQ", R"({"num_sub_vectors":8})");
  f.train_gate->Close();
  ASSERT_TRUE(f.AddAndCompact(3000).ok());
  // The builder is inside FAISS's training (its third abandon check) and held there.
  ASSERT_TRUE(f.train_gate->WaitArrived(1));
  ASSERT_TRUE(f.table->DropIndex("vector_idx").ok());
  f.train_gate->Open();
  base::BaseStats stats;
  for (int i = 0; i < 1200; ++i) {
    stats = f.table->DescribeBase()->stats;
    if (stats.index_builds_abandoned > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(stats.index_builds_abandoned, 1u);
  EXPECT_EQ(stats.index_builds, 0u);
  {
    std::lock_guard<std::mutex> lock(f.gate->mu);
    EXPECT_EQ(f.gate->arrived, 0);  // it never reached the install step
  }
  EXPECT_TRUE(f.table->DescribeBase()->indexes.empty());
  // A new definition on the column is built and installed as usual.
  index::IndexSpec spec;
  spec.name = "vector_idx2";
  spec.column = "vector";
  spec.kind = index::IndexKind::kHnsw;
  spec.requested_type = "IVF_FLAT";
  spec.params_json = "{}";
  spec.base_ivf = true;
  ASSERT_TRUE(f.table->CreateIndex(spec).ok());
  for (int i = 0; i < 1200; ++i) {
    stats = f.table->DescribeBase()->stats;
    if (stats.index_builds > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(stats.index_builds, 1u);
  EXPECT_EQ(stats.index_builds_abandoned, 1u);
  ASSERT_EQ(f.table->DescribeBase()->indexes.size(), 1u);
  EXPECT_EQ(f.table->DescribeBase()->indexes[0].rows_indexed, 3000);
}

// Issue 15: with background compaction, a table's first compaction waits while its IVF
// definition trains on the L0 SSTables' rows (which answer through their HNSW graphs), and
// writes are not stopped by the L0 backlog meanwhile; the first compaction then adds its rows
// to the trained index, so the base is never searched exactly (no exact-scan window).
TEST(BaseIndexBuilder, FirstCompactionWaitsForATrainingOnL0Rows) {
  Fixture f("IVF_PQ", R"({"num_sub_vectors":8})", /*background=*/true);
  f.train_gate->Close();
  // One SSTable: no compaction due, no training. Two reach the trigger; the builder starts
  // training on their 2,000 rows.
  ASSERT_TRUE(f.AddAndFlush(1000).ok());
  ASSERT_TRUE(f.AddAndFlush(1000).ok());
  ASSERT_TRUE(f.train_gate->WaitArrived(1));
  // Two more SSTables: 4 >= the stop count (3), yet no write waits or fails: the throttle is
  // suspended while compaction waits for the training.
  ASSERT_TRUE(f.AddAndFlush(1000).ok());
  ASSERT_TRUE(f.AddAndFlush(1000).ok());
  // Fifty polls of the maintenance thread later, still no compaction.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  auto b = f.table->DescribeBase();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->rows, 0);
  EXPECT_EQ(b->stats.compactions, 0u);
  EXPECT_EQ(b->stats.throttle.stopped_writes, 0u);
  EXPECT_EQ(f.table->DescribeShards().at(0).sstables.size(), 4u);
  // Meanwhile queries answer from the SSTables' graphs.
  EXPECT_GE(f.CheckSearches({0, 1999, 3999}), 0.9);
  // A watcher records whether the base ever held rows its index did not cover.
  std::atomic<bool> stop{false}, uncovered{false};
  std::thread watcher([&] {
    while (!stop.load()) {
      auto d = f.table->DescribeBase();
      if (d.has_value() && d->rows > 0 &&
          (d->indexes.empty() || d->indexes[0].rows_indexed < d->rows)) {
        uncovered = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  f.train_gate->Open();
  for (int i = 0;
       i < 1200 && (f.BaseRows() < 4000 || !f.table->DescribeShards().at(0).sstables.empty());
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  stop = true;
  watcher.join();
  EXPECT_FALSE(uncovered.load());
  EXPECT_EQ(f.BaseRows(), 4000);
  EXPECT_EQ(f.RowsIndexed(), 4000);
  auto built = f.Base();
  ASSERT_TRUE(built.has_value());
  EXPECT_EQ(built->type, "IVF_PQ");
  EXPECT_EQ(built->trained_rows, 2000);  // the L0 rows when the training started
  b = f.table->DescribeBase();
  EXPECT_EQ(b->stats.index_builds, 1u);
  auto plan = f.Search(&f.all[0], false, 10);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->plan.at(0).find("base: IVF_PQ 'vector_idx'"), std::string::npos)
      << plan->plan.at(0);
  EXPECT_GE(f.CheckSearches({0, 1000, 2500, 3999}), 0.8);
}

// compact/ on an empty base waits for the first training on the L0 rows, as background
// compaction does: the base it commits is indexed from its first row (no exact-scan window).
TEST(BaseIndexBuilder, ExplicitCompactWaitsForAFirstTrainingOnL0Rows) {
  Fixture f("IVF_PQ", R"({"num_sub_vectors":8})", /*background=*/true);
  ASSERT_TRUE(f.AddAndFlush(1000).ok());  // one SSTable: below the trigger (2)
  auto r = f.table->Compact(shard::Clock::now() + std::chrono::minutes(1));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->compacted_generations.size(), 1u);
  EXPECT_EQ(f.BaseRows(), 1000);
  EXPECT_EQ(f.RowsIndexed(), 1000);  // at the commit, not after a later build
  auto built = f.Base();
  ASSERT_TRUE(built.has_value());
  EXPECT_EQ(built->trained_rows, 1000);
  auto plan = f.Search(&f.all[0], false, 10);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->plan.at(0).find("base: IVF_PQ 'vector_idx'"), std::string::npos)
      << plan->plan.at(0);
}

// Past its deadline compact/ stops waiting and compacts; the builder indexes the base after.
TEST(BaseIndexBuilder, ExplicitCompactStopsWaitingForTheTrainingAtItsDeadline) {
  Fixture f("IVF_PQ", R"({"num_sub_vectors":8})", /*background=*/true);
  f.train_gate->Close();
  ASSERT_TRUE(f.AddAndFlush(1000).ok());
  const auto t0 = shard::Clock::now();
  auto r = f.table->Compact(t0 + std::chrono::milliseconds(300));
  EXPECT_GE(shard::Clock::now() - t0, std::chrono::milliseconds(290));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->compacted_generations.size(), 1u);
  EXPECT_EQ(f.BaseRows(), 1000);
  EXPECT_EQ(f.RowsIndexed(), 0);  // the training is still held
  f.train_gate->Open();
  ASSERT_NO_FATAL_FAILURE(f.WaitIndexes());
  EXPECT_EQ(f.RowsIndexed(), 1000);
}

// Too few L0 rows to train IVF_PQ (2^8 vectors): compaction does not wait for it.
TEST(BaseIndexBuilder, FirstCompactionDoesNotWaitWhenL0CannotTrain) {
  Fixture f("IVF_PQ", R"({"num_sub_vectors":8})", /*background=*/true);
  ASSERT_TRUE(f.AddAndFlush(100).ok());
  ASSERT_TRUE(f.AddAndFlush(100).ok());
  for (int i = 0; i < 1200 && f.BaseRows() < 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(f.BaseRows(), 200);
  EXPECT_EQ(f.RowsIndexed(), 0);  // and the base is searched exactly, correctly
  EXPECT_EQ(f.CheckSearches({0, 150}), 1.0);
}

}  // namespace
}  // namespace strata::base
