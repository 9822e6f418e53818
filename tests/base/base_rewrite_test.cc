// Base rewrite (base/base_table.h "Base rewrite", base_rewrite.cc) through a LocalCatalog:
// dead rows dropped and positions renumbered, rows marked by uncompacted generations carried
// over, writes made while a rewrite runs neither lost nor resurrected (Qdrant 9052), a view
// taken before it read after it and GC, a failed put at every step then a reopen, tags, GC of
// the old fragments, and the background trigger.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "arrow/builder.h"
#include "format/table_manifest.h"
#include "io/fault_injecting_store.h"
#include "io/local_object_store.h"
#include "table/local_catalog.h"
#include "table/primary_key.h"

namespace strata::base {
namespace {

using Model = std::map<int64_t, int64_t>;  // id -> v

arrow::SchemaPtr KvSchema() {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("v", arrow::int64(), true)});
  return *table::DeclarePrimaryKey(s, {"id"});
}

arrow::RecordBatchPtr Rows(const std::vector<int64_t>& ids, int64_t v) {
  std::vector<std::optional<int64_t>> idv(ids.begin(), ids.end());
  std::vector<std::optional<int64_t>> vs(ids.size(), v);
  return std::make_shared<arrow::RecordBatch>(
      KvSchema(), static_cast<int64_t>(ids.size()),
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(idv), arrow::MakeInt64Array(vs)});
}

arrow::RecordBatchPtr Keys(const std::vector<int64_t>& ids) {
  std::vector<std::optional<int64_t>> idv(ids.begin(), ids.end());
  auto schema = std::make_shared<arrow::Schema>(
      std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64(), false)});
  return std::make_shared<arrow::RecordBatch>(
      schema, static_cast<int64_t>(ids.size()),
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(idv)});
}

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> out;
  for (int64_t i = from; i < to; ++i) out.push_back(i);
  return out;
}

// The live rows of `s` as id -> v; a duplicate id fails the test.
Model ReadSnapshot(const table::TableSnapshot& s) {
  Model out;
  for (const auto& b : strata::testing::Live(s)) {
    arrow::Array id = b->column(0), v = b->column(1);
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      EXPECT_EQ(out.count(id.Value<int64_t>(i)), 0u) << "duplicate id " << id.Value<int64_t>(i);
      out[id.Value<int64_t>(i)] = v.Value<int64_t>(i);
    }
  }
  EXPECT_EQ(s.num_rows, static_cast<int64_t>(out.size()));
  return out;
}

Model Read(table::Table& t) { return ReadSnapshot(t.Snapshot()); }

struct Fixture {
  strata::testing::TempDir dir;
  std::shared_ptr<io::LocalObjectStore> local = *io::LocalObjectStore::Open(dir.path());
  std::shared_ptr<io::FaultInjectingStore> faults =
      std::make_shared<io::FaultInjectingStore>(local);
  std::unique_ptr<table::LocalCatalog> catalog;
  std::shared_ptr<table::Table> table;

