// Vector search over shard sources (vector_search.h, DESIGN.md §6): per-source HNSW or exact
// scan, liveness, filters, merge order, `_rowid`, plan lines. Snapshots are built by hand
// (tier_test_util.h) and through table::LocalTable (MemTables and SSTables of a real shard).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "../io/storage_test_util.h"
#include "index/vector/distance.h"
#include "index/vector/hnsw_index.h"
#include "io/local_object_store.h"
#include "query/query_result.h"
#include "query/source_rows.h"
#include "query/vector_search.h"
#include "tier_test_util.h"

namespace strata::query {
namespace {

using testing::FlushTable;
using testing::HandSnapshot;
using testing::HandSource;
using testing::HnswSpec;
using testing::Ids;
using testing::NumericColumn;
using testing::PlanSays;
using testing::SourceNames;
using testing::TierBatch;
using testing::TierRow;
using testing::TierSchema;
using testing::WaitForIndexes;

constexpr int32_t kDim = 8;

std::vector<float> RandomVector(std::mt19937* rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(kDim);
  for (float& x : v) x = u(*rng);
  return v;
}

// `n` rows with ids [first, first + n), text "even"/"odd" by id, random vectors.
std::vector<TierRow> RandomRows(int64_t first, int64_t n, std::mt19937* rng) {
  std::vector<TierRow> rows;
  for (int64_t i = first; i < first + n; ++i) {
    rows.push_back({i, i % 2 == 0 ? "even" : "odd", RandomVector(rng)});
  }
  return rows;
}

// Brute-force top-k ids over `rows` accepted by `keep`, with l2, ties by order in `rows`.
std::vector<int64_t> BruteForce(const std::vector<const TierRow*>& rows,
                                const std::vector<float>& q, int64_t k) {
  std::vector<std::pair<float, size_t>> d;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i]->vector) continue;
    d.push_back({index::L2Squared(q.data(), rows[i]->vector->data(), kDim), i});
  }
  std::sort(d.begin(), d.end());
  std::vector<int64_t> out;
  for (size_t i = 0; i < d.size() && static_cast<int64_t>(i) < k; ++i) {
    out.push_back(rows[d[i].second]->id);
  }
  return out;
}

// Three sources of 600 random rows: an SSTable and a frozen MemTable with an l2 HNSW, the
// active MemTable without (its index "not built yet").
struct ThreeSources {
  std::mt19937 rng{42};
  arrow::SchemaPtr schema = TierSchema(kDim);
  index::IndexSpec spec = HnswSpec("vector", index::DistanceType::kL2);
  std::vector<HandSource> sources;
  ThreeSources() {
    sources.push_back({"sstable gen 1", false, RandomRows(0, 600, &rng), {}, {spec}, 250, 0});
    sources.push_back(
        {"memtable gen 2 (frozen)", true, RandomRows(600, 600, &rng), {}, {spec}, 100, 600});
    sources.push_back(
        {"memtable gen 3 (active)", true, RandomRows(1200, 600, &rng), {}, {}, 128, 1200});
  }
  std::vector<const TierRow*> LiveRows() const {
    std::vector<const TierRow*> out;
    for (const auto& s : sources) {
      for (size_t i = 0; i < s.rows.size(); ++i) {
        if (s.live.empty() || s.live[i]) out.push_back(&s.rows[i]);
      }
    }
    return out;
  }
  table::TableSnapshot Snapshot() const { return HandSnapshot(schema, sources, {spec}); }
};

