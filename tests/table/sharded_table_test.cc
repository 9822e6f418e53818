// Tables of several bucket shards (issue 16, docs/SHARDING.md) through the catalog: every row
// of a key lands in its bucket's shard across inserts, upserts and deletes; flush/ seals every
// shard; compaction merges every shard into the one base with compacted_generation per shard;
// the spec changes the shard count only of an empty table; a second server fences every shard;
// column changes are refused; and SIGKILL during multi-shard writes keeps every acknowledged
// write, each write all or nothing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "arrow/builder.h"
#include "format/bucket_hash.h"
#include "io/local_object_store.h"
#include "query/scan.h"
#include "query/shard_pruning.h"
#include "sigkill_writes_util.h"
#include "table/catalog.h"
#include "table/local_catalog.h"
#include "table/lsm_write_spec.h"
#include "table/primary_key.h"
#include "table_test_util.h"

namespace strata::table {
namespace {

using namespace std::chrono_literals;
using strata::testing::TempDir;

arrow::SchemaPtr KeyedSchema() {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("v", arrow::int64(), true)});
  return DeclarePrimaryKey(s, {"id"}).value();
}

arrow::RecordBatchPtr Rows(const std::vector<int64_t>& ids, int64_t v) {
  std::vector<std::optional<int64_t>> idv(ids.begin(), ids.end());
  std::vector<std::optional<int64_t>> vs(ids.size(), v);
  return std::make_shared<arrow::RecordBatch>(
      KeyedSchema(), static_cast<int64_t>(ids.size()),
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

LsmWriteSpec Buckets(int64_t n) { return strata::testing::BucketsOnId(n); }

int32_t BucketOf(int64_t id, int32_t n) { return format::BucketOf(format::BucketHashInt64(id), n); }

using Model = std::map<int64_t, int64_t>;

Model Read(Table& t) {
  Model out;
  const TableSnapshot snap = t.Snapshot();
  for (const auto& b : strata::testing::Live(snap)) {
    arrow::Array id = b->column(0), v = b->column(1);
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      EXPECT_TRUE(out.emplace(id.Value<int64_t>(i), v.Value<int64_t>(i)).second)
          << "id " << id.Value<int64_t>(i) << " twice";
    }
  }
  EXPECT_EQ(snap.num_rows, static_cast<int64_t>(out.size()));
  return out;
}

// Rows each shard holds now (MemTables, SSTables), by shard index.
std::vector<int64_t> RowsPerShard(Table& t) {
  std::vector<int64_t> out;
  for (const auto& d : t.DescribeShards()) {
    int64_t rows = d.active.rows;
    for (const auto& f : d.frozen) rows += f.rows;
    for (const auto& s : d.sstables) rows += s.rows;
    out.push_back(rows);
  }
  return out;
}

base::CompactionOptions Manual() {
  base::CompactionOptions o;
  o.background = false;
  return o;
}

TEST(ShardedTable, EveryRowOfAKeyLandsInItsBucketsShard) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  LocalCatalog catalog(store, {}, Manual());
  Model m;
  auto t = catalog.CreateTable("default", "t", KeyedSchema(), {Rows(Range(0, 400), 0)},
                               CreateMode::kCreate, Buckets(4));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  for (int64_t id = 0; id < 400; ++id) m[id] = 0;
  ASSERT_EQ((*t)->DescribeShards().size(), 4u);
  std::vector<int64_t> expected(4, 0);
  for (int64_t id = 0; id < 400; ++id) ++expected[static_cast<size_t>(BucketOf(id, 4))];
  for (int64_t n : expected) EXPECT_GT(n, 50);  // every bucket gets rows
  EXPECT_EQ(RowsPerShard(**t), expected);
  // Upserts of every key and deletes of a quarter: each lands in its key's shard, so each
  // shard holds exactly twice, then 2.25 times... its bucket's rows.
  ASSERT_TRUE((*t)->Insert({Rows(Range(0, 400), 1)}).ok());
  for (auto& [id, v] : m) v = 1;
  std::vector<int64_t> twice = expected;
  for (auto& n : twice) n *= 2;
  EXPECT_EQ(RowsPerShard(**t), twice);
  ASSERT_TRUE((*t)->Delete({Keys(Range(0, 100))}).ok());
  for (int64_t id = 0; id < 100; ++id) {
    m.erase(id);
    ++twice[static_cast<size_t>(BucketOf(id, 4))];  // one tombstone each
  }
  EXPECT_EQ(RowsPerShard(**t), twice);
  EXPECT_EQ(Read(**t), m);
  // The version is base_version + the sum of the shards' WAL positions: it grew with each.
  const uint64_t v = (*t)->version();
  ASSERT_TRUE((*t)->Insert({Rows({1000, 1001, 1002, 1003, 1004, 1005}, 2)}).ok());
  EXPECT_GT((*t)->version(), v);
}