  static CompactionOptions Manual() {
    CompactionOptions o;
    o.background = false;
    o.min_checkpoint_rows = 50;
    o.rewrite_dead_fraction = 0;
    return o;
  }
  void Open(bool create, CompactionOptions co = Manual()) {
    table.reset();
    catalog.reset();
    catalog = std::make_unique<table::LocalCatalog>(faults, shard::ShardWriterOptions{}, co);
    auto t = create
                 ? catalog->CreateTable("default", "kv", KvSchema(), {}, table::CreateMode::kCreate)
                 : catalog->GetTable("default", "kv");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    table = *t;
  }
  void Put(const std::vector<int64_t>& ids, int64_t v, Model* m) {
    ASSERT_TRUE(table->Insert({Rows(ids, v)}).ok());
    for (int64_t id : ids) (*m)[id] = v;
  }
  void Delete(const std::vector<int64_t>& ids, Model* m) {
    ASSERT_TRUE(table->Delete({Keys(ids)}).ok());
    for (int64_t id : ids) m->erase(id);
  }
  void Flush() { ASSERT_TRUE(table->Flush(shard::Clock::now() + std::chrono::seconds(60)).ok()); }
  void FlushAndCompact() {
    Flush();
    auto r = table->Compact(shard::Clock::now() + std::chrono::seconds(60));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  Result<RewriteResult> Rewrite() {
    return table->RewriteBase(shard::Clock::now() + std::chrono::seconds(60));
  }
  // Bytes of the files under the table's data/ (base fragments) on disk.
  int64_t FragmentBytes() const {
    int64_t bytes = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path())) {
      if (e.is_regular_file() && e.path().string().find("/data/") != std::string::npos) {
        bytes += static_cast<int64_t>(e.file_size());
      }
    }
    return bytes;
  }
  // Every file the newest table manifest's base names exists.
  void ExpectReferencedFilesPresent() {
    auto m = format::LoadLatestTableManifest(*local, "default/kv");
    ASSERT_TRUE(m.ok() && m->has_value()) << m.status().ToString();
    for (const auto& f : (*m)->base().fragments()) {
      EXPECT_TRUE(local->Head("default/kv/data/" + f.path() + "/data.arrow").ok()) << f.path();
      if (!f.deletions_path().empty()) {
        EXPECT_TRUE(local->Head("default/kv/" + f.deletions_path()).ok()) << f.deletions_path();
      }
    }
    for (const auto& c : (*m)->base().indexes()) {
      EXPECT_TRUE(local->Head("default/kv/" + c.path()).ok()) << c.path();
    }
  }
};

// Load, upsert every key twice and delete some, compacting between: the base holds every
// version. The rewrite leaves one row per live key, a fragment as large as a fresh table's,
// and GC removes the old fragments at once.
TEST(BaseRewrite, UpsertHeavyBaseShrinksToItsLiveRows) {
  Fixture f;
  ASSERT_NO_FATAL_FAILURE(f.Open(true));
  Model m;
  f.Put(Range(0, 1000), 0, &m);
  ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());
  f.Put(Range(0, 1000), 1, &m);
  ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());
  f.Put(Range(0, 1000), 2, &m);
  f.Delete(Range(900, 1000), &m);
  ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());
  auto before = f.table->DescribeBase();
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->rows, 2900);  // 1,000 + 1,000 + 900 upserts (tombstones are not copied)
  EXPECT_EQ(before->live_rows, 900);
  EXPECT_EQ(before->fragments, 3);
  ASSERT_TRUE(f.table->CollectGarbage().ok());
  const int64_t disk_before = f.FragmentBytes();

  auto r = f.Rewrite();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->rows_before, 2900);
  EXPECT_EQ(r->rows_after, 900);
  EXPECT_EQ(r->fragments, 1);
  auto after = f.table->DescribeBase();
  EXPECT_EQ(after->rows, 900);
  EXPECT_EQ(after->live_rows, 900);
  EXPECT_EQ(after->fragments, 1);
  EXPECT_EQ(after->version, before->version + 1);
  EXPECT_EQ(after->stats.rewrites, 1u);
  EXPECT_EQ(after->stats.rewrite_rows_reclaimed, 2000u);
  EXPECT_EQ(Read(*f.table), m);
  for (const auto& [id, v] : m) ASSERT_EQ(v, 2) << id;

  // GC removes the three old fragments (named only by older manifests of this version).
  auto gc = f.table->CollectGarbage();
  ASSERT_TRUE(gc.ok()) << gc.status().ToString();
  EXPECT_GT(gc->base_files_removed, 0);
  const int64_t disk_after = f.FragmentBytes();
  ASSERT_NO_FATAL_FAILURE(f.ExpectReferencedFilesPresent());

  // The same live rows loaded fresh: the rewritten fragment is as large.
  Fixture fresh;
  ASSERT_NO_FATAL_FAILURE(fresh.Open(true));
  Model fm;
  fresh.Put(Range(0, 900), 2, &fm);
  ASSERT_NO_FATAL_FAILURE(fresh.FlushAndCompact());
  const int64_t disk_fresh = fresh.FragmentBytes();
  std::printf("fragment bytes: before %lld, after %lld, fresh %lld\n",
              static_cast<long long>(disk_before), static_cast<long long>(disk_after),
              static_cast<long long>(disk_fresh));
  EXPECT_LE(static_cast<double>(disk_after), 1.05 * static_cast<double>(disk_fresh));
  EXPECT_GT(static_cast<double>(disk_before), 2.5 * static_cast<double>(disk_after));

  // Writes after the rewrite find the new rows; restarts and compactions keep them.
  f.Put({5, 950}, 7, &m);
  f.Delete({6}, &m);
  EXPECT_EQ(Read(*f.table), m);
  ASSERT_NO_FATAL_FAILURE(f.Open(false));
  EXPECT_EQ(Read(*f.table), m);
  EXPECT_EQ(f.table->DescribeBase()->rows, 900);
  ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());
  EXPECT_EQ(Read(*f.table), m);
  EXPECT_EQ(f.table->DescribeBase()->rows, 902);       // + the new rows of keys 5 and 950
  EXPECT_EQ(f.table->DescribeBase()->live_rows, 900);  // keys 0..899 without 6, with 950
  ASSERT_NO_FATAL_FAILURE(f.Open(false));
  EXPECT_EQ(Read(*f.table), m);
}

