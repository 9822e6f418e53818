// Base rewrite of a vector table (base/base_table.h "Base rewrite"): the base HNSW graph and
// an IVF index are rebuilt over the live rows only (an IVF index keeps its trained model: no
// retraining), searches find the newest vectors with the recall of exact search, checkpoints
// of the new indexes load at restart, and the index memory shrinks with the dead rows.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "../io/storage_test_util.h"
#include "arrow/builder.h"
#include "clustered_vectors_util.h"
#include "format/table_manifest.h"
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

struct Fixture {
  strata::testing::TempDir dir;
  std::shared_ptr<io::LocalObjectStore> store = *io::LocalObjectStore::Open(dir.path());
  const std::string prefix = "default/vec";
  shard::ShardWriterOptions writer;
  CompactionOptions co;
  std::shared_ptr<table::LocalTable> table;
  Data data{5};
  std::vector<float> newest;  // the newest vector of each id (ids 0..n-1)

  Fixture() {
    writer.max_memtable_rows = 1000000;
    writer.max_memtable_bytes = 1ll << 32;
    writer.max_memtable_age = std::chrono::hours(1);
    co.background = false;
    co.min_checkpoint_rows = 100;
    co.rewrite_dead_fraction = 0;
  }
  void Create(const std::string& type, const std::string& params_json) {
    auto t = table::LocalTable::Create(store, prefix, "vec", VecSchema(), {}, writer, co);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    table = *t;
    index::IndexSpec spec;
    spec.name = "vector_idx";
    spec.column = "vector";
    spec.kind = index::IndexKind::kHnsw;
    spec.requested_type = type;
    spec.params_json = params_json;
    spec.base_ivf = type != "HNSW";
    auto made = table->CreateIndex(spec);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }
  // Writes new vectors for ids [0, n), flushes and compacts them into the base.
  void UpsertAll(int64_t n) {
    newest = data.Next(n);
    ASSERT_TRUE(table->Insert({Rows(0, newest)}).ok());
    ASSERT_TRUE(table->Flush(shard::Clock::now() + std::chrono::minutes(1)).ok());
    auto c = table->Compact(shard::Clock::now() + std::chrono::minutes(5));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    WaitIndexes();
  }
  void WaitIndexes() {
    for (int i = 0; i < 1200; ++i) {
      auto d = table->DescribeBase();
      if (d.has_value() && !d->indexes.empty() && d->indexes[0].rows_indexed >= d->rows &&
          Base().has_value()) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "the base index was not ready in 60 s";
  }
  std::optional<table::BaseIndexBuilt> Base() {
    for (const auto& s : table->ListIndexes()) {
      if (s.spec.name == "vector_idx") return s.base;
    }
    return std::nullopt;
  }
  void Reopen() {
    table.reset();
    auto manifest = format::LoadLatestTableManifest(*store, prefix);
    ASSERT_TRUE(manifest.ok() && manifest->has_value());
    auto t = table::LocalTable::Open(store, prefix, "vec", **manifest, writer, co);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    table = *t;
    WaitIndexes();
  }
  Result<query::QueryResult> Search(const float* q, bool exact, int64_t refine = 0) {
    query::VectorSearchOptions o;
    o.query.assign(q, q + kDim);
    o.k = 10;
    o.columns = {{"id", ""}};
    o.bypass_vector_index = exact;
    if (refine > 0) o.refine_factor = refine;
    return query::VectorSearch(table->Snapshot(), o);
  }
  // recall@10 of the base index against exact search; the plan names `type` on the base.
  double Recall(const std::string& type, int64_t refine) {
    Data qs(99);
    const std::vector<float> q = qs.Next(100);
    int64_t hits = 0, total = 0;
    for (int64_t i = 0; i < 100; ++i) {
      auto exact = Search(&q[i * kDim], true);
      auto approx = Search(&q[i * kDim], false, refine);
      EXPECT_TRUE(exact.ok() && approx.ok());
      if (!exact.ok() || !approx.ok()) return 0;
      if (i == 0) {
        EXPECT_NE(approx->plan.at(0).find("base: " + type + " 'vector_idx'"), std::string::npos)
            << approx->plan.at(0);
      }
      const auto t = Ids(*exact);
      const std::set<int64_t> truth(t.begin(), t.end());
      for (int64_t id : Ids(*approx)) hits += truth.count(id);
      total += static_cast<int64_t>(t.size());
    }
    return static_cast<double>(hits) / static_cast<double>(total);
  }
  // A query equal to an id's newest vector finds that id first (the old versions are gone).
  void ExpectNewestFound(int64_t refine) {
    for (int64_t id : {0, 777, 2999}) {
      auto r = Search(&newest[id * kDim], false, refine);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_FALSE(Ids(*r).empty());
      EXPECT_EQ(Ids(*r)[0], id);
      const auto ids = Ids(*r);
      EXPECT_EQ(std::set<int64_t>(ids.begin(), ids.end()).size(), ids.size()) << "duplicate id";
    }
  }
};

TEST(BaseRewriteVector, HnswGraphIsRebuiltOverTheLiveRows) {
  Fixture f;
  ASSERT_NO_FATAL_FAILURE(f.Create("HNSW", "{}"));
  for (int i = 0; i < 3; ++i) ASSERT_NO_FATAL_FAILURE(f.UpsertAll(3000));
  auto before = f.Base();
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->rows, 9000);
  const double recall_before = f.Recall("HNSW", 0);