TEST(ShardedTable, FlushSealsEveryShardAndCompactionMergesThemIntoOneBase) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  Model m;
  {
    LocalCatalog catalog(store, {}, Manual());
    auto t =
        *catalog.CreateTable("default", "t", KeyedSchema(), {}, CreateMode::kCreate, Buckets(4));
    ASSERT_TRUE(t->Insert({Rows(Range(0, 300), 0)}).ok());
    auto flushed = t->Flush(shard::Clock::now() + 60s);
    ASSERT_TRUE(flushed.ok()) << flushed.status().ToString();
    ASSERT_EQ(flushed->size(), 4u);
    for (const auto& r : *flushed) {
      EXPECT_TRUE(r.sealed_generation.has_value()) << r.shard_id;
      EXPECT_EQ(r.waited_generation, r.sealed_generation);
    }
    for (const auto& d : t->DescribeShards()) EXPECT_EQ(d.sstables.size(), 1u);
    ASSERT_TRUE(t->Insert({Rows(Range(0, 150), 1)}).ok());
    ASSERT_TRUE(t->Delete({Keys(Range(250, 300))}).ok());
    for (int64_t id = 0; id < 250; ++id) m[id] = id < 150 ? 1 : 0;
    ASSERT_TRUE(t->Flush(shard::Clock::now() + 60s).ok());
    auto c = t->Compact(shard::Clock::now() + 60s);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->compacted_generations.size(), 8u);  // two SSTables in each of 4 shards
    EXPECT_EQ(c->rows_written, 250);
    auto base = t->DescribeBase();
    ASSERT_TRUE(base.has_value());
    EXPECT_EQ(base->fragments, 1);
    EXPECT_EQ(base->live_rows, 250);
    EXPECT_EQ(base->compacted_generation.size(), 4u);
    for (const auto& [shard, g] : base->compacted_generation) EXPECT_EQ(g, 2u) << shard;
    for (const auto& d : t->DescribeShards()) EXPECT_TRUE(d.sstables.empty());
    EXPECT_EQ(Read(*t), m);
    // Writes after the compaction mark the base rows of their keys in their own lanes.
    ASSERT_TRUE(t->Insert({Rows(Range(200, 260), 2)}).ok());
    for (int64_t id = 200; id < 260; ++id) m[id] = 2;
    EXPECT_EQ(Read(*t), m);
  }
  LocalCatalog reopened(store, {}, Manual());
  auto t = *reopened.GetTable("default", "t");
  EXPECT_EQ(t->DescribeShards().size(), 4u);
  EXPECT_EQ(Read(*t), m);
  ASSERT_TRUE(t->Flush(shard::Clock::now() + 60s).ok());
  ASSERT_TRUE(t->Compact(shard::Clock::now() + 60s).ok());
  EXPECT_EQ(Read(*t), m);
  EXPECT_EQ(t->DescribeBase()->live_rows, 260);
  auto gc = t->CollectGarbage();
  ASSERT_TRUE(gc.ok()) << gc.status().ToString();
  EXPECT_EQ(Read(*t), m);
}