// Rows superseded or deleted only by uncompacted generations (an SSTable, the MemTable) are
// copied with their marks: not resurrected, in this process or after a restart.
TEST(BaseRewrite, RowsMarkedByUncompactedGenerationsStayDead) {
  Fixture f;
  ASSERT_NO_FATAL_FAILURE(f.Open(true));
  Model m;
  f.Put(Range(0, 100), 0, &m);
  ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());
  f.Put(Range(0, 50), 1, &m);
  ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());  // base: 150 rows, 50 dead
  f.Put(Range(50, 60), 2, &m);                   // an SSTable, not compacted
  f.Delete(Range(60, 70), &m);
  f.Flush();
  f.Put(Range(0, 10), 3, &m);  // the MemTable
  f.Delete(Range(70, 80), &m);
  const Model expected = m;
  EXPECT_EQ(Read(*f.table), m);
  auto r = f.Rewrite();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->rows_before, 150);
  EXPECT_EQ(r->rows_after, 100);  // every key once: dead only by uncompacted ones included
  EXPECT_EQ(Read(*f.table), expected);
  ASSERT_NO_FATAL_FAILURE(f.Open(false));  // marks re-derived from the SSTable and the WAL
  EXPECT_EQ(Read(*f.table), expected);
  ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());
  EXPECT_EQ(Read(*f.table), expected);
  auto d = f.table->DescribeBase();
  EXPECT_EQ(d->live_rows, static_cast<int64_t>(expected.size()));
  ASSERT_TRUE(f.Rewrite().ok());
  EXPECT_EQ(f.table->DescribeBase()->rows, static_cast<int64_t>(expected.size()));
  ASSERT_NO_FATAL_FAILURE(f.Open(false));
  EXPECT_EQ(Read(*f.table), expected);
}

// Deletes and upserts of base keys while a rewrite is held between its copy and its install
// mark the OLD positions: the install carries them to the new ones (else they are
// resurrected). A view taken before the rewrite reads its rows after the rewrite and GC.
TEST(BaseRewrite, WritesDuringARewriteAreNeitherLostNorResurrected) {
  Fixture f;
  CompactionOptions co = Fixture::Manual();
  std::mutex mu;
  std::condition_variable cv;
  bool reached = false, release = false;
  co.rewrite_install_hook = [&] {
    std::unique_lock<std::mutex> lock(mu);
    reached = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  };
  ASSERT_NO_FATAL_FAILURE(f.Open(true, co));
  Model m;
  f.Put(Range(0, 500), 0, &m);
  ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());
  f.Put(Range(0, 250), 1, &m);
  ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());
  const table::TableSnapshot old_view = f.table->Snapshot();
  const Model old_model = m;

  std::thread rewriter([&] {
    auto r = f.Rewrite();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) {
      EXPECT_EQ(r->rows_after, 500);
    }
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return reached; });
  }
  // The rewrite copied 500 rows; now delete and upsert some of them, flush some of it.
  f.Delete(Range(0, 20), &m);     // rewritten rows from the second fragment
  f.Delete(Range(300, 320), &m);  // from the first
  f.Put(Range(100, 120), 5, &m);  // upserts
  f.Put(Range(400, 420), 5, &m);
  f.Flush();
  f.Delete(Range(120, 125), &m);
  f.Put(Range(600, 610), 5, &m);  // new keys
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
    cv.notify_all();
  }
  rewriter.join();
  EXPECT_EQ(f.table->DescribeBase()->rows, 500);
  EXPECT_EQ(Read(*f.table), m);
  auto gc = f.table->CollectGarbage();
  ASSERT_TRUE(gc.ok()) << gc.status().ToString();
  EXPECT_GT(gc->base_files_removed, 0);
  EXPECT_EQ(ReadSnapshot(old_view), old_model);  // the old base, after its files are gone
  EXPECT_EQ(Read(*f.table), m);
  ASSERT_NO_FATAL_FAILURE(f.Open(false));
  EXPECT_EQ(Read(*f.table), m);
  ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());
  EXPECT_EQ(Read(*f.table), m);
  ASSERT_NO_FATAL_FAILURE(f.Open(false));
  EXPECT_EQ(Read(*f.table), m);
}

