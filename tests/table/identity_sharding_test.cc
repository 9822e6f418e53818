// Identity sharding (issue 16, docs/SHARDING.md "Identity sharding") through the catalog: one
// shard per value of the shard column (a primary-key column), added as values arrive (a table
// without rows keeps one spare shard the first value takes); writes, flush, compaction,
// reopen and pruning over them; the spec's rules; and SIGKILL while writes add shards.
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
#include "format/key_encoding.h"
#include "io/local_object_store.h"
#include "query/scan.h"
#include "query/shard_pruning.h"
#include "sigkill_writes_util.h"
#include "table/catalog.h"
#include "table/local_catalog.h"
#include "table/lsm_write_spec.h"
#include "table/primary_key.h"
#include "table/shard_router.h"

namespace strata::table {
namespace {

using namespace std::chrono_literals;
using strata::testing::TempDir;

// (region, id) is the key; region is the identity column. `nullable_id`: the id column is
// nullable (its values are still checked: a key value may not be null).
arrow::SchemaPtr RegionSchema(bool nullable_id = false) {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("region", arrow::utf8(), false), arrow::field("id", arrow::int64(), nullable_id),
      arrow::field("v", arrow::int64(), true)});
  return DeclarePrimaryKey(s, {"region", "id"}).value();
}

using Key = std::pair<std::string, int64_t>;
using Model = std::map<Key, int64_t>;

arrow::RecordBatchPtr Rows(const std::vector<Key>& keys, int64_t v) {
  std::vector<std::optional<std::string>> regions;
  std::vector<std::optional<int64_t>> ids, vs;
  for (const auto& [r, id] : keys) {
    regions.push_back(r);
    ids.push_back(id);
    vs.push_back(v);
  }
  return std::make_shared<arrow::RecordBatch>(
      RegionSchema(), static_cast<int64_t>(keys.size()),
      std::vector<arrow::ArrayDataPtr>{arrow::MakeUtf8Array(regions), arrow::MakeInt64Array(ids),
                                       arrow::MakeInt64Array(vs)});
}

arrow::RecordBatchPtr Keys(const std::vector<Key>& keys) {
  std::vector<std::optional<std::string>> regions;
  std::vector<std::optional<int64_t>> ids;
  for (const auto& [r, id] : keys) {
    regions.push_back(r);
    ids.push_back(id);
  }
  auto schema = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("region", arrow::utf8(), false), arrow::field("id", arrow::int64(), false)});
  return std::make_shared<arrow::RecordBatch>(
      schema, static_cast<int64_t>(keys.size()),
      std::vector<arrow::ArrayDataPtr>{arrow::MakeUtf8Array(regions), arrow::MakeInt64Array(ids)});
}

// Keys (region, id) for ids [from, to) in `region`.
std::vector<Key> In(const std::string& region, int64_t from, int64_t to) {
  std::vector<Key> out;
  for (int64_t i = from; i < to; ++i) out.emplace_back(region, i);
  return out;
}

std::vector<Key> Concat(std::vector<Key> a, const std::vector<Key>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

LsmWriteSpec ByRegion() {
  LsmWriteSpec s;
  s.mode = ShardingMode::kIdentity;
  s.column = "region";
  return s;
}

Model Read(Table& t) {
  Model out;
  const TableSnapshot snap = t.Snapshot();
  for (const auto& b : strata::testing::Live(snap)) {
    arrow::Array region = b->column(0), id = b->column(1), v = b->column(2);
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      const Key k{std::string(region.GetView(i)), id.Value<int64_t>(i)};
      EXPECT_TRUE(out.emplace(k, v.Value<int64_t>(i)).second)
          << k.first << "/" << k.second << " twice";
    }
  }
  EXPECT_EQ(snap.num_rows, static_cast<int64_t>(out.size()));
  return out;
}

// Each shard's value as text ("" for the spare shard), in shard order.
std::vector<std::string> Values(Table& t) {
  std::vector<std::string> out;
  for (const auto& v : t.IdentityValues()) {
    if (v.empty()) {
      out.emplace_back();
      continue;
    }
    auto j = IdentityValueJson(*arrow::utf8(), v);
    EXPECT_TRUE(j.ok()) << j.status().ToString();
    out.push_back(j.ok() ? j->substr(1, j->size() - 2) : "<bad>");  // drop the JSON quotes
  }
  return out;
}