TEST(ShardedTable, TheShardCountChangesOnlyOnATableWithoutRows) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  LocalCatalog catalog(store, {}, Manual());
  auto t = *catalog.CreateTable("default", "t", KeyedSchema(), {}, CreateMode::kCreate);
  ASSERT_EQ(t->DescribeShards().size(), 1u);
  const uint64_t v0 = t->version();
  ASSERT_TRUE(t->SetLsmWriteSpec(Buckets(4)).ok());
  EXPECT_EQ(t->DescribeShards().size(), 4u);
  EXPECT_GT(t->version(), v0);
  ASSERT_TRUE(t->Insert({Rows(Range(0, 40), 0)}).ok());
  Status refused = t->SetLsmWriteSpec(std::nullopt);
  EXPECT_TRUE(refused.IsInvalid()) << refused.ToString();
  EXPECT_NE(refused.message().find("has 40 rows: changing its shard count from 4 to 1"),
            std::string::npos)
      << refused.message();
  EXPECT_EQ(t->DescribeShards().size(), 4u);
  EXPECT_EQ(Read(*t).size(), 40u);
  // A bucket count of 4 again changes no shard; writer settings apply to every shard.
  LsmWriteSpec tuned = Buckets(4);
  tuned.writer_config_defaults["max_memtable_rows"] = "7";
  ASSERT_TRUE(t->SetLsmWriteSpec(tuned).ok());
  for (const auto& d : t->DescribeShards()) EXPECT_EQ(d.settings.max_memtable_rows, 7);
  EXPECT_EQ(Read(*t).size(), 40u);
  // Once every row is deleted the table may go back to one shard.
  ASSERT_TRUE(t->Delete({Keys(Range(0, 40))}).ok());
  ASSERT_TRUE(t->SetLsmWriteSpec(std::nullopt).ok());
  EXPECT_EQ(t->DescribeShards().size(), 1u);
  EXPECT_TRUE(Read(*t).empty());
  // Column changes of a multi-shard table are refused, changing nothing.
  ASSERT_TRUE(t->SetLsmWriteSpec(Buckets(2)).ok());
  auto rewrite = t->RewriteColumns([](const RewriteSource&) -> Result<ColumnRewrite> {
    return Status::Internal("the plan must not run");
  });
  EXPECT_EQ(rewrite.status().code(), StatusCode::kNotSupported) << rewrite.status().ToString();
  EXPECT_EQ(t->DescribeShards().size(), 2u);
}

TEST(ShardedTable, ASecondServerFencesEveryShard) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  RecoveryOptions no_checks;
  no_checks.owner_check = 0ms;
  LocalCatalog a(store, {}, Manual(), no_checks);
  auto ta = *a.CreateTable("default", "t", KeyedSchema(), {Rows(Range(0, 40), 0)},
                           CreateMode::kCreate, Buckets(4));
  LocalCatalog b(store, {}, Manual(), no_checks);
  auto tb = *b.GetTable("default", "t");
  ASSERT_EQ(tb->DescribeShards().size(), 4u);
  // Every shard of the first server is fenced: a write to any one bucket fails.
  for (int64_t id = 100; id < 140; ++id) {
    auto r = ta->Insert({Rows({id}, 1)});
    EXPECT_EQ(r.status().code(), StatusCode::kFenced)
        << "id " << id << " bucket " << BucketOf(id, 4);
  }
  ASSERT_TRUE(tb->Insert({Rows(Range(100, 140), 1)}).ok());
  EXPECT_EQ(Read(*tb).size(), 80u);
}