TEST(TierVectorSearchTest, HnswPerSourceMatchesExactAndPlanNamesEachSource) {
  ThreeSources f;
  const auto snap = f.Snapshot();
  std::mt19937 qrng(7);
  int64_t hits = 0, total = 0;
  for (int q = 0; q < 30; ++q) {
    VectorSearchOptions o;
    o.query = RandomVector(&qrng);
    o.k = 10;
    auto hnsw = VectorSearch(snap, o);
    ASSERT_TRUE(hnsw.ok()) << hnsw.status().ToString();
    o.bypass_vector_index = true;
    auto exact = VectorSearch(snap, o);
    ASSERT_TRUE(exact.ok()) << exact.status().ToString();
    const auto exact_ids = Ids(*exact->batches[0]);
    // The exact path is exactly the brute force over all live rows.
    EXPECT_EQ(exact_ids, BruteForce(f.LiveRows(), o.query, 10));
    const auto hnsw_ids = Ids(*hnsw->batches[0]);
    ASSERT_EQ(hnsw_ids.size(), 10u);
    const std::set<int64_t> truth(exact_ids.begin(), exact_ids.end());
    for (int64_t id : hnsw_ids) hits += truth.count(id);
    total += 10;
    // Distances ascending.
    const auto d = NumericColumn(*hnsw->batches[0], kDistanceColumn);
    EXPECT_TRUE(std::is_sorted(d.begin(), d.end()));
    if (q == 0) {
      ASSERT_EQ(hnsw->plan.size(), 3u);
      EXPECT_TRUE(PlanSays(hnsw->plan, "sstable gen 1", "HNSW 'vector_idx' ef=64"))
          << hnsw->plan[0];
      EXPECT_TRUE(PlanSays(hnsw->plan, "memtable gen 2 (frozen)", ": HNSW 'vector_idx'"))
          << hnsw->plan[1];
      EXPECT_TRUE(PlanSays(hnsw->plan, "memtable gen 3 (active)", "exact scan of 600 rows"))
          << hnsw->plan[2];
      EXPECT_TRUE(PlanSays(hnsw->plan, "memtable gen 3 (active)", "not built"));
      ASSERT_EQ(exact->plan.size(), 3u);
      for (const auto& line : exact->plan) {
        EXPECT_NE(line.find("exact scan"), std::string::npos) << line;
        EXPECT_NE(line.find("bypass_vector_index"), std::string::npos) << line;
      }
    }
  }
  // 8-d random data, 600 vectors per graph, ef 64: recall is near 1.
  EXPECT_GE(static_cast<double>(hits) / static_cast<double>(total), 0.95);
}