// Rows each shard holds now (MemTables, SSTables), by the shard's value.
std::map<std::string, int64_t> RowsPerValue(Table& t) {
  const auto values = Values(t);
  const auto shards = t.DescribeShards();
  EXPECT_EQ(values.size(), shards.size());
  std::map<std::string, int64_t> out;
  for (size_t i = 0; i < shards.size() && i < values.size(); ++i) {
    int64_t rows = shards[i].active.rows;
    for (const auto& f : shards[i].frozen) rows += f.rows;
    for (const auto& s : shards[i].sstables) rows += s.rows;
    out[values[i]] = rows;
  }
  return out;
}

base::CompactionOptions Manual() {
  base::CompactionOptions o;
  o.background = false;
  return o;
}

TEST(IdentitySharding, EachValueGetsItsOwnShardAsValuesArrive) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  LocalCatalog catalog(store, {}, Manual());
  auto created =
      catalog.CreateTable("default", "t", RegionSchema(), {}, CreateMode::kCreate, ByRegion());
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto t = *created;
  // No row yet: one spare shard, which the first value takes.
  EXPECT_EQ(Values(*t), std::vector<std::string>{""});
  Model m;
  ASSERT_TRUE(t->Insert({Rows(In("eu", 0, 30), 0)}).ok());
  for (const auto& k : In("eu", 0, 30)) m[k] = 0;
  EXPECT_EQ(Values(*t), std::vector<std::string>{"eu"});
  // One write of two new values and a known one adds two shards.
  ASSERT_TRUE(
      t->Insert({Rows(Concat(Concat(In("us", 0, 20), In("ap", 0, 10)), In("eu", 30, 35)), 1)})
          .ok());
  for (const auto& k : Concat(Concat(In("us", 0, 20), In("ap", 0, 10)), In("eu", 30, 35))) {
    m[k] = 1;
  }
  EXPECT_EQ(Values(*t), (std::vector<std::string>{"eu", "ap", "us"}));
  EXPECT_EQ(RowsPerValue(*t), (std::map<std::string, int64_t>{{"eu", 35}, {"ap", 10}, {"us", 20}}));
  // Upserts land in their value's shard; deletes too; a delete of a value no shard holds
  // deletes nothing and adds no shard.
  ASSERT_TRUE(t->Insert({Rows(In("us", 0, 20), 2)}).ok());
  for (const auto& k : In("us", 0, 20)) m[k] = 2;
  ASSERT_TRUE(t->Delete({Keys(Concat(In("eu", 0, 5), In("zz", 0, 5)))}).ok());
  for (const auto& k : In("eu", 0, 5)) m.erase(k);
  EXPECT_EQ(Values(*t), (std::vector<std::string>{"eu", "ap", "us"}));
  EXPECT_EQ(RowsPerValue(*t), (std::map<std::string, int64_t>{{"eu", 40}, {"ap", 10}, {"us", 40}}));
  EXPECT_EQ(Read(*t), m);
  // A read-modify-write (merge_insert's path) of a new value adds its shard too.
  auto rmw = t->ReadModifyWrite([](const TableSnapshot&) -> Result<Mutation> {
    Mutation mu;
    mu.inserts = {Rows(In("sa", 0, 3), 3)};
    return mu;
  });
  ASSERT_TRUE(rmw.ok()) << rmw.status().ToString();
  for (const auto& k : In("sa", 0, 3)) m[k] = 3;
  EXPECT_EQ(Values(*t), (std::vector<std::string>{"eu", "ap", "us", "sa"}));
  EXPECT_EQ(Read(*t), m);
  // The version grew with every write and adding shards did not move it back.
  EXPECT_EQ(t->Snapshot().version, t->version());
}