// A point query on a 16-bucket table reads one shard (and the shared base), and answers as
// the unsharded table does; an IN reads the buckets of its values; other filters read all.
TEST(ShardedTable, APointQueryOnSixteenBucketsReadsOneShard) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  LocalCatalog catalog(store, {}, Manual());
  auto sharded = *catalog.CreateTable("default", "s", KeyedSchema(), {Rows(Range(0, 800), 0)},
                                      CreateMode::kCreate, Buckets(16));
  auto plain = *catalog.CreateTable("default", "p", KeyedSchema(), {Rows(Range(0, 800), 0)},
                                    CreateMode::kCreate);
  // Half the rows in the base, half in each shard's MemTable.
  ASSERT_TRUE(sharded->Flush(shard::Clock::now() + 60s).ok());
  ASSERT_TRUE(sharded->Compact(shard::Clock::now() + 60s).ok());
  ASSERT_TRUE(sharded->Insert({Rows(Range(400, 800), 1)}).ok());
  ASSERT_TRUE(plain->Insert({Rows(Range(400, 800), 1)}).ok());

  const table::TableSnapshot snap = sharded->Snapshot();
  ASSERT_EQ(snap.num_shards, 16);
  std::string plan;
  const table::TableSnapshot one = query::PruneShards(snap, std::string("id = 434"), &plan);
  const int32_t b = BucketOf(434, 16);
  EXPECT_EQ(plan, "shards: 1 of 16 read: (id = 434) -> bucket " + std::to_string(b) + " of 16");
  std::set<int> shards_read;
  for (const auto& src : one.shard->sources) shards_read.insert(src.shard);
  EXPECT_EQ(shards_read, (std::set<int>{-1, b}));  // the shared base and bucket b's shard
  EXPECT_LT(one.shard->sources.size(), snap.shard->sources.size());
  for (const std::string f : {"id = 434", "id = 5", "id IN (1, 2, 600)", "v = 1 AND id = 799"}) {
    query::ScanOptions o;
    o.filter = f;
    auto a = query::Scan(query::PruneShards(snap, o.filter), o);
    auto c = query::Scan(plain->Snapshot(), o);
    ASSERT_TRUE(a.ok() && c.ok()) << f;
    Model ra, rc;
    for (const auto& batch : a->batches) {
      for (int64_t i = 0; i < batch->num_rows(); ++i) {
        ra[batch->column(0).Value<int64_t>(i)] = batch->column(1).Value<int64_t>(i);
      }
    }
    for (const auto& batch : c->batches) {
      for (int64_t i = 0; i < batch->num_rows(); ++i) {
        rc[batch->column(0).Value<int64_t>(i)] = batch->column(1).Value<int64_t>(i);
      }
    }
    EXPECT_FALSE(ra.empty()) << f;
    EXPECT_EQ(ra, rc) << f;
  }
  query::PruneShards(snap, std::string("id IN (1, 2, 600)"), &plan);
  EXPECT_NE(plan.find("of 16 read: (id IN (1, 2, 600)) -> buckets "), std::string::npos) << plan;
  query::PruneShards(snap, std::string("v = 1"), &plan);
  EXPECT_EQ(plan, "shards: 16 of 16 read (no equality or IN on id)");
  // A one-shard table is never narrowed.
  EXPECT_EQ(
      query::PruneShards(plain->Snapshot(), std::string("id = 434"), &plan).shard->sources.size(),
      plain->Snapshot().shard->sources.size());
}

