// Table::RewriteColumns (local_table_rewrite.cc), with and without a primary key: rows and
// values survive a rewrite (also across SSTables and a reopen), a primary-key table stays
// keyed, index definitions are maintained by the fresh shard, a failing plan or transform
// changes nothing and leaves no shard behind, and inserts racing a rewrite are never lost.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "arrow/builder.h"
#include "io/local_object_store.h"
#include "table/catalog.h"

namespace strata::table {
namespace {

using strata::testing::TempDir;

arrow::SchemaPtr TwoColumns() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("n", arrow::int64(), true)});
}

/// Rows (id, n = id * 3) for ids [first, last].
arrow::RecordBatchPtr Rows(int64_t first, int64_t last) {
  arrow::RecordBatchBuilder b(TwoColumns());
  for (int64_t id = first; id <= last; ++id) {
    EXPECT_TRUE(b.column(0)->AppendInt(id).ok());
    EXPECT_TRUE(b.column(1)->AppendInt(id * 3).ok());
  }
  return b.Finish().value();
}

/// The rewrite that appends column "m" (int64, nullable) = n + 1000.
ColumnRewrite AddM(const RewriteSource& src) {
  std::vector<arrow::FieldPtr> fields = src.snapshot.schema->fields();
  fields.push_back(arrow::field("m", arrow::int64(), true));
  ColumnRewrite r;
  r.schema = std::make_shared<arrow::Schema>(std::move(fields));
  r.primary_key = src.primary_key;
  r.indexes = src.indexes;
  r.transform = [schema = r.schema](const arrow::RecordBatchPtr& b,
                                    size_t) -> Result<arrow::RecordBatchPtr> {
    std::vector<std::optional<int64_t>> m;
    arrow::Array n = b->column(1);
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      m.push_back(n.IsNull(i) ? std::nullopt : std::optional<int64_t>(n.Value<int64_t>(i) + 1000));
    }
    std::vector<arrow::ArrayDataPtr> cols = b->columns();
    cols.push_back(arrow::MakeInt64Array(m));
    return std::make_shared<arrow::RecordBatch>(schema, b->num_rows(), std::move(cols));
  };
  return r;
}

/// id -> every other column's value (nullopt for null), checking ids are unique.
std::map<int64_t, std::vector<std::optional<int64_t>>> Values(const Table& t) {
  std::map<int64_t, std::vector<std::optional<int64_t>>> out;
  for (const auto& b : strata::testing::Live(t.Snapshot())) {
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      const int64_t id = b->column(0).Value<int64_t>(i);
      EXPECT_EQ(out.count(id), 0u) << "duplicate id " << id;
      auto& row = out[id];
      for (int c = 1; c < b->num_columns(); ++c) {
        arrow::Array a = b->column(c);
        row.push_back(a.IsNull(i) ? std::nullopt : std::optional<int64_t>(a.Value<int64_t>(i)));
      }
    }
  }
  return out;
}

/// Shard folders of table "t" (each holds at least one object).
size_t ShardDirs(const std::string& root) {
  auto store = io::LocalObjectStore::Open(root);
  EXPECT_TRUE(store.ok());
  auto shards = (*store)->ListChildren("default/t/_mem_wal/");
  EXPECT_TRUE(shards.ok()) << shards.status().ToString();
  return shards.ok() ? shards->size() : 0;
}

