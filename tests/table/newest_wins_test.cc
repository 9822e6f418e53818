// Newest wins at 200,000 rows (the scenarios of public bug reports), against a model:
// Differential.NewestWinsAt200kRows: 200,000 rows in 1,000-row batches over several SSTables;
// upserts then deletes across a flush, deletes then re-inserts across a flush, newer versions
// that fail a filter the older ones pass; scans, counts, point lookups and filtered vector
// search must see only the newest version of every key. Differential.NewestWinsAt200kRowsOn-
// FourBuckets: the same scenarios on a table of 4 bucket shards (issue 16).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arrow/builder.h"
#include "query/scan.h"
#include "query/vector_search.h"
#include "table/catalog.h"
#include "table/lsm_write_spec.h"
#include "table/primary_key.h"
#include "table_test_util.h"

namespace strata::table {
namespace {

constexpr int64_t kScenarioRows = 200000;
constexpr int64_t kBatchRows = 1000;

arrow::SchemaPtr ScenarioSchema() {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("n", arrow::int64()),
      arrow::field("vec", arrow::fixed_size_list(arrow::field("item", arrow::float32()), 2))});
  return DeclarePrimaryKey(s, {"id"}).value();
}

// Vector of row `id` with value n: (n, id % 7), so a search near (n, 0) finds n's rows.
arrow::RecordBatchPtr ScenarioRows(const std::vector<std::pair<int64_t, int64_t>>& rows) {
  std::vector<std::optional<int64_t>> ids, ns;
  std::vector<float> vecs;
  for (auto [id, n] : rows) {
    ids.push_back(id);
    ns.push_back(n);
    vecs.push_back(static_cast<float>(n));
    vecs.push_back(static_cast<float>(id % 7));
  }
  return std::make_shared<arrow::RecordBatch>(
      ScenarioSchema(), static_cast<int64_t>(rows.size()),
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids), arrow::MakeInt64Array(ns),
                                       arrow::MakeVectorArray(vecs, 2)});
}

// (id, n) of every row of a query answer, checking ids are unique.
std::map<int64_t, int64_t> IdToN(const query::QueryResult& r) {
  std::map<int64_t, int64_t> out;
  for (const auto& b : r.batches) {
    arrow::Array id = b->column(b->schema()->GetFieldIndex("id"));
    arrow::Array n = b->column(b->schema()->GetFieldIndex("n"));
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      EXPECT_TRUE(out.emplace(id.Value<int64_t>(i), n.Value<int64_t>(i)).second)
          << "id " << id.Value<int64_t>(i) << " returned twice";
    }
  }
  return out;
}