TEST(IdentitySharding, ShardsSurviveFlushCompactionReopenAndGc) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  Model m;
  std::vector<std::string> values;
  {
    LocalCatalog catalog(store, {}, Manual());
    auto t = *catalog.CreateTable("default", "t", RegionSchema(),
                                  {Rows(Concat(In("b", 0, 100), In("a", 0, 50)), 0)},
                                  CreateMode::kCreate, ByRegion());
    for (const auto& k : Concat(In("b", 0, 100), In("a", 0, 50))) m[k] = 0;
    // Created with rows: one shard per value, ascending by key.
    EXPECT_EQ(Values(*t), (std::vector<std::string>{"a", "b"}));
    auto flushed = t->Flush(shard::Clock::now() + 60s);
    ASSERT_TRUE(flushed.ok()) << flushed.status().ToString();
    ASSERT_EQ(flushed->size(), 2u);
    for (const auto& r : *flushed) EXPECT_TRUE(r.sealed_generation.has_value());
    auto c = t->Compact(shard::Clock::now() + 60s);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->rows_written, 150);
    // After the compaction: a new value gets a new lane of the same base; upserts of
    // compacted keys hide their base rows.
    ASSERT_TRUE(t->Insert({Rows(Concat(In("c", 0, 40), In("a", 0, 10)), 1)}).ok());
    for (const auto& k : Concat(In("c", 0, 40), In("a", 0, 10))) m[k] = 1;
    EXPECT_EQ(Read(*t), m);
    ASSERT_TRUE(t->Flush(shard::Clock::now() + 60s).ok());
    c = t->Compact(shard::Clock::now() + 60s);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto base = t->DescribeBase();
    ASSERT_TRUE(base.has_value());
    EXPECT_EQ(base->live_rows, 190);
    EXPECT_EQ(base->compacted_generation.size(), 3u);
    EXPECT_EQ(Read(*t), m);
    values = Values(*t);
    EXPECT_EQ(values, (std::vector<std::string>{"a", "b", "c"}));
  }
  LocalCatalog reopened(store, {}, Manual());
  auto t = *reopened.GetTable("default", "t");
  EXPECT_EQ(Values(*t), values);
  EXPECT_EQ(Read(*t), m);
  ASSERT_TRUE(t->Insert({Rows(In("d", 0, 5), 2)}).ok());
  for (const auto& k : In("d", 0, 5)) m[k] = 2;
  auto gc = t->CollectGarbage();
  ASSERT_TRUE(gc.ok()) << gc.status().ToString();
  EXPECT_EQ(Read(*t), m);
  EXPECT_EQ(Values(*t), (std::vector<std::string>{"a", "b", "c", "d"}));
}

// An equality or IN on the shard column reads the shards of its values (and the shared base),
// and answers as the unsharded table does.
TEST(IdentitySharding, AnEqualityOnTheShardColumnReadsItsShardOnly) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  LocalCatalog catalog(store, {}, Manual());
  const auto rows = Concat(Concat(In("eu", 0, 60), In("us", 0, 60)), In("ap", 0, 60));
  auto sharded = *catalog.CreateTable("default", "s", RegionSchema(), {Rows(rows, 0)},
                                      CreateMode::kCreate, ByRegion());
  auto plain =
      *catalog.CreateTable("default", "p", RegionSchema(), {Rows(rows, 0)}, CreateMode::kCreate);
  ASSERT_TRUE(sharded->Flush(shard::Clock::now() + 60s).ok());
  ASSERT_TRUE(sharded->Compact(shard::Clock::now() + 60s).ok());
  ASSERT_TRUE(sharded->Insert({Rows(In("us", 30, 90), 1)}).ok());
  ASSERT_TRUE(plain->Insert({Rows(In("us", 30, 90), 1)}).ok());
  const auto values = Values(*sharded);
  ASSERT_EQ(values, (std::vector<std::string>{"ap", "eu", "us"}));

  const TableSnapshot snap = sharded->Snapshot();
  ASSERT_EQ(snap.num_shards, 3);
  std::string plan;
  const TableSnapshot one = query::PruneShards(snap, std::string("region = 'us'"), &plan);
  EXPECT_EQ(plan, "shards: 1 of 3 read: (region = 'us') -> 1 value");
  std::set<int> shards_read;
  for (const auto& src : one.shard->sources) shards_read.insert(src.shard);
  EXPECT_EQ(shards_read, (std::set<int>{-1, 2}));  // the shared base and us's shard
  query::PruneShards(snap, std::string("region = 'nowhere'"), &plan);
  EXPECT_EQ(plan, "shards: 0 of 3 read: (region = 'nowhere') -> 1 value");
  query::PruneShards(snap, std::string("v = 1"), &plan);
  EXPECT_EQ(plan, "shards: 3 of 3 read (no equality or IN on region)");
  for (const std::string f : {"region = 'us'", "region = 'eu' AND id = 7",
                              "region IN ('ap', 'us') AND v = 1", "region = 'nowhere'"}) {
    query::ScanOptions o;
    o.filter = f;
    auto a = query::Scan(query::PruneShards(snap, o.filter), o);
    auto c = query::Scan(plain->Snapshot(), o);
    ASSERT_TRUE(a.ok() && c.ok()) << f;
    auto rows_of = [](const query::QueryResult& r) {
      Model out;
      for (const auto& batch : r.batches) {
        for (int64_t i = 0; i < batch->num_rows(); ++i) {
          out[{std::string(batch->column(0).GetView(i)), batch->column(1).Value<int64_t>(i)}] =
              batch->column(2).Value<int64_t>(i);
        }
      }
      return out;
    };
    EXPECT_EQ(rows_of(*a), rows_of(*c)) << f;
    EXPECT_EQ(rows_of(*a).empty(), f == "region = 'nowhere'") << f;
  }
}