class RewriteTest : public ::testing::TestWithParam<bool> {
 protected:
  bool keyed() const { return GetParam(); }
  shard::ShardWriterOptions Options() const {
    shard::ShardWriterOptions o;
    if (keyed()) o.primary_key = {"id"};
    o.max_memtable_rows = 300;  // several SSTables and MemTables
    return o;
  }
  std::shared_ptr<Table> Create(const std::vector<arrow::RecordBatchPtr>& rows) {
    catalog_ = std::move(Catalog::Open(dir_.path(), Options())).value();
    auto t = catalog_->CreateTable("default", "t", TwoColumns(), rows, CreateMode::kCreate);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return *t;
  }
  std::shared_ptr<Table> Reopen() {
    catalog_.reset();
    catalog_ = std::move(Catalog::Open(dir_.path(), Options())).value();
    auto t = catalog_->GetTable("default", "t");
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return *t;
  }
  TempDir dir_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_P(RewriteTest, RowsAndValuesPreservedAcrossTiersAndReopen) {
  auto t = Create({Rows(1, 1000)});
  ASSERT_TRUE(t->Insert({Rows(1001, 1500)}).ok());
  ASSERT_TRUE(t->Flush(shard::Clock::now() + std::chrono::seconds(30)).ok());
  ASSERT_TRUE(t->Insert({Rows(1501, 1600)}).ok());  // stays in a MemTable
  const uint64_t before = t->version();
  auto v =
      t->RewriteColumns([](const RewriteSource& s) -> Result<ColumnRewrite> { return AddM(s); });
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_GT(*v, before);
  EXPECT_EQ(t->version(), *v);
  ASSERT_EQ(t->schema()->num_fields(), 3);
  EXPECT_EQ(t->schema()->field(2)->name, "m");
  auto check = [](const std::map<int64_t, std::vector<std::optional<int64_t>>>& got) {
    ASSERT_EQ(got.size(), 1600u);
    for (const auto& [id, row] : got) {
      ASSERT_EQ(row.size(), 2u);
      EXPECT_EQ(row[0], id * 3) << id;
      EXPECT_EQ(row[1], id * 3 + 1000) << id;
    }
  };
  check(Values(*t));
  EXPECT_EQ(ShardDirs(dir_.path()), 1u) << "the old shard's files are removed";
  auto reopened = Reopen();
  EXPECT_EQ(reopened->version(), *v);
  EXPECT_EQ(reopened->schema()->num_fields(), 3);
  check(Values(*reopened));
}

TEST_P(RewriteTest, KeyedTableStaysKeyedAndInsertsUseTheNewSchema) {
  auto t = Create({Rows(1, 100)});
  ASSERT_TRUE(t->RewriteColumns([this](const RewriteSource& s) -> Result<ColumnRewrite> {
                 EXPECT_EQ(s.primary_key.empty(), !keyed());
                 return AddM(s);
               }).ok());
  // An old-schema batch conforms (the new column is nullable); with a primary key it replaces
  // id 5, without one it is a new row.
  arrow::RecordBatchBuilder b(TwoColumns());
  ASSERT_TRUE(b.column(0)->AppendInt(5).ok());
  ASSERT_TRUE(b.column(1)->AppendInt(-1).ok());
  ASSERT_TRUE(t->Insert({b.Finish().value()}).ok());
  int64_t rows = 0, fives = 0;
  for (const auto& batch : strata::testing::Live(t->Snapshot())) {
    for (int64_t i = 0; i < batch->num_rows(); ++i, ++rows) {
      if (batch->column(0).Value<int64_t>(i) != 5) continue;
      ++fives;
      if (keyed()) {
        EXPECT_EQ(batch->column(1).Value<int64_t>(i), -1);
        EXPECT_TRUE(batch->column(2).IsNull(i));
      }
    }
  }
  EXPECT_EQ(rows, keyed() ? 100 : 101);
  EXPECT_EQ(fives, keyed() ? 1 : 2);
  // Still keyed after a reopen (the manifest keeps the primary key).
  auto reopened = Reopen();
  ASSERT_TRUE(reopened->Insert({Rows(5, 5)}).ok());
  EXPECT_EQ(reopened->Snapshot().num_rows, keyed() ? 100 : 102);
}

TEST_P(RewriteTest, IndexDefinitionsAreMaintainedByTheFreshShard) {
  auto t = Create({Rows(1, 500)});
  index::IndexSpec spec;
  spec.name = "n_idx";
  spec.column = "n";
  spec.kind = index::IndexKind::kBTree;
  spec.requested_type = "BTREE";
  ASSERT_TRUE(t->CreateIndex(spec).ok());
  ASSERT_TRUE(t->RewriteColumns([](const RewriteSource& s) -> Result<ColumnRewrite> {
                 EXPECT_EQ(s.indexes.size(), 1u);
                 return AddM(s);
               }).ok());
  ASSERT_TRUE(t->Insert({Rows(501, 600)}).ok());
  auto listed = t->ListIndexes();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].spec.name, "n_idx");
  EXPECT_EQ(listed[0].spec.column, "n");
  // The active MemTable maintains the BTREE (rows indexed as they arrive).
  bool found = false;
  for (const auto& d : t->DescribeShards()) {
    for (const auto& ix : d.indexes) {
      if (ix.name == "n_idx") {
        found = true;
        EXPECT_EQ(ix.kind, "BTREE");
        EXPECT_GT(ix.rows_indexed, 0);
      }
    }
  }
  EXPECT_TRUE(found);
  // Every row ends up indexed (MemTables and flushed SSTables).
  ASSERT_TRUE(t->Flush(shard::Clock::now() + std::chrono::seconds(30)).ok());
  int64_t unindexed = -1, indexed = -1;
  for (int i = 0; i < 200; ++i) {
    auto l = t->ListIndexes();
    unindexed = l.at(0).num_unindexed_rows;
    indexed = l.at(0).num_indexed_rows;
    if (unindexed == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(unindexed, 0);
  EXPECT_EQ(indexed, 600);
  EXPECT_EQ(Reopen()->ListIndexes().size(), 1u);
}

TEST_P(RewriteTest, FailureChangesNothingAndLeavesNoShard) {
  auto t = Create({Rows(1, 200)});
  ASSERT_TRUE(t->Insert({Rows(201, 400)}).ok());
  const uint64_t version = t->version();
  const auto values = Values(*t);
  // A failing plan.
  auto r1 = t->RewriteColumns(
      [](const RewriteSource&) -> Result<ColumnRewrite> { return Status::Invalid("no plan"); });
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.status().message(), "no plan");
  // A transform failing after the first batch was written into the fresh shard.
  int calls = 0;
  auto r2 = t->RewriteColumns([&](const RewriteSource& s) -> Result<ColumnRewrite> {
    EXPECT_GE(s.batches.size(), 2u);
    ColumnRewrite r = AddM(s);
    auto inner = r.transform;
    r.transform = [&calls, inner](const arrow::RecordBatchPtr& b,
                                  size_t i) -> Result<arrow::RecordBatchPtr> {
      if (++calls == 2) return Status::Invalid("transform failed");
      return inner(b, i);
    };
    return r;
  });
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.status().message(), "transform failed");
  EXPECT_EQ(calls, 2);
  // A transform whose result does not conform to the new schema (wrong type).
  auto r3 = t->RewriteColumns([](const RewriteSource& s) -> Result<ColumnRewrite> {
    ColumnRewrite r = AddM(s);
    r.transform = [](const arrow::RecordBatchPtr& b, size_t) -> Result<arrow::RecordBatchPtr> {
      return b;  // 2 columns for a 3-column schema
    };
    return r;
  });
  ASSERT_FALSE(r3.ok());
  EXPECT_TRUE(r3.status().IsInvalid()) << r3.status().ToString();
  // An index definition that does not fit the new schema.
  auto r4 = t->RewriteColumns([](const RewriteSource& s) -> Result<ColumnRewrite> {
    ColumnRewrite r = AddM(s);
    index::IndexSpec bad;
    bad.name = "x_idx";
    bad.column = "nope";
    bad.kind = index::IndexKind::kBTree;
    r.indexes.push_back(bad);
    return r;
  });
  ASSERT_FALSE(r4.ok());
  EXPECT_EQ(t->version(), version);
  EXPECT_EQ(t->schema()->num_fields(), 2);
  EXPECT_EQ(Values(*t), values);
  EXPECT_EQ(ShardDirs(dir_.path()), 1u) << "the fresh shard is removed";
  ASSERT_TRUE(t->Insert({Rows(401, 401)}).ok());  // still writable
  EXPECT_EQ(Reopen()->Snapshot().num_rows, 401);
}