TEST(TierVectorSearchTest, EfOptionAndDistanceMismatch) {
  ThreeSources f;
  const auto snap = f.Snapshot();
  VectorSearchOptions o;
  o.query = std::vector<float>(kDim, 0.5f);
  o.k = 5;
  o.ef = 200;
  auto r = VectorSearch(snap, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(PlanSays(r->plan, "sstable gen 1", "ef=200")) << r->plan[0];
  // An l2 index does not answer a cosine query: exact everywhere, and the answer is the
  // cosine brute force.
  o.distance = index::DistanceType::kCosine;
  o.ef.reset();
  auto c = VectorSearch(snap, o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(PlanSays(c->plan, "sstable gen 1", "uses l2, the query cosine")) << c->plan[0];
  std::vector<std::pair<float, int64_t>> d;
  const float qn = std::sqrt(index::SquaredNorm(o.query.data(), kDim));
  for (const TierRow* row : f.LiveRows()) {
    d.push_back({index::CosineDistance(o.query.data(), qn, row->vector->data(), kDim), row->id});
  }
  std::sort(d.begin(), d.end());
  std::vector<int64_t> want;
  for (int i = 0; i < 5; ++i) want.push_back(d[static_cast<size_t>(i)].second);
  EXPECT_EQ(Ids(*c->batches[0]), want);
  // ef < 1 and a zero cosine query are rejected.
  o.ef = 0;
  EXPECT_FALSE(VectorSearch(snap, o).ok());
  o.ef.reset();
  o.query = std::vector<float>(kDim, 0.0f);
  auto z = VectorSearch(snap, o);
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.status().message().find("all zeros"), std::string::npos);
}

TEST(TierVectorSearchTest, TableWithoutVectorIndexRunsExactEverywhere) {
  ThreeSources f;
  for (auto& s : f.sources) s.indexed.clear();
  const auto snap = HandSnapshot(f.schema, f.sources, {});
  VectorSearchOptions o;
  o.query = std::vector<float>(kDim, 0.1f);
  o.k = 7;
  auto r = VectorSearch(snap, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->plan.size(), 3u);
  for (const auto& line : r->plan) {
    EXPECT_NE(line.find("exact scan of 600 rows (no HNSW on 'vector')"), std::string::npos) << line;
  }
  EXPECT_EQ(Ids(*r->batches[0]), BruteForce(f.LiveRows(), o.query, 7));
}

// A stale copy (superseded by a newer source) and tombstoned rows are never returned, whether
// the source answers with HNSW or an exact scan.
TEST(TierVectorSearchTest, StaleCopiesAndTombstonesAreNeverReturned) {
  auto schema = TierSchema(kDim);
  auto spec = HnswSpec("vector", index::DistanceType::kL2);
  std::mt19937 rng(3);
  const std::vector<float> q(kDim, 0.0f);
  const std::vector<float> near(kDim, 0.01f);
  const std::vector<float> far(kDim, 5.0f);
  HandSource old_sst{"sstable gen 1", false, RandomRows(0, 300, &rng), {}, {spec}, 64, 0};
  HandSource mem{"memtable gen 2 (active)", true, RandomRows(300, 300, &rng), {}, {}, 64, 300};
  // Key 7's old copy is the nearest row of all; the newer source holds it far away.
  old_sst.rows[7].vector = near;
  old_sst.live.assign(300, true);
  old_sst.live[7] = false;
  mem.rows.push_back({7, "even", far});
  // Key 300's copy in the MemTable is deleted (a tombstone row follows it), and is near too.
  mem.rows[0].vector = std::vector<float>(kDim, 0.02f);
  mem.rows.push_back({300, std::nullopt, std::nullopt});  // the tombstone row itself
  mem.live.assign(mem.rows.size(), true);
  mem.live[0] = false;
  mem.live[mem.rows.size() - 1] = false;
  for (bool with_index : {true, false}) {
    SCOPED_TRACE(with_index ? "HNSW in both sources" : "exact in both sources");
    HandSource a = old_sst, b = mem;
    if (with_index) {
      b.indexed = {spec};
    } else {
      a.indexed.clear();
    }
    const auto snap = HandSnapshot(schema, {a, b}, {spec});
    VectorSearchOptions o;
    o.query = q;
    o.k = std::numeric_limits<int64_t>::max();
    auto r = VectorSearch(snap, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const auto ids = Ids(*r->batches[0]);
    EXPECT_EQ(static_cast<int64_t>(ids.size()), snap.num_rows);  // every live row, once
    EXPECT_EQ(std::count(ids.begin(), ids.end(), 7), 1);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), 300), 0);
    EXPECT_EQ(ids.back(), 7);  // the live copy is the far one
    const auto d = NumericColumn(*r->batches[0], kDistanceColumn);
    EXPECT_FLOAT_EQ(static_cast<float>(d.back()), 25.0f * kDim);
    // Top-5 also never shows the stale copy (it would be first).
    o.k = 5;
    auto top = VectorSearch(snap, o);
    ASSERT_TRUE(top.ok());
    const auto top_ids = Ids(*top->batches[0]);
    EXPECT_EQ(top_ids.size(), 5u);
    EXPECT_EQ(std::count(top_ids.begin(), top_ids.end(), 7), 0);
    EXPECT_EQ(std::count(top_ids.begin(), top_ids.end(), 300), 0);
    EXPECT_EQ(PlanSays(top->plan, "sstable gen 1", ": HNSW"), with_index);
    EXPECT_EQ(PlanSays(top->plan, "memtable gen 2 (active)", ": HNSW"), with_index);
  }
}