// A writer upserting and deleting at random while background compactions and rewrites (a low
// trigger) and explicit rewrites run: the rows are the writer's, before and after a restart.
TEST(BaseRewrite, ConcurrentWritesCompactionsAndRewrites) {
  Fixture f;
  CompactionOptions co = Fixture::Manual();
  co.background = true;
  co.l0_trigger_count = 1;
  co.poll_interval = std::chrono::milliseconds(5);
  co.rewrite_min_dead_rows = 200;
  co.rewrite_dead_fraction = 0.3;
  ASSERT_NO_FATAL_FAILURE(f.Open(true, co));
  Model m;
  f.Put(Range(0, 1000), 0, &m);
  f.Flush();
  std::atomic<bool> stop{false};
  Model writer_model = m;
  std::thread writer([&] {
    std::mt19937_64 rng(11);
    int64_t v = 1;
    while (!stop.load()) {
      std::vector<int64_t> ids;
      for (int i = 0; i < 50; ++i) ids.push_back(static_cast<int64_t>(rng() % 1200));
      if (rng() % 4 == 0) {
        if (!f.table->Delete({Keys(ids)}).ok()) break;
        for (int64_t id : ids) writer_model.erase(id);
      } else {
        if (!f.table->Insert({Rows(ids, v)}).ok()) break;
        for (int64_t id : ids) writer_model[id] = v;
      }
      ++v;
    }
  });
  for (int round = 0; round < 40; ++round) {
    f.Flush();
    if (round % 8 == 7) {
      auto r = f.Rewrite();
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop = true;
  writer.join();
  const auto base = f.table->DescribeBase();
  ASSERT_TRUE(base.has_value());
  EXPECT_GE(base->stats.rewrites, 5u);
  EXPECT_EQ(Read(*f.table), writer_model);
  ASSERT_NO_FATAL_FAILURE(f.Open(false, Fixture::Manual()));
  EXPECT_EQ(Read(*f.table), writer_model);
  ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());
  ASSERT_TRUE(f.Rewrite().ok());
  EXPECT_EQ(f.table->DescribeBase()->rows, static_cast<int64_t>(writer_model.size()));
  EXPECT_EQ(Read(*f.table), writer_model);
  ASSERT_NO_FATAL_FAILURE(f.Open(false, Fixture::Manual()));
  EXPECT_EQ(Read(*f.table), writer_model);
}

// Every put a rewrite makes fails in turn (before writing, or after writing: an unknown
// outcome), then the process "crashes" (the catalog is dropped) and the table is reopened:
// the rows are exactly the acknowledged ones, no referenced file is missing, and a later
// rewrite succeeds.
TEST(BaseRewrite, FailedPutAtEveryStepThenReopenKeepsEveryRowOnce) {
  for (bool after_write : {false, true}) {
    for (int n = 1;; ++n) {
      SCOPED_TRACE("put " + std::to_string(n) + (after_write ? " (after write)" : ""));
      Fixture f;
      ASSERT_NO_FATAL_FAILURE(f.Open(true));
      Model m;
      f.Put(Range(0, 300), 0, &m);
      ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());
      f.Put(Range(0, 200), 1, &m);
      f.Delete(Range(250, 300), &m);
      ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());
      f.Put(Range(0, 10), 2, &m);  // a MemTable mark over the base
      ASSERT_NO_FATAL_FAILURE(f.Open(false));
      io::PutFault fault;
      fault.skip = n - 1;
      fault.times = 1;
      fault.after_write = after_write;
      const int id = f.faults->AddFault(fault);
      f.faults->ResetCounters();
      auto r = f.Rewrite();
      const int64_t puts = static_cast<int64_t>(f.faults->stats().puts);
      f.faults->RemoveFault(id);
      EXPECT_EQ(Read(*f.table), m);  // the running process still reads the right rows
      ASSERT_NO_FATAL_FAILURE(f.Open(false));
      EXPECT_EQ(Read(*f.table), m);
      ASSERT_NO_FATAL_FAILURE(f.ExpectReferencedFilesPresent());
      auto again = f.Rewrite();
      ASSERT_TRUE(again.ok()) << again.status().ToString();
      EXPECT_EQ(f.table->DescribeBase()->rows, 250);
      EXPECT_EQ(Read(*f.table), m);
      ASSERT_TRUE(f.table->CollectGarbage().ok());
      ASSERT_NO_FATAL_FAILURE(f.ExpectReferencedFilesPresent());
      ASSERT_NO_FATAL_FAILURE(f.Open(false));
      EXPECT_EQ(Read(*f.table), m);
      if (r.ok() && puts < n) break;  // the fault was never reached: every step was covered
      ASSERT_LT(n, 50) << "rewrite kept failing";
    }
  }
}