class NewestWins {
 public:
  /// `buckets` > 0: a bucket-sharded table of that many shards (created with the spec).
  explicit NewestWins(int64_t buckets = 0) : buckets_(buckets) {}
  void Open() {
    table_.reset();
    catalog_.reset();
    shard::ShardWriterOptions o;
    o.max_memtable_rows = 25000;  // 8+ SSTables for the initial rows
    catalog_ = std::move(Catalog::Open(dir_.path(), o)).value();
    std::optional<LsmWriteSpec> spec;
    if (buckets_ > 0) spec = strata::testing::BucketsOnId(buckets_);
    auto t =
        catalog_->CreateTable("default", "nw", ScenarioSchema(), {}, CreateMode::kExistOk, spec);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    table_ = *t;
  }
  // Writes (id, n) pairs in 1,000-row batches; n < 0 deletes the id.
  void Write(const std::vector<std::pair<int64_t, int64_t>>& rows) {
    for (size_t first = 0; first < rows.size(); first += kBatchRows) {
      const size_t last = std::min(rows.size(), first + kBatchRows);
      std::vector<std::pair<int64_t, int64_t>> puts;
      std::vector<std::optional<int64_t>> deletes;
      for (size_t i = first; i < last; ++i) {
        if (rows[i].second < 0) {
          deletes.push_back(rows[i].first);
          model_.erase(rows[i].first);
        } else {
          puts.push_back(rows[i]);
          model_[rows[i].first] = rows[i].second;
        }
      }
      if (!puts.empty()) {
        ASSERT_TRUE(table_->Insert({ScenarioRows(puts)}).ok());
      }
      if (!deletes.empty()) {
        auto ks = std::make_shared<arrow::Schema>(
            std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64(), false)});
        auto b = std::make_shared<arrow::RecordBatch>(
            ks, static_cast<int64_t>(deletes.size()),
            std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(deletes)});
        auto v = table_->Delete({b});
        ASSERT_TRUE(v.ok()) << v.status().ToString();
      }
    }
  }
  void Flush() {
    auto r = table_->Flush(shard::Clock::now() + std::chrono::seconds(120));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  void Check(const std::string& when) {
    SCOPED_TRACE(when);
    const TableSnapshot snap = table_->Snapshot();
    auto count = query::CountRows(snap, std::nullopt);
    ASSERT_TRUE(count.ok()) << count.status().ToString();
    EXPECT_EQ(*count, static_cast<int64_t>(model_.size())) << "count";
    auto all = query::Scan(snap, {});
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    EXPECT_EQ(all->num_rows, static_cast<int64_t>(model_.size()));
    EXPECT_TRUE(IdToN(*all) == model_) << "full scan differs from the model";
    // Filters the older versions pass and the newest ones do not (and the reverse).
    for (const std::string& filter :
         std::vector<std::string>{"n < 100", "n >= 100", "n < 100 AND id % 10 = 2",
                                  "n = 500 OR n = 7", "id >= 20000 AND id < 40000"}) {
      std::map<int64_t, int64_t> want;
      for (auto [id, n] : model_) {
        bool pass = false;
        if (filter == "n < 100") pass = n < 100;
        if (filter == "n >= 100") pass = n >= 100;
        if (filter == "n < 100 AND id % 10 = 2") pass = n < 100 && id % 10 == 2;
        if (filter == "n = 500 OR n = 7") pass = n == 500 || n == 7;
        if (filter == "id >= 20000 AND id < 40000") pass = id >= 20000 && id < 40000;
        if (pass) want[id] = n;
      }
      query::ScanOptions o;
      o.filter = filter;
      auto r = query::Scan(snap, o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      const auto got = IdToN(*r);
      EXPECT_EQ(got.size(), want.size()) << "scan where " << filter;
      EXPECT_TRUE(got == want) << "scan where " << filter << " differs from the model";
      auto c = query::CountRows(snap, filter);
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      EXPECT_EQ(*c, static_cast<int64_t>(want.size())) << "count where " << filter;
    }
    // Point lookups in every group.
    for (int64_t id :
         {0, 1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 49991, 49992, 99992, 100002, 199999, 200000}) {
      query::ScanOptions o;
      o.filter = "id = " + std::to_string(id);
      auto r = query::Scan(snap, o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      std::map<int64_t, int64_t> want;
      if (model_.count(id)) want[id] = model_.at(id);
      EXPECT_TRUE(IdToN(*r) == want) << "point lookup id = " << id;
    }
    // Exact vector search with a filter only the stale versions pass: nothing may come back;
    // near (5000, 0) with `n >= 100`: the newest versions (n = 5000) and nothing stale.
    {
      query::VectorSearchOptions o;
      o.query = {5.0f, 0.0f};
      o.column = "vec";
      o.k = 10;
      o.bypass_vector_index = true;
      o.filter = "n < 100 AND id % 10 = 2 AND id < 100000";
      auto r = query::VectorSearch(snap, o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      std::map<int64_t, int64_t> want;
      for (auto [id, n] : model_) {
        if (n < 100 && id % 10 == 2 && id < 100000) want[id] = n;
      }
      EXPECT_EQ(r->num_rows, std::min<int64_t>(10, static_cast<int64_t>(want.size())))
          << "vector search where " << *o.filter;
      for (auto [id, n] : IdToN(*r)) {
        EXPECT_TRUE(want.count(id) && want.at(id) == n)
            << "vector search returned stale (" << id << ", " << n << ")";
      }
      o.query = {5000.0f, 0.0f};
      o.filter = "n >= 100";
      r = query::VectorSearch(snap, o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->num_rows, 10);
      for (auto [id, n] : IdToN(*r)) {
        EXPECT_TRUE(model_.count(id) && model_.at(id) == n)
            << "vector search returned stale (" << id << ", " << n << ")";
        EXPECT_EQ(n, 5000) << id;
      }
    }
  }

  std::map<int64_t, int64_t> model_;

 private:
  const int64_t buckets_;
  strata::testing::ScratchDir dir_;
  std::unique_ptr<Catalog> catalog_;
  std::shared_ptr<Table> table_;
};

// The scenarios of public bug reports (upserts across a flush, a delete after an upsert,
// filters the old versions pass) on `buckets` shards (0: unsharded).
void RunNewestWins(int64_t buckets) {
  NewestWins s(buckets);
  ASSERT_NO_FATAL_FAILURE(s.Open());
  // 200,000 rows, n = id % 100, flushed into SSTables.
  {
    std::vector<std::pair<int64_t, int64_t>> rows;
    for (int64_t id = 0; id < kScenarioRows; ++id) rows.emplace_back(id, id % 100);
    ASSERT_NO_FATAL_FAILURE(s.Write(rows));
    ASSERT_NO_FATAL_FAILURE(s.Flush());
  }
  std::vector<std::pair<int64_t, int64_t>> upsert_a, delete_a, upsert_b1, upsert_b2, delete_c,
      reinsert_c;
  for (int64_t id = 0; id < 100000; ++id) {
    if (id % 10 == 1 && id < 50000) {
      upsert_a.emplace_back(id, 500);
      delete_a.emplace_back(id, -1);
    }
    if (id % 10 == 2) (id < 50000 ? upsert_b1 : upsert_b2).emplace_back(id, 5000);
    if (id % 10 == 3 && id < 30000) {
      delete_c.emplace_back(id, -1);
      reinsert_c.emplace_back(id, 7);
    }
  }
  // A: upsert, flush, delete (the tombstone in a newer tier than the upsert, which is newer
  // than the original). B: newer versions with n = 5000 that fail `n < 100`, half flushed,
  // half in MemTables. C: delete, flush, re-insert with n = 7.
  ASSERT_NO_FATAL_FAILURE(s.Write(upsert_a));
  ASSERT_NO_FATAL_FAILURE(s.Write(upsert_b1));
  ASSERT_NO_FATAL_FAILURE(s.Write(delete_c));
  ASSERT_NO_FATAL_FAILURE(s.Check("after the upserts, before the flush"));
  ASSERT_NO_FATAL_FAILURE(s.Flush());
  ASSERT_NO_FATAL_FAILURE(s.Check("after the upserts and a flush"));
  ASSERT_NO_FATAL_FAILURE(s.Write(delete_a));
  ASSERT_NO_FATAL_FAILURE(s.Write(upsert_b2));
  ASSERT_NO_FATAL_FAILURE(s.Write(reinsert_c));
  ASSERT_NO_FATAL_FAILURE(s.Check("deletes / re-inserts in MemTables"));
  EXPECT_EQ(s.model_.size(), static_cast<size_t>(kScenarioRows - 5000));
  ASSERT_NO_FATAL_FAILURE(s.Flush());
  ASSERT_NO_FATAL_FAILURE(s.Check("everything flushed"));
  ASSERT_NO_FATAL_FAILURE(s.Open());
  ASSERT_NO_FATAL_FAILURE(s.Check("after a reopen"));
}

TEST(Differential, NewestWinsAt200kRows) { RunNewestWins(0); }

TEST(Differential, NewestWinsAt200kRowsOnFourBuckets) { RunNewestWins(4); }

}  // namespace
}  // namespace strata::table