// Every read of a sharded table takes a snapshot; the table reuses its merged view while no
// shard's view, base state or base index changed, and builds a new one after each of them.
// The per-shard views (TableSnapshot::shard_views) hold the base and exactly that shard's
// rows, and a point read pruned to one uses it as is.
TEST(ShardedTable, TheViewIsReusedUntilSomethingChangesAndEachShardHasItsOwn) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  auto catalog = std::make_unique<LocalCatalog>(store, shard::ShardWriterOptions{}, Manual());
  auto t = *catalog->CreateTable("default", "s", KeyedSchema(), {Rows(Range(0, 200), 0)},
                                 CreateMode::kCreate, Buckets(4));
  const TableSnapshot a = t->Snapshot();
  const TableSnapshot b = t->Snapshot();
  EXPECT_EQ(a.shard, b.shard);  // nothing changed: the same view
  EXPECT_EQ(a.shard_views, b.shard_views);
  ASSERT_NE(a.sharding, nullptr);
  EXPECT_EQ(a.sharding->num_buckets, 4);
  ASSERT_NE(a.shard_views, nullptr);
  ASSERT_EQ(a.shard_views->size(), 4u);
  std::vector<int64_t> per_bucket(4, 0);
  for (int64_t id = 0; id < 200; ++id) ++per_bucket[static_cast<size_t>(BucketOf(id, 4))];
  for (size_t i = 0; i < 4; ++i) {
    const shard::ShardSnapshot& one = *(*a.shard_views)[i];
    EXPECT_EQ(one.num_rows, per_bucket[i]) << "shard " << i;
    for (const auto& src : one.sources) EXPECT_EQ(src.shard, static_cast<int>(i));
  }
  // A write into one shard: a new view holding it.
  ASSERT_TRUE(t->Insert({Rows({1000}, 7)}).ok());
  const TableSnapshot c = t->Snapshot();
  EXPECT_NE(c.shard, a.shard);
  EXPECT_EQ(c.num_rows, 201);
  const size_t bk = static_cast<size_t>(BucketOf(1000, 4));
  EXPECT_EQ((*c.shard_views)[bk]->num_rows, per_bucket[bk] + 1);
  const TableSnapshot pruned = query::PruneShards(c, std::string("id = 1000"));
  EXPECT_EQ(pruned.shard, (*c.shard_views)[bk]);  // no copy
  EXPECT_EQ(pruned.num_rows, per_bucket[bk] + 1);
  // Flush and compaction move every row into the base: a new view, the base in every
  // shard's view, the shards' own sources empty.
  ASSERT_TRUE(t->Flush(shard::Clock::now() + 60s).ok());
  ASSERT_TRUE(t->Compact(shard::Clock::now() + 60s).ok());
  const TableSnapshot d = t->Snapshot();
  EXPECT_NE(d.shard, c.shard);
  EXPECT_EQ(d.num_rows, 201);
  for (size_t i = 0; i < 4; ++i) {
    const shard::ShardSnapshot& one = *(*d.shard_views)[i];
    ASSERT_FALSE(one.sources.empty());
    EXPECT_EQ(one.sources[0].shard, -1);  // the shared base first
    EXPECT_EQ(one.num_rows, 201);         // the base's rows are every shard's
  }
  // A base index built after the view: the next view has it.
  index::IndexSpec bt;
  bt.kind = index::IndexKind::kBTree;
  bt.column = "v";
  bt.name = "v_idx";
  ASSERT_TRUE(t->CreateIndex(bt).ok());
  bool indexed = false;
  for (int i = 0; i < 600 && !indexed; ++i) {
    const TableSnapshot e = t->Snapshot();
    indexed = e.shard->sources[0].FindIndex(1, index::IndexKind::kBTree) != nullptr;
    if (!indexed) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(indexed) << "the base's v_idx never reached the view";
  // A delete in one shard: the next view no longer counts it.
  ASSERT_TRUE(t->Delete({Keys({1000})}).ok());
  const TableSnapshot f = t->Snapshot();
  EXPECT_EQ(f.num_rows, 200);
  EXPECT_EQ((*f.shard_views)[bk]->num_rows, 200);  // the base counts every live row
  EXPECT_EQ(Read(*t).count(1000), 0u);
  // Reopened, the base loads v_idx's checkpoint in the background while reads take views:
  // once loaded, it is in the view although no shard and no base row changed.
  t.reset();
  catalog.reset();
  catalog = std::make_unique<LocalCatalog>(store, shard::ShardWriterOptions{}, Manual());
  t = *catalog->GetTable("default", "s");
  indexed = false;
  for (int i = 0; i < 20000 && !indexed; ++i) {
    const TableSnapshot g = t->Snapshot();
    ASSERT_EQ(g.num_rows, 200);
    indexed = g.shard->sources[0].FindIndex(1, index::IndexKind::kBTree) != nullptr;
    if (!indexed) std::this_thread::sleep_for(1ms);
  }
  EXPECT_TRUE(indexed) << "the base's v_idx, loaded after the reopen, never reached the view";
}