TEST(TierVectorSearchTest, FilterWithVectorSelectiveAndNot) {
  ThreeSources f;
  // Mark 10 rows of each source "rare".
  for (auto& s : f.sources) {
    for (size_t i = 0; i < s.rows.size(); i += 60) s.rows[i].text = "rare";
  }
  const auto snap = f.Snapshot();
  const std::vector<float> q(kDim, 0.2f);
  for (const char* value : {"rare", "even"}) {
    SCOPED_TRACE(value);
    VectorSearchOptions o;
    o.query = q;
    o.k = 8;
    o.filter = std::string("text = '") + value + "'";
    auto r = VectorSearch(snap, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<const TierRow*> matching;
    for (const TierRow* row : f.LiveRows()) {
      if (row->text == value) matching.push_back(row);
    }
    const auto ids = Ids(*r->batches[0]);
    ASSERT_EQ(ids.size(), 8u);
    for (int64_t id : ids) {
      const TierRow* row = nullptr;
      for (const TierRow* m : matching) row = m->id == id ? m : row;
      EXPECT_NE(row, nullptr) << "id " << id << " does not match the filter";
    }
    if (std::string(value) == "rare") {
      // Exact over the matching rows everywhere: exactly the filtered brute force.
      EXPECT_EQ(ids, BruteForce(matching, q, 8));
      EXPECT_TRUE(PlanSays(r->plan, "sstable gen 1", ": exact (selectivity")) << r->plan[0];
      EXPECT_TRUE(PlanSays(r->plan, "sstable gen 1", "scored 10 rows")) << r->plan[0];
    } else {
      // Half of a 600-row source: scoring 300 rows is cheaper than a graph walk (planner of
      // filtered_source_search.h), and the plan says what it estimated.
      EXPECT_TRUE(PlanSays(r->plan, "sstable gen 1", ": exact (selectivity 0.")) << r->plan[0];
      EXPECT_TRUE(PlanSays(r->plan, "sstable gen 1", "filtered HNSW")) << r->plan[0];
      const auto truth = BruteForce(matching, q, 8);
      int64_t hit = 0;
      for (int64_t id : ids) hit += std::count(truth.begin(), truth.end(), id);
      EXPECT_GE(hit, 7);
    }
  }
}

TEST(TierVectorSearchTest, KLargerThanLiveRowsReturnsEveryLiveRowWithAVector) {
  auto schema = TierSchema(2);
  auto spec = HnswSpec("vector", index::DistanceType::kL2);
  HandSource a{"sstable gen 1",
               false,
               {{1, "a", std::vector<float>{0, 0}},
                {2, "b", std::vector<float>{3, 0}},
                {3, "c", std::nullopt},
                {4, "d", std::vector<float>{1, 0}}},
               {true, false, true, true},
               {spec}};
  HandSource b{"memtable gen 2 (active)",
               true,
               {{2, "b2", std::vector<float>{2, 0}}, {5, "e", std::vector<float>{1, 0}}},
               {},
               {spec},
               1 << 30,
               4};
  const auto snap = HandSnapshot(schema, {a, b}, {spec});
  VectorSearchOptions o;
  o.query = {0, 0};
  o.k = 100;
  o.with_row_id = true;
  auto r = VectorSearch(snap, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Ties (ids 4 and 5 at distance 1): the older source first.
  EXPECT_EQ(Ids(*r->batches[0]), (std::vector<int64_t>{1, 4, 5, 2}));
  EXPECT_EQ(NumericColumn(*r->batches[0], kDistanceColumn), (std::vector<double>{0, 1, 1, 4}));
  // _rowid = generation << 32 | position (not the hidden key column).
  EXPECT_EQ(NumericColumn(*r->batches[0], kRowIdColumn),
            (std::vector<double>{
                static_cast<double>(EncodeRowId(1, 0)), static_cast<double>(EncodeRowId(1, 3)),
                static_cast<double>(EncodeRowId(2, 1)), static_cast<double>(EncodeRowId(2, 0))}));
  // The text column comes from the right source (the newer copy of key 2).
  arrow::Array text = r->batches[0]->column(1);
  EXPECT_EQ(text.GetView(3), "b2");
  EXPECT_TRUE(r->batches[0]->Validate().ok());
  // Offset past the ties.
  o.offset = 2;
  o.k = 1;
  auto off = VectorSearch(snap, o);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(Ids(*off->batches[0]), (std::vector<int64_t>{5}));
}

TEST(TierVectorSearchTest, PrimaryKeyRowIdIsGenerationAndPosition) {
  auto schema = TierSchema(2);
  HandSource a{"sstable gen 1",
               false,
               {{1, "a", std::vector<float>{9, 0}},
                {2, "b", std::vector<float>{3, 0}},
                {3, "c", std::vector<float>{0, 0}},
                {4, "d", std::vector<float>{1, 0}}},
               {true, false, true, true},
               {},
               2};
  HandSource b{"memtable gen 2 (active)",
               true,
               {{2, "b2", std::vector<float>{2, 0}}, {5, "e", std::vector<float>{5, 0}}},
               {},
               {}};
  const auto snap = HandSnapshot(schema, {a, b}, {}, {"id"});
  VectorSearchOptions o;
  o.query = {0, 0};
  o.k = 10;
  o.with_row_id = true;
  auto r = VectorSearch(snap, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Ids(*r->batches[0]), (std::vector<int64_t>{3, 4, 2, 5, 1}));
  // (generation, position): 3 at (1, 2), 4 at (1, 3), 2 at (2, 0), 5 at (2, 1), 1 at (1, 0).
  EXPECT_EQ(NumericColumn(*r->batches[0], kRowIdColumn),
            (std::vector<double>{
                static_cast<double>(EncodeRowId(1, 2)), static_cast<double>(EncodeRowId(1, 3)),
                static_cast<double>(EncodeRowId(2, 0)), static_cast<double>(EncodeRowId(2, 1)),
                static_cast<double>(EncodeRowId(1, 0))}));
}

// --- Through the real stack: table::LocalTable over a local object store. ---

struct RealTable {
  strata::testing::TempDir dir;
  std::shared_ptr<table::LocalTable> table;
  explicit RealTable(std::vector<std::string> primary_key = {}, int64_t memtable_rows = 300) {
    auto store = io::LocalObjectStore::Open(dir.path());
    EXPECT_TRUE(store.ok());
    shard::ShardWriterOptions o;
    o.max_memtable_rows = memtable_rows;
    o.primary_key = std::move(primary_key);
    auto t = table::LocalTable::Create(*store, "default/t", "t", TierSchema(kDim), {}, o);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    table = *t;
  }
  void Insert(const std::vector<TierRow>& rows) {
    auto v = table->Insert({TierBatch(table->schema(), rows)});
    ASSERT_TRUE(v.ok()) << v.status().ToString();
  }
};

TEST(TierVectorSearchRealTest, HnswInEverySourceMatchesExact) {
  RealTable t;
  ASSERT_TRUE(t.table->CreateIndex(HnswSpec("vector", index::DistanceType::kL2)).ok());
  std::mt19937 rng(11);
  std::vector<TierRow> all;
  for (int b = 0; b < 5; ++b) {  // 1,000 rows: seals at 300 rows, then flushed
    auto rows = RandomRows(b * 200, 200, &rng);
    t.Insert(rows);
    all.insert(all.end(), rows.begin(), rows.end());
  }
  FlushTable(*t.table);
  auto fresh = RandomRows(1000, 150, &rng);  // stays in the active MemTable
  t.Insert(fresh);
  all.insert(all.end(), fresh.begin(), fresh.end());
  ASSERT_TRUE(WaitForIndexes(*t.table));
  const auto snap = t.table->Snapshot();
  ASSERT_EQ(snap.num_rows, 1150);
  const auto names = SourceNames(snap);
  ASSERT_GE(names.size(), 2u);
  EXPECT_NE(names.front().find("sstable"), std::string::npos) << names.front();
  EXPECT_NE(names.back().find("memtable"), std::string::npos) << names.back();
  std::vector<const TierRow*> live;
  for (const auto& r : all) live.push_back(&r);
  std::mt19937 qrng(5);
  int64_t hits = 0, total = 0;
  for (int q = 0; q < 20; ++q) {
    VectorSearchOptions o;
    o.query = RandomVector(&qrng);
    o.k = 10;
    auto hnsw = VectorSearch(snap, o);
    ASSERT_TRUE(hnsw.ok()) << hnsw.status().ToString();
    ASSERT_EQ(hnsw->plan.size(), names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      EXPECT_TRUE(PlanSays(hnsw->plan, names[i], ": HNSW 'vector_idx'")) << hnsw->plan[i];
    }
    o.bypass_vector_index = true;
    auto exact = VectorSearch(snap, o);
    ASSERT_TRUE(exact.ok()) << exact.status().ToString();
    const auto truth = Ids(*exact->batches[0]);
    EXPECT_EQ(truth, BruteForce(live, o.query, 10));
    for (int64_t id : Ids(*hnsw->batches[0])) hits += std::count(truth.begin(), truth.end(), id);
    total += 10;
  }
  EXPECT_GE(static_cast<double>(hits) / static_cast<double>(total), 0.95);
}

TEST(TierVectorSearchRealTest, NoVectorIndexMeansExactEverywhere) {
  RealTable t;
  std::mt19937 rng(12);
  std::vector<TierRow> all = RandomRows(0, 400, &rng);
  t.Insert(all);
  FlushTable(*t.table);
  auto more = RandomRows(400, 50, &rng);
  t.Insert(more);
  all.insert(all.end(), more.begin(), more.end());
  const auto snap = t.table->Snapshot();
  VectorSearchOptions o;
  o.query = RandomVector(&rng);
  o.k = 10;
  auto r = VectorSearch(snap, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->plan.size(), SourceNames(snap).size());
  for (const auto& line : r->plan) {
    EXPECT_NE(line.find("exact scan"), std::string::npos) << line;
    EXPECT_NE(line.find("no HNSW on 'vector'"), std::string::npos) << line;
  }
  std::vector<const TierRow*> live;
  for (const auto& row : all) live.push_back(&row);
  EXPECT_EQ(Ids(*r->batches[0]), BruteForce(live, o.query, 10));
}

// Primary-key table: key 7's stale copy (flushed, nearest to the query) is superseded by a far
// copy in the MemTable; key 8 (near too) is deleted. Neither stale row is ever returned, k
// larger than the table returns every live row once, and `_rowid` addresses the returned
// version (generation << 32 | position).
TEST(TierVectorSearchRealTest, UpdatedAndDeletedKeysNeverReturnStaleCopies) {
  RealTable t({"id"});
  ASSERT_TRUE(t.table->CreateIndex(HnswSpec("vector", index::DistanceType::kL2)).ok());
  std::mt19937 rng(13);
  auto rows = RandomRows(0, 500, &rng);
  rows[7].vector = std::vector<float>(kDim, 0.01f);
  rows[8].vector = std::vector<float>(kDim, 0.02f);
  t.Insert(rows);
  FlushTable(*t.table);
  t.Insert({{7, "odd", std::vector<float>(kDim, 5.0f)}});
  auto keys = std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(
          std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64(), false)}),
      1, std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array({8})});
  ASSERT_TRUE(t.table->Delete({keys}).ok());
  ASSERT_TRUE(WaitForIndexes(*t.table));
  const auto snap = t.table->Snapshot();
  ASSERT_EQ(snap.num_rows, 499);
  for (bool bypass : {false, true}) {
    SCOPED_TRACE(bypass ? "exact" : "HNSW");
    VectorSearchOptions o;
    o.query = std::vector<float>(kDim, 0.0f);
    o.k = 5;
    o.bypass_vector_index = bypass;
    auto top = VectorSearch(snap, o);
    ASSERT_TRUE(top.ok()) << top.status().ToString();
    const auto top_ids = Ids(*top->batches[0]);
    EXPECT_EQ(top_ids.size(), 5u);
    EXPECT_EQ(std::count(top_ids.begin(), top_ids.end(), 7), 0);
    EXPECT_EQ(std::count(top_ids.begin(), top_ids.end(), 8), 0);
    o.k = 100000;
    o.with_row_id = true;
    auto all = VectorSearch(snap, o);
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    const auto ids = Ids(*all->batches[0]);
    ASSERT_EQ(static_cast<int64_t>(ids.size()), 499);
    EXPECT_EQ(std::set<int64_t>(ids.begin(), ids.end()).size(), 499u);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), 8), 0);
    EXPECT_EQ(ids.back(), 7);
    EXPECT_FLOAT_EQ(static_cast<float>(NumericColumn(*all->batches[0], kDistanceColumn).back()),
                    25.0f * kDim);
    // _rowid addresses the returned version; key 7's is in the newest generation.
    arrow::Array rowids = all->batches[0]->column(all->batches[0]->num_columns() - 1);
    std::set<uint64_t> distinct;
    for (size_t i = 0; i < ids.size(); ++i) {
      const uint64_t rid = rowids.Value<uint64_t>(static_cast<int64_t>(i));
      distinct.insert(rid);
      ASSERT_EQ(testing::IdAtRowId(snap, rid), std::optional<int64_t>(ids[i])) << "id " << ids[i];
    }
    EXPECT_EQ(distinct.size(), ids.size());
    EXPECT_EQ(rowids.Value<uint64_t>(static_cast<int64_t>(ids.size()) - 1) >> 32,
              snap.shard->sources.back().generation);
  }
}