  auto r = f.table->RewriteBase(shard::Clock::now() + std::chrono::minutes(5));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->rows_before, 9000);
  EXPECT_EQ(r->rows_after, 3000);
  EXPECT_EQ(r->indexes_built, 1);
  auto after = f.Base();
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->type, "HNSW");
  EXPECT_EQ(after->rows, 3000);
  EXPECT_LT(after->memory_bytes, before->memory_bytes / 2);
  EXPECT_EQ(f.table->DescribeBase()->rows, 3000);
  const double recall_after = f.Recall("HNSW", 0);
  std::printf("HNSW recall@10 before %.3f after %.3f; memory %lld -> %lld bytes\n", recall_before,
              recall_after, static_cast<long long>(before->memory_bytes),
              static_cast<long long>(after->memory_bytes));
  EXPECT_GE(recall_after, 0.9);
  ASSERT_NO_FATAL_FAILURE(f.ExpectNewestFound(0));

  // The rewrite's checkpoint loads at restart (no rebuild), and answers the same.
  ASSERT_NO_FATAL_FAILURE(f.Reopen());
  EXPECT_EQ(f.Base()->rows, 3000);
  EXPECT_GE(f.Recall("HNSW", 0), 0.9);
  ASSERT_NO_FATAL_FAILURE(f.ExpectNewestFound(0));
  // Later compactions grow the rewritten graph.
  ASSERT_NO_FATAL_FAILURE(f.UpsertAll(3000));
  EXPECT_EQ(f.Base()->rows, 6000);
  ASSERT_NO_FATAL_FAILURE(f.ExpectNewestFound(0));
}

TEST(BaseRewriteVector, IvfIndexKeepsItsTrainedModel) {
  Fixture f;
  ASSERT_NO_FATAL_FAILURE(f.Create("IVF_PQ", R"({"num_sub_vectors":8})"));
  ASSERT_NO_FATAL_FAILURE(f.UpsertAll(3000));
  ASSERT_EQ(f.Base()->trained_rows, 3000);
  ASSERT_NO_FATAL_FAILURE(f.UpsertAll(3000));
  ASSERT_NO_FATAL_FAILURE(f.UpsertAll(3000));
  const auto before = f.Base();
  EXPECT_EQ(before->rows, 9000);
  EXPECT_EQ(before->trained_rows, 3000);

  auto r = f.table->RewriteBase(shard::Clock::now() + std::chrono::minutes(5));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->rows_after, 3000);
  EXPECT_EQ(r->indexes_built, 1);
  auto after = f.Base();
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->type, "IVF_PQ");
  EXPECT_EQ(after->rows, 3000);
  EXPECT_EQ(after->trained_rows, 3000);  // the same model, not retrained
  EXPECT_EQ(after->num_partitions, before->num_partitions);
  EXPECT_LT(after->memory_bytes, before->memory_bytes);
  EXPECT_EQ(f.table->DescribeBase()->stats.index_builds, 1u);  // only the first training
  const double recall = f.Recall("IVF_PQ", 10);
  std::printf("IVF_PQ refine 10 recall@10 after the rewrite %.3f\n", recall);
  EXPECT_GE(recall, 0.85);
  ASSERT_NO_FATAL_FAILURE(f.ExpectNewestFound(10));
  ASSERT_NO_FATAL_FAILURE(f.Reopen());
  EXPECT_EQ(f.Base()->trained_rows, 3000);
  EXPECT_GE(f.Recall("IVF_PQ", 10), 0.85);
  ASSERT_NO_FATAL_FAILURE(f.ExpectNewestFound(10));
}

}  // namespace
}  // namespace strata::base