// The version a write answers is one a snapshot taken after the answer has reached (found by
// a break test: 12 concurrent clients on 16 buckets, describe/ of the version an add()
// returned got 404 about 2% of the time, because the answer counted other writes' durable
// but not yet visible WAL entries).
TEST(ShardedTable, AWritesVersionIsVisibleRightAfterItUnderConcurrentWriters) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  LocalCatalog catalog(store, {}, Manual());
  auto t =
      *catalog.CreateTable("default", "s", KeyedSchema(), {}, CreateMode::kCreate, Buckets(16));
  std::atomic<int> ahead{0}, backwards{0}, reported_ahead{0};
  std::atomic<bool> writing{true};
  // A reader asks the table's version (describe/) and then reads: the read has reached it.
  std::thread reader([&] {
    while (writing.load()) {
      const uint64_t told = t->version();
      if (t->Snapshot().version < told) reported_ahead++;
    }
  });
  std::vector<std::thread> clients;
  for (int c = 0; c < 12; ++c) {
    clients.emplace_back([&, c] {
      uint64_t last = 0;
      for (int i = 0; i < 60; ++i) {
        std::vector<int64_t> ids;
        for (int k = 0; k < 10; ++k) ids.push_back(int64_t{c} * 100000 + i * 10 + k);
        auto v = t->Insert({Rows(ids, i)});
        ASSERT_TRUE(v.ok()) << v.status().ToString();
        const uint64_t seen = t->Snapshot().version;
        if (seen < *v) ahead++;
        if (*v < last) backwards++;
        last = *v;
      }
    });
  }
  for (auto& th : clients) th.join();
  writing = false;
  reader.join();
  EXPECT_EQ(ahead.load(), 0) << "writes answered a version the next snapshot had not reached";
  EXPECT_EQ(reported_ahead.load(), 0) << "version() named a version the next snapshot lacked";
  EXPECT_EQ(backwards.load(), 0) << "a client's versions went backwards";
  EXPECT_EQ(t->Snapshot().num_rows, 12 * 60 * 10);
}

// `_rowid` names one row of a table of several shards (the shards number their generations
// independently: the shard is part of the id), and a filter on it finds exactly that row.
TEST(ShardedTable, RowIdsAreUniqueAcrossShards) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  LocalCatalog catalog(store, {}, Manual());
  auto t = *catalog.CreateTable("default", "t", KeyedSchema(), {Rows(Range(0, 200), 0)},
                                CreateMode::kCreate, Buckets(4));
  ASSERT_TRUE(t->Flush(shard::Clock::now() + 60s).ok());
  ASSERT_TRUE(t->Insert({Rows(Range(100, 300), 1)}).ok());  // base rows + each shard's gen 2
  query::ScanOptions o;
  o.with_row_id = true;
  auto all = query::Scan(t->Snapshot(), o);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::map<uint64_t, int64_t> by_rowid;  // _rowid -> id
  for (const auto& b : all->batches) {
    const int rc = b->schema()->GetFieldIndex("_rowid");
    ASSERT_GE(rc, 0);
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      const auto rowid = static_cast<uint64_t>(b->column(rc).Value<int64_t>(i));
      EXPECT_TRUE(by_rowid.emplace(rowid, b->column(0).Value<int64_t>(i)).second)
          << "_rowid " << rowid << " twice";
    }
  }
  ASSERT_EQ(by_rowid.size(), 300u);
  int checked = 0;
  for (const auto& [rowid, id] : by_rowid) {
    if (++checked % 37 != 0) continue;
    query::ScanOptions f;
    f.filter = "_rowid = " + std::to_string(rowid);
    auto one = query::Scan(t->Snapshot(), f);
    ASSERT_TRUE(one.ok());
    ASSERT_EQ(one->num_rows, 1) << f.filter->c_str();
    EXPECT_EQ(one->batches.at(0)->column(0).Value<int64_t>(0), id);
  }
}

// A server another one fenced must not commit a manifest either: it sees the table as it was
// (here: empty), so a change of the shard count would remove the shard holding the other
// server's acknowledged rows (found by a break test), and a spec or an index would replace the
// owner's settings.
TEST(ShardedTable, AFencedServerCommitsNoManifest) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  RecoveryOptions no_checks;
  no_checks.owner_check = 0ms;
  LocalCatalog a(store, {}, Manual(), no_checks);
  auto ta = *a.CreateTable("default", "t", KeyedSchema(), {}, CreateMode::kCreate);
  LocalCatalog b(store, {}, Manual(), no_checks);
  auto tb = *b.GetTable("default", "t");
  ASSERT_TRUE(tb->Insert({Rows(Range(0, 100), 0)}).ok());
  EXPECT_EQ(ta->SetLsmWriteSpec(Buckets(4)).code(), StatusCode::kFenced);
  EXPECT_EQ(ta->DescribeShards().size(), 1u);
  index::IndexSpec bt;
  bt.kind = index::IndexKind::kBTree;
  bt.column = "v";
  bt.name = "v_idx";
  bt.requested_type = "BTREE";
  EXPECT_EQ(ta->CreateIndex(bt).status().code(), StatusCode::kFenced);
  EXPECT_EQ(ta->CreateTag("t1", 1).code(), StatusCode::kFenced);
  EXPECT_EQ(Read(*tb).size(), 100u);
  ASSERT_TRUE(tb->Flush(shard::Clock::now() + 60s).ok());
  ASSERT_TRUE(tb->Compact(shard::Clock::now() + 60s).ok());  // the owner still commits
  LocalCatalog reopened(store, {}, Manual(), no_checks);
  auto t = *reopened.GetTable("default", "t");
  EXPECT_EQ(Read(*t).size(), 100u);
  EXPECT_FALSE(t->GetLsmWriteSpec().has_value());
  EXPECT_TRUE(t->ListIndexes().empty());
}