TEST(TierVectorSearchRealTest, FilterWithVector) {
  RealTable t;
  ASSERT_TRUE(t.table->CreateIndex(HnswSpec("vector", index::DistanceType::kL2)).ok());
  std::mt19937 rng(14);
  std::vector<TierRow> all = RandomRows(0, 600, &rng);
  t.Insert(all);
  FlushTable(*t.table);
  auto more = RandomRows(600, 100, &rng);
  t.Insert(more);
  all.insert(all.end(), more.begin(), more.end());
  ASSERT_TRUE(WaitForIndexes(*t.table));
  VectorSearchOptions o;
  o.query = RandomVector(&rng);
  o.k = 10;
  o.with_row_id = true;
  o.filter = "text = 'odd'";
  auto r = VectorSearch(t.table->Snapshot(), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<const TierRow*> odd;
  for (const auto& row : all) {
    if (row.id % 2 == 1) odd.push_back(&row);
  }
  const auto truth = BruteForce(odd, o.query, 10);
  const auto ids = Ids(*r->batches[0]);
  ASSERT_EQ(ids.size(), 10u);
  int64_t hit = 0;
  for (int64_t id : ids) {
    EXPECT_EQ(id % 2, 1) << id;
    hit += std::count(truth.begin(), truth.end(), id);
  }
  EXPECT_GE(hit, 9);
  // _rowid addresses each returned row (generation << 32 | position), not the hidden key.
  const auto snap = t.table->Snapshot();
  arrow::Array rowids = r->batches[0]->column(r->batches[0]->num_columns() - 1);
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint64_t rid = rowids.Value<uint64_t>(static_cast<int64_t>(i));
    EXPECT_EQ(testing::IdAtRowId(snap, rid), std::optional<int64_t>(ids[i])) << ids[i];
  }
}

}  // namespace
}  // namespace strata::query