TEST(IdentitySharding, TheSpecsRules) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  LocalCatalog catalog(store, {}, Manual());
  // The column must be a key column: `v` is not.
  LsmWriteSpec by_v = ByRegion();
  by_v.column = "v";
  const arrow::SchemaPtr schema = RegionSchema();
  LsmSpecTarget target{schema.get(), {"region", "id"}, {}};
  Status refused = ValidateLsmWriteSpec(by_v, target);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("must be one of the primary key's columns (region, id)"),
            std::string::npos)
      << refused.ToString();
  EXPECT_TRUE(ValidateLsmWriteSpec(ByRegion(), target).ok());

  auto t = *catalog.CreateTable("default", "t", RegionSchema(), {}, CreateMode::kCreate);
  ASSERT_TRUE(t->SetLsmWriteSpec(ByRegion()).ok());  // empty: one spare shard
  EXPECT_EQ(Values(*t), std::vector<std::string>{""});
  ASSERT_TRUE(t->Insert({Rows(Concat(In("x", 0, 4), In("y", 0, 4)), 0)}).ok());
  EXPECT_EQ(t->DescribeShards().size(), 2u);
  // The same spec again (other writer options) keeps the shards and rows.
  LsmWriteSpec tuned = ByRegion();
  tuned.writer_config_defaults["max_memtable_rows"] = "1000";
  ASSERT_TRUE(t->SetLsmWriteSpec(tuned).ok());
  EXPECT_EQ(Values(*t), (std::vector<std::string>{"x", "y"}));
  // Any other layout would move rows: refused while rows exist, nothing changed.
  LsmWriteSpec unsharded;
  unsharded.mode = ShardingMode::kUnsharded;
  for (const std::optional<LsmWriteSpec>& other :
       {std::optional<LsmWriteSpec>(), std::optional<LsmWriteSpec>(unsharded)}) {
    Status st = t->SetLsmWriteSpec(other);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("has 8 rows: changing how rows map to shards"), std::string::npos)
        << st.ToString();
  }
  EXPECT_EQ(Values(*t), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(Read(*t).size(), 8u);
  // Column changes of an identity table are not built: refused naming why.
  auto added = t->RewriteColumns(
      [](const RewriteSource&) -> Result<ColumnRewrite> { return ColumnRewrite{}; });
  EXPECT_EQ(added.status().code(), StatusCode::kNotSupported);
  // Emptied, the table changes layout again.
  ASSERT_TRUE(t->Delete({Keys(Concat(In("x", 0, 4), In("y", 0, 4)))}).ok());
  ASSERT_TRUE(t->SetLsmWriteSpec(std::nullopt).ok());
  EXPECT_EQ(t->DescribeShards().size(), 1u);
  EXPECT_TRUE(t->IdentityValues().empty());
  // Past 1,024 values (one shard each) a create is refused with nothing left behind.
  std::vector<Key> many;
  for (int i = 0; i < 1025; ++i) many.emplace_back("r" + std::to_string(i), 0);
  auto big = catalog.CreateTable("default", "big", RegionSchema(), {Rows(many, 0)},
                                 CreateMode::kCreate, ByRegion());
  EXPECT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(big.status().message().find("at most 1024"), std::string::npos)
      << big.status().ToString();
}

