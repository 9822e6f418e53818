// Reads make no object-store request (issue 17 "manifest loads ... do not list on the hot path";
// the Lance PR 8640 lesson: 5+N requests per fresh-tier read). A table on a counting store
// (io/fault_injecting_store.h counts every read call by kind) with rows in the base, in
// SSTables and in the MemTable: opening it reads its manifests once; after that, looking the
// table up, taking snapshots, vector searches and scans of every tier send nothing to the store,
// so on S3 a query costs no request at all.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include <thread>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "arrow/builder.h"
#include "index/index_spec.h"
#include "io/fault_injecting_store.h"
#include "io/local_object_store.h"
#include "query/vector_search.h"
#include "table/local_catalog.h"
#include "table/primary_key.h"

namespace strata::table {
namespace {

constexpr int32_t kDim = 8;

arrow::SchemaPtr VecSchema() {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false),
      arrow::field("vec", arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
  return *DeclarePrimaryKey(s, {"id"});
}

arrow::RecordBatchPtr VecRows(int64_t first, int64_t n) {
  std::mt19937 rng(static_cast<uint32_t>(first));
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<std::optional<int64_t>> ids;
  std::vector<float> v(static_cast<size_t>(n * kDim));
  for (int64_t i = 0; i < n; ++i) ids.push_back(first + i);
  for (auto& x : v) x = u(rng);
  return std::make_shared<arrow::RecordBatch>(
      VecSchema(), n,
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids),
                                       arrow::MakeVectorArray(v, kDim)});
}

index::IndexSpec HnswOnVec() {
  index::IndexSpec s;
  s.kind = index::IndexKind::kHnsw;
  s.column = "vec";
  s.name = "vec_idx";
  s.hnsw.distance = index::DistanceType::kL2;
  return s;
}

uint64_t Reads(const io::FaultInjectingStats& s) {
  return s.gets + s.get_ranges + s.heads + s.lists;
}

TEST(ReadRequests, SearchesAndScansOfEveryTierSendNoStoreRequest) {
  strata::testing::TempDir dir;
  auto store = std::make_shared<io::FaultInjectingStore>(*io::LocalObjectStore::Open(dir.path()));
  base::CompactionOptions compaction;
  compaction.background = false;  // the tiers stay as the test makes them
  compaction.gc = false;
  const auto deadline = [] { return std::chrono::steady_clock::now() + std::chrono::seconds(60); };
  {
    LocalCatalog writer(store, {}, compaction, {});
    auto t = *writer.CreateTable("default", "t", VecSchema(), {}, CreateMode::kCreate);
    ASSERT_TRUE(t->CreateIndex(HnswOnVec()).ok());
    ASSERT_TRUE(t->Insert({VecRows(0, 500)}).ok());
    ASSERT_TRUE(t->Flush(deadline()).ok());
    ASSERT_TRUE(t->Compact(deadline()).ok());  // base: 500 rows
    ASSERT_TRUE(t->Insert({VecRows(500, 300)}).ok());
    ASSERT_TRUE(t->Flush(deadline()).ok());  // one SSTable
  }
  // A second server process's view: open, then read.
  LocalCatalog catalog(store, {}, compaction, {});
  auto t = *catalog.GetTable("default", "t");
  ASSERT_TRUE(t->Insert({VecRows(800, 200)}).ok());  // the MemTable
  // The maintenance thread loads the base index checkpoint (a store read) after the open.
  const auto end = deadline();
  auto base_ready = [&] {
    for (const auto& st : t->ListIndexes()) {
      if (st.base.has_value() && st.base->rows == 500 && st.num_unindexed_rows == 0) return true;
    }
    return false;
  };
  while (!base_ready() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(base_ready());
  const auto opened = store->stats();
  EXPECT_GE(opened.lists, 1u);  // opening found the manifests
  EXPECT_GE(opened.gets, 1u);

  store->ResetCounters();
  for (int i = 0; i < 50; ++i) {
    auto again = catalog.GetTable("default", "t");
    ASSERT_TRUE(again.ok());
    const TableSnapshot snap = (*again)->Snapshot();
    ASSERT_EQ(snap.num_rows, 1000);
    query::VectorSearchOptions o;
    o.query.assign(kDim, 0.01f * static_cast<float>(i));
    o.k = 10;
    auto r = query::VectorSearch(snap, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->num_rows, 10);
    ASSERT_EQ(r->plan.size(), 3u);  // base, SSTable, MemTable
  }
  int64_t scanned = 0;
  for (const auto& b : strata::testing::Live(t->Snapshot())) scanned += b->num_rows();
  EXPECT_EQ(scanned, 1000);
  const auto after = store->stats();
  EXPECT_EQ(Reads(after), 0u) << "gets " << after.gets << " ranges " << after.get_ranges
                              << " heads " << after.heads << " lists " << after.lists;
  EXPECT_EQ(after.puts, 0u);
}

}  // namespace
}  // namespace strata::table