// ---- SIGKILL during multi-shard writes -----------------------------------------------------

shard::ShardWriterOptions CrashOptions() {
  shard::ShardWriterOptions o;
  o.max_memtable_rows = 40;  // seals and flushes race with the kill
  return o;
}

base::CompactionOptions CrashCompaction() {
  base::CompactionOptions o;
  o.l0_trigger_count = 2;
  o.poll_interval = 5ms;
  o.min_checkpoint_rows = 64;
  o.gc_interval = 1s;
  return o;
}

[[noreturn]] void ChildWriteLoop(const std::string& root, int fd, int64_t first_id) {
  auto catalog = Catalog::Open(root, CrashOptions(), CrashCompaction());
  if (!catalog.ok()) _exit(2);
  auto table = (*catalog)->CreateTable("default", "sharded", KeyedSchema(), {},
                                       CreateMode::kExistOk, Buckets(4));
  if (!table.ok()) {
    std::fprintf(stderr, "child: open: %s\n", table.status().ToString().c_str());
    _exit(3);
  }
  // Runs of 2..8 consecutive ids: usually several shards.
  strata::testing::RunWriterChild(**table, fd, first_id, 7, [](int64_t first, int64_t n, int t) {
    return Rows(Range(first, first + n), t);
  });
}

TEST(ShardedTable, AcknowledgedMultiShardWritesSurviveSigkillEachAllOrNothing) {
  TempDir dir;
  std::mt19937 rng(4242);
  int64_t next_id = 0, acked_writes = 0, torn_checked = 0;
  const char* env = std::getenv("STRATA_CRASH_CYCLES");
  const int cycles = env != nullptr && std::atoi(env) > 0 ? std::atoi(env) / 2 : 12;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    std::string error;
    const auto writes = strata::testing::RunAndKill(
        [&](int fd) { ChildWriteLoop(dir.path(), fd, next_id); }, rng, 150, &error);
    ASSERT_TRUE(error.empty()) << "cycle " << cycle << ": " << error;

    auto catalog = Catalog::Open(dir.path(), CrashOptions(), CrashCompaction());
    ASSERT_TRUE(catalog.ok());
    auto table = (*catalog)->GetTable("default", "sharded");
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ASSERT_EQ((*table)->DescribeShards().size(), 4u);
    const Model live = Read(**table);
    const auto check = strata::testing::CheckWrites(writes, [&](int64_t first, int64_t n) {
      int64_t have = 0;
      for (int64_t id = first; id < first + n; ++id) have += live.count(id);
      return have;
    });
    acked_writes += check.acked;
    torn_checked += check.in_flight;
    ASSERT_TRUE(check.error.empty()) << check.error << " after cycle " << cycle;
    next_id = (live.empty() ? next_id : std::max(next_id, live.rbegin()->first + 1)) + 1000;
    for (const auto& [first, w] : writes) next_id = std::max(next_id, first + w.n + 1000);
  }
  EXPECT_GT(acked_writes, cycles);
  std::printf(
      "[figures] %d SIGKILL cycles of 4-bucket writes: %lld acknowledged writes, %lld "
      "in flight at a kill, all or nothing\n",
      cycles, static_cast<long long>(acked_writes), static_cast<long long>(torn_checked));
}

}  // namespace
}  // namespace strata::table