// A tag of the current version names the same rows across a rewrite and GC (the rewrite moves
// rows, it does not change the table's contents), also after a restart.
TEST(BaseRewrite, TagsSurviveRewriteAndGc) {
  Fixture f;
  ASSERT_NO_FATAL_FAILURE(f.Open(true));
  Model m;
  f.Put(Range(0, 100), 0, &m);
  ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());
  f.Put(Range(50, 150), 1, &m);
  ASSERT_NO_FATAL_FAILURE(f.FlushAndCompact());
  const uint64_t v = f.table->version();
  ASSERT_TRUE(f.table->CreateTag("before-rewrite", v).ok());
  ASSERT_TRUE(f.Rewrite().ok());
  auto gc = f.table->CollectGarbage();
  ASSERT_TRUE(gc.ok()) << gc.status().ToString();
  EXPECT_GT(gc->base_files_removed, 0);
  EXPECT_EQ(f.table->version(), v);
  EXPECT_EQ(f.table->ListTags()->at("before-rewrite").version, v);
  EXPECT_EQ(Read(*f.table), m);
  ASSERT_NO_FATAL_FAILURE(f.Open(false));
  EXPECT_EQ(f.table->version(), v);
  EXPECT_EQ(f.table->ListTags()->at("before-rewrite").version, v);
  EXPECT_EQ(Read(*f.table), m);
}

// The maintenance thread rewrites once dead rows reach the trigger, and not before.
TEST(BaseRewrite, BackgroundTriggerFiresAtTheDeadFraction) {
  Fixture f;
  CompactionOptions co = Fixture::Manual();
  co.background = true;
  co.l0_trigger_count = 1;
  co.poll_interval = std::chrono::milliseconds(5);
  co.rewrite_min_dead_rows = 300;
  co.rewrite_dead_fraction = 0.5;
  ASSERT_NO_FATAL_FAILURE(f.Open(true, co));
  Model m;
  auto settle = [&] {
    f.Flush();
    for (int i = 0; i < 2000 && f.table->DescribeShards().at(0).sstables.size() > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  };
  f.Put(Range(0, 500), 0, &m);
  settle();
  f.Put(Range(0, 250), 1, &m);  // 250 dead of 750: below both thresholds
  settle();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(f.table->DescribeBase()->stats.rewrites, 0u);
  EXPECT_EQ(f.table->DescribeBase()->rows, 750);
  f.Put(Range(250, 500), 1, &m);  // 500 dead of 1,000: fires
  settle();
  for (int i = 0; i < 2000 && f.table->DescribeBase()->stats.rewrites == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto d = f.table->DescribeBase();
  EXPECT_EQ(d->stats.rewrites, 1u);
  EXPECT_EQ(d->rows, 500);
  EXPECT_EQ(d->live_rows, 500);
  EXPECT_EQ(Read(*f.table), m);
}

}  // namespace
}  // namespace strata::base
