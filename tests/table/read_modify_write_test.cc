// Table::ReadModifyWrite: concurrent read-modify-writes never lose an update, inserts running
// alongside are never lost, a failing function writes nothing, an empty mutation writes nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "arrow/builder.h"
#include "table/catalog.h"

namespace strata::table {
namespace {

using strata::testing::TempDir;

arrow::SchemaPtr CounterSchema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("n", arrow::int64(), true)});
}

arrow::RecordBatchPtr CounterRows(const std::vector<std::pair<int64_t, int64_t>>& rows) {
  arrow::RecordBatchBuilder b(CounterSchema());
  for (auto [id, n] : rows) {
    EXPECT_TRUE(b.column(0)->AppendInt(id).ok());
    EXPECT_TRUE(b.column(1)->AppendInt(n).ok());
  }
  return b.Finish().value();
}

std::map<int64_t, int64_t> Values(const Table& t) {
  std::map<int64_t, int64_t> out;
  for (const auto& b : strata::testing::Live(t.Snapshot())) {
    arrow::Array id = b->column(0), n = b->column(1);
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      EXPECT_EQ(out.count(id.Value<int64_t>(i)), 0u) << "duplicate id " << id.Value<int64_t>(i);
      out[id.Value<int64_t>(i)] = n.Value<int64_t>(i);
    }
  }
  return out;
}

/// A mutation replacing the row of `id` with n + 1 (read from the snapshot's storage rows,
/// keeping its key: the primary key, or the hidden `_rowid`).
Result<Mutation> Increment(const TableSnapshot& snap, int64_t id) {
  for (const auto& b : strata::testing::Live(snap, true)) {
    arrow::Array ids = b->column(0), n = b->column(1);
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      if (ids.Value<int64_t>(i) != id) continue;
      auto one = b->Slice(i, 1);
      std::vector<arrow::ArrayDataPtr> columns;
      for (int c = 0; c < one->num_columns(); ++c) columns.push_back(one->column_data(c));
      columns[1] = arrow::MakeInt64Array({n.Value<int64_t>(i) + 1});
      Mutation m;
      m.storage_rows.push_back(
          std::make_shared<arrow::RecordBatch>(one->schema(), 1, std::move(columns)));
      return m;
    }
  }
  return Status::NotFound("id " + std::to_string(id));
}

class ReadModifyWriteTest : public ::testing::TestWithParam<bool> {
 protected:
  std::shared_ptr<Table> Create(const std::vector<arrow::RecordBatchPtr>& rows) {
    shard::ShardWriterOptions o;
    if (GetParam()) o.primary_key = {"id"};
    o.max_memtable_rows = 64;  // seals and flushes while the test runs
    catalog_ = std::move(Catalog::Open(dir_.path(), o)).value();
    auto t = catalog_->CreateTable("default", "t", CounterSchema(), rows, CreateMode::kCreate);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return *t;
  }
  TempDir dir_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_P(ReadModifyWriteTest, EightThreadsHundredIncrementsEach) {
  auto t = Create({CounterRows({{0, 0}, {1, 0}})});
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int th = 0; th < 8; ++th) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        auto v = t->ReadModifyWrite([](const TableSnapshot& s) { return Increment(s, 0); });
        if (!v.ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  const std::map<int64_t, int64_t> want{{0, 800}, {1, 0}};
  EXPECT_EQ(Values(*t), want);
}

TEST_P(ReadModifyWriteTest, ConcurrentInsertsAreNotLost) {
  auto t = Create({CounterRows({{0, 0}})});
  std::thread inserter([&] {
    for (int64_t id = 1; id <= 200; ++id) {
      auto v = t->Insert({CounterRows({{id, id}})});
      EXPECT_TRUE(v.ok()) << v.status().ToString();
    }
  });
  std::vector<std::thread> updaters;
  for (int th = 0; th < 4; ++th) {
    updaters.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto v = t->ReadModifyWrite([](const TableSnapshot& s) { return Increment(s, 0); });
        EXPECT_TRUE(v.ok()) << v.status().ToString();
      }
    });
  }
  inserter.join();
  for (auto& th : updaters) th.join();
  std::map<int64_t, int64_t> want{{0, 200}};
  for (int64_t id = 1; id <= 200; ++id) want[id] = id;
  EXPECT_EQ(Values(*t), want);
}

TEST_P(ReadModifyWriteTest, VersionsAndNoOps) {
  auto t = Create({CounterRows({{0, 0}})});
  const uint64_t v0 = t->version();
  // The function sees every acknowledged write.
  ASSERT_TRUE(t->Insert({CounterRows({{5, 5}})}).ok());
  int64_t seen = -1;
  auto v1 = t->ReadModifyWrite([&](const TableSnapshot& s) -> Result<Mutation> {
    seen = s.num_rows;
    return Mutation{};
  });
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(*v1, t->version());  // empty mutation: nothing written, current version
  EXPECT_GT(*v1, v0);
  // A failing function writes nothing.
  auto bad = t->ReadModifyWrite(
      [](const TableSnapshot&) -> Result<Mutation> { return Status::Invalid("no thanks"); });
  EXPECT_TRUE(bad.status().IsInvalid());
  EXPECT_EQ(t->version(), *v1);
  // A write: a higher version; replacement + insert in one entry.
  auto v2 = t->ReadModifyWrite([](const TableSnapshot& s) -> Result<Mutation> {
    STRATA_ASSIGN_OR_RETURN(Mutation m, Increment(s, 5));
    m.inserts.push_back(CounterRows({{6, 60}}));
    return m;
  });
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(*v2, *v1 + 1);
  EXPECT_EQ(*v2, t->version());
  const std::map<int64_t, int64_t> want{{0, 0}, {5, 6}, {6, 60}};
  EXPECT_EQ(Values(*t), want);
}

INSTANTIATE_TEST_SUITE_P(Keys, ReadModifyWriteTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "PrimaryKey" : "RowId"; });

}  // namespace
}  // namespace strata::table