TEST_P(RewriteTest, ConcurrentInsertsAreNotLost) {
  auto t = Create({Rows(1, 2000)});
  std::atomic<bool> stop{false};
  std::atomic<int64_t> next{100000};
  std::vector<int64_t> acked;
  std::thread writer([&] {
    while (!stop.load()) {
      const int64_t id = next.fetch_add(10);
      auto v = t->Insert({Rows(id, id + 9)});
      ASSERT_TRUE(v.ok()) << v.status().ToString();
      for (int64_t i = id; i < id + 10; ++i) acked.push_back(i);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  auto v =
      t->RewriteColumns([](const RewriteSource& s) -> Result<ColumnRewrite> { return AddM(s); });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  stop = true;
  writer.join();
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  const auto got = Values(*t);
  EXPECT_EQ(got.size(), 2000 + acked.size());
  int64_t transformed = 0, after = 0;
  for (int64_t id : acked) {
    auto it = got.find(id);
    ASSERT_NE(it, got.end()) << "acknowledged id " << id << " lost";
    EXPECT_EQ(it->second[0], id * 3);
    // Before the rewrite: transformed (m = n + 1000); after: inserted under the new schema
    // without m (null).
    if (it->second[1].has_value()) {
      EXPECT_EQ(it->second[1], id * 3 + 1000);
      ++transformed;
    } else {
      ++after;
    }
  }
  EXPECT_GT(transformed + after, 0);
  std::printf("racing inserts: %lld transformed, %lld after the rewrite\n",
              static_cast<long long>(transformed), static_cast<long long>(after));
}

INSTANTIATE_TEST_SUITE_P(PrimaryKey, RewriteTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Keyed" : "RowId"; });

// Timing figure for the report: 100,000 rows (two puts of 50,000) rewritten with one new column.
TEST(RewriteTiming, HundredThousandRows) {
  TempDir dir;
  auto catalog = std::move(Catalog::Open(dir.path(), {})).value();
  auto t =
      *catalog->CreateTable("default", "t", TwoColumns(), {Rows(1, 100000)}, CreateMode::kCreate);
  const auto start = std::chrono::steady_clock::now();
  auto v =
      t->RewriteColumns([](const RewriteSource& s) -> Result<ColumnRewrite> { return AddM(s); });
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  auto snap = t->Snapshot();
  EXPECT_EQ(snap.num_rows, 100000);
  int64_t sum = 0;
  for (const auto& b : strata::testing::Live(snap)) {
    for (int64_t i = 0; i < b->num_rows(); ++i) sum += b->column(2).Value<int64_t>(i);
  }
  EXPECT_EQ(sum, 3 * (100000LL * 100001 / 2) + 1000LL * 100000);
  std::printf("rewrite of 100000 rows: %.1f ms\n", ms);
}

}  // namespace
}  // namespace strata::table