// A write the table refuses adds no shard and no version (a break test: a null key among new
// values left a shard per value behind the 400, counting toward the cap for good), and its
// error names the row by its position in the write.
TEST(IdentitySharding, ARefusedWriteAddsNoShard) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  LocalCatalog catalog(store, {}, Manual());
  // A nullable id column: its nulls are refused row by row ("row N").
  auto batch = [](const std::vector<std::optional<std::string>>& regions,
                  const std::vector<std::optional<int64_t>>& ids) {
    return std::make_shared<arrow::RecordBatch>(
        RegionSchema(true), static_cast<int64_t>(ids.size()),
        std::vector<arrow::ArrayDataPtr>{
            arrow::MakeUtf8Array(regions), arrow::MakeInt64Array(ids),
            arrow::MakeInt64Array(std::vector<std::optional<int64_t>>(ids.size(), 0))});
  };
  auto t = *catalog.CreateTable("default", "t", RegionSchema(true), {batch({"a", "a"}, {0, 1})},
                                CreateMode::kCreate, ByRegion());
  const uint64_t v0 = t->version();
  // Rows of three new values, the last one with a null id (a key column).
  auto r = t->Insert({batch({"b", "c", "a", "d"}, {1, 2, 3, std::nullopt})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("row 3"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(Values(*t), std::vector<std::string>{"a"});
  EXPECT_EQ(t->version(), v0);
  // A null key among rows of two known values: the row's number in the write, not in a part.
  ASSERT_TRUE(t->Insert({batch({"b"}, {0})}).ok());
  r = t->Insert({batch({"a", "b", "a"}, {7, 8, std::nullopt})});
  EXPECT_NE(r.status().message().find("row 2"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(Values(*t), (std::vector<std::string>{"a", "b"}));
  // A value longer than 1,024 bytes encoded is refused before any shard is made.
  r = t->Insert({batch({std::string(2000, 'x')}, {1})});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("at most 1024"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(Values(*t), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(t->Snapshot().num_rows, 3);
  // Reopened, the table lists the shards it had.
  LocalCatalog reopened(store, {}, Manual());
  EXPECT_EQ(Values(**reopened.GetTable("default", "t")), (std::vector<std::string>{"a", "b"}));
}

// Writers adding shards while the background maintenance compacts and collects garbage over
// the shard list they change (BaseTable::SetShards), and readers count: every row once.
TEST(IdentitySharding, ConcurrentWritersAddShardsWhileTheBaseCompacts) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  shard::ShardWriterOptions small;
  small.max_memtable_rows = 30;  // seals, flushes and compactions all the time
  base::CompactionOptions background;
  background.l0_trigger_count = 2;
  background.poll_interval = 5ms;
  background.gc_interval = 1s;
  LocalCatalog catalog(store, small, background);
  auto t =
      *catalog.CreateTable("default", "t", RegionSchema(), {}, CreateMode::kCreate, ByRegion());
  constexpr int kWriters = 4, kWrites = 40;
  std::atomic<bool> writing{true};
  std::atomic<int> bad_counts{0};
  std::thread reader([&] {
    int64_t last = 0;
    while (writing.load()) {
      const int64_t n = t->Snapshot().num_rows;
      if (n < last) bad_counts++;  // rows are only added
      last = n;
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kWrites; ++i) {
        // Each write: 5 ids of a value shared by all writers and 5 of the writer's own new one.
        const std::string shared = "s" + std::to_string(i / 4);
        const std::string own = "w" + std::to_string(w) + "-" + std::to_string(i);
        auto r = t->Insert(
            {Rows(Concat(In(shared, w * 1000 + i * 5, w * 1000 + i * 5 + 5), In(own, 0, 5)), i)});
        ASSERT_TRUE(r.ok()) << r.status().ToString();
      }
    });
  }
  for (auto& th : writers) th.join();
  writing = false;
  reader.join();
  EXPECT_EQ(bad_counts.load(), 0) << "a read saw fewer rows than an earlier one";
  const Model m = Read(*t);
  EXPECT_EQ(m.size(), static_cast<size_t>(kWriters * kWrites * 10));
  const auto values = Values(*t);
  EXPECT_EQ(values.size(), static_cast<size_t>(kWriters * kWrites + kWrites / 4));
  EXPECT_EQ(std::set<std::string>(values.begin(), values.end()).size(), values.size());
  auto c = t->Compact(shard::Clock::now() + 60s);
  ASSERT_TRUE(c.ok() || c.status().IsAlreadyExists()) << c.status().ToString();
  EXPECT_EQ(Read(*t), m);
}

// ---- SIGKILL while writes add shards ---------------------------------------------------

// A new region every kIdsPerRegion ids: the writers keep adding shards.
constexpr int64_t kIdsPerRegion = 20;

std::string RegionOf(int64_t id) { return "r" + std::to_string(id / kIdsPerRegion); }

std::vector<Key> Written(int64_t first, int64_t n) {
  std::vector<Key> out;
  for (int64_t id = first; id < first + n; ++id) out.emplace_back(RegionOf(id), id);
  return out;
}

shard::ShardWriterOptions CrashOptions() {
  shard::ShardWriterOptions o;
  o.max_memtable_rows = 40;
  return o;
}

base::CompactionOptions CrashCompaction() {
  base::CompactionOptions o;
  o.l0_trigger_count = 2;
  o.poll_interval = 5ms;
  o.gc_interval = 1s;
  return o;
}

[[noreturn]] void ChildWriteLoop(const std::string& root, int fd, int64_t first_id) {
  auto catalog = Catalog::Open(root, CrashOptions(), CrashCompaction());
  if (!catalog.ok()) _exit(2);
  auto table = (*catalog)->CreateTable("default", "ident", RegionSchema(), {}, CreateMode::kExistOk,
                                       ByRegion());
  if (!table.ok()) {
    std::fprintf(stderr, "child: open: %s\n", table.status().ToString().c_str());
    _exit(3);
  }
  // Runs of 2..6 ids: one to three regions.
  strata::testing::RunWriterChild(**table, fd, first_id, 5, [](int64_t first, int64_t n, int t) {
    return Rows(Written(first, n), t);
  });
}

// Each cycle starts at ids whose regions are new to the table, so the kill lands while writes
// add shards (a shard's files, then the manifest naming it); after each restart every
// acknowledged write is there once, in its value's shard, and each write is all or nothing.
TEST(IdentitySharding, AcknowledgedWritesSurviveSigkillWhileShardsAreAdded) {
  TempDir dir;
  std::mt19937 rng(99);
  int64_t next_id = 0, acked_writes = 0, torn_checked = 0;
  const char* env = std::getenv("STRATA_CRASH_CYCLES");
  const int cycles = env != nullptr && std::atoi(env) > 0 ? std::atoi(env) / 2 : 8;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    std::string error;
    const auto writes = strata::testing::RunAndKill(
        [&](int fd) { ChildWriteLoop(dir.path(), fd, next_id); }, rng, 100, &error);
    ASSERT_TRUE(error.empty()) << "cycle " << cycle << ": " << error;

    auto catalog = Catalog::Open(dir.path(), CrashOptions(), CrashCompaction());
    ASSERT_TRUE(catalog.ok());
    auto table = (*catalog)->GetTable("default", "ident");
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    const Model live = Read(**table);
    // Each shard holds one value, no value twice, and every live row's value has a shard.
    const auto values = Values(**table);
    const std::set<std::string> distinct(values.begin(), values.end());
    EXPECT_EQ(distinct.size(), values.size()) << "a value has two shards";
    for (const auto& [k, v] : live) {
      ASSERT_TRUE(distinct.count(k.first)) << "row of " << k.first << " but no shard holds it";
    }
    const auto check = strata::testing::CheckWrites(writes, [&](int64_t first, int64_t n) {
      int64_t have = 0;
      for (const auto& k : Written(first, n)) have += live.count(k);
      return have;
    });
    acked_writes += check.acked;
    torn_checked += check.in_flight;
    ASSERT_TRUE(check.error.empty()) << check.error << " after cycle " << cycle;
    for (const auto& [first, w] : writes) next_id = std::max(next_id, first + w.n);
    // The next cycle starts with a region the table has not seen yet.
    next_id = (next_id / kIdsPerRegion + 1) * kIdsPerRegion;
  }
  EXPECT_GT(acked_writes, cycles);
  std::printf(
      "[figures] %d SIGKILL cycles of identity writes adding shards: %lld acknowledged writes, "
      "%lld in flight at a kill, all or nothing\n",
      cycles, static_cast<long long>(acked_writes), static_cast<long long>(torn_checked));
}

}  // namespace
}  // namespace strata::table
