// Issue 5 scenarios across tiers (DESIGN.md §6), each through the C++ API over a real shard
// (table::LocalTable or shard::ShardWriter on a local object store): every query kind answers
// as one logical table holding only the newest version of each key, whatever tier holds it.
// Expected answers are computed in the test from a model of the live rows (brute force).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../io/storage_test_util.h"
#include "arrow/builder.h"
#include "index/vector/distance.h"
#include "io/local_object_store.h"
#include "query/fts_search.h"
#include "query/query_result.h"
#include "query/scan.h"
#include "query/vector_search.h"
#include "shard/shard_writer.h"
#include "table/local_table.h"
#include "tier_test_util.h"

namespace strata::query {
namespace {

using testing::FtsSpec;
using testing::HnswSpec;
using testing::SourceNames;
using testing::WaitForIndexes;
using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------
// Rows of the scenario table: id int64 (primary key), src utf8 (which write produced the
// version), cat utf8, text utf8 (FTS), vector fixed_size_list<float32>[dim].

struct Row {
  int64_t id = 0;
  std::string src;
  std::string cat;
  std::string text;
  std::vector<float> vec;
};

arrow::SchemaPtr ScenarioSchema(int32_t dim) {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), /*nullable=*/false), arrow::field("src", arrow::utf8()),
      arrow::field("cat", arrow::utf8()), arrow::field("text", arrow::utf8()),
      arrow::field("vector", arrow::fixed_size_list(arrow::field("item", arrow::float32()), dim))});
}

arrow::RecordBatchPtr RowBatch(const arrow::SchemaPtr& schema, const std::vector<Row>& rows) {
  const int32_t dim = schema->field(4)->type->list_size();
  arrow::RecordBatchBuilder b(schema);
  for (const Row& r : rows) {
    EXPECT_TRUE(b.column(0)->AppendInt(r.id).ok());
    EXPECT_TRUE(b.column(1)->AppendBytes(r.src).ok());
    EXPECT_TRUE(b.column(2)->AppendBytes(r.cat).ok());
    EXPECT_TRUE(b.column(3)->AppendBytes(r.text).ok());
    EXPECT_EQ(static_cast<int32_t>(r.vec.size()), dim);
    EXPECT_TRUE(b.column(4)->child(0)->AppendFloats(r.vec.data(), dim).ok());
    EXPECT_TRUE(b.column(4)->AppendValid().ok());
  }
  auto batch = b.Finish();
  EXPECT_TRUE(batch.ok()) << batch.status().ToString();
  return *batch;
}

arrow::RecordBatchPtr KeyBatch(const std::vector<int64_t>& ids) {
  std::vector<std::optional<int64_t>> v(ids.begin(), ids.end());
  return std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(
          std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64(), false)}),
      static_cast<int64_t>(ids.size()), std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(v)});
}

index::IndexSpec BTreeSpec(const std::string& column) {
  index::IndexSpec s;
  s.kind = index::IndexKind::kBTree;
  s.column = column;
  s.name = column + "_idx";
  s.requested_type = "BTREE";
  return s;
}

std::vector<float> RandomVec(std::mt19937* rng, int32_t dim) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(dim));
  for (float& x : v) x = u(*rng);
  return v;
}

// --- Readers of query results (every batch, in order). ---

std::vector<int64_t> ResultIds(const QueryResult& r) {
  std::vector<int64_t> out;
  for (const auto& b : r.batches) {
    const int i = b->schema()->GetFieldIndex("id");
    EXPECT_GE(i, 0);
    if (i < 0) return out;
    arrow::Array a = b->column(i);
    for (int64_t k = 0; k < a.length(); ++k) out.push_back(a.Value<int64_t>(k));
  }
  return out;
}

std::vector<std::string> ResultStrings(const QueryResult& r, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& b : r.batches) {
    const int i = b->schema()->GetFieldIndex(name);
    EXPECT_GE(i, 0) << name;
    if (i < 0) return out;
    arrow::Array a = b->column(i);
    for (int64_t k = 0; k < a.length(); ++k) {
      out.push_back(a.IsNull(k) ? "<null>" : std::string(a.GetView(k)));
    }
  }
  return out;
}

std::vector<float> ResultFloats(const QueryResult& r, const std::string& name) {
  std::vector<float> out;
  for (const auto& b : r.batches) {
    const int i = b->schema()->GetFieldIndex(name);
    EXPECT_GE(i, 0) << name;
    if (i < 0) return out;
    arrow::Array a = b->column(i);
    for (int64_t k = 0; k < a.length(); ++k) out.push_back(a.Value<float>(k));
  }
  return out;
}

// id -> src of a result (each id must appear once).
std::map<int64_t, std::string> SrcById(const QueryResult& r) {
  const auto ids = ResultIds(r);
  const auto srcs = ResultStrings(r, "src");
  EXPECT_EQ(ids.size(), srcs.size());
  std::map<int64_t, std::string> out;
  for (size_t i = 0; i < ids.size() && i < srcs.size(); ++i) {
    EXPECT_TRUE(out.emplace(ids[i], srcs[i]).second) << "id " << ids[i] << " returned twice";
  }
  return out;
}

// --- Brute force over a model of the live rows. ---

float Dist(index::DistanceType t, const std::vector<float>& q, const std::vector<float>& v) {
  const float qn = std::sqrt(index::SquaredNorm(q.data(), static_cast<int64_t>(q.size())));
  return index::Distance(t, q.data(), qn, v.data(), static_cast<int64_t>(q.size()));
}

// Top-k (distance, id) over `live` rows accepted by `keep`, ties by id.
template <typename Keep>
std::vector<std::pair<float, int64_t>> BruteTopK(const std::map<int64_t, Row>& live,
                                                 const std::vector<float>& q, int64_t k,
                                                 index::DistanceType t, Keep keep) {
  std::vector<std::pair<float, int64_t>> d;
  for (const auto& [id, row] : live) {
    if (keep(row)) d.push_back({Dist(t, q, row.vec), id});
  }
  std::sort(d.begin(), d.end());
  if (static_cast<int64_t>(d.size()) > k) d.resize(static_cast<size_t>(k));
  return d;
}

std::vector<int64_t> IdsOf(const std::vector<std::pair<float, int64_t>>& d) {
  std::vector<int64_t> out;
  for (const auto& p : d) out.push_back(p.second);
  return out;
}

// --- Tables. ---

struct RealTable {
  strata::testing::TempDir dir;
  arrow::SchemaPtr schema;
  std::shared_ptr<table::LocalTable> table;
  explicit RealTable(int32_t dim, shard::ShardWriterOptions o = {}) : schema(ScenarioSchema(dim)) {
    auto store = io::LocalObjectStore::Open(dir.path());
    EXPECT_TRUE(store.ok());
    o.primary_key = {"id"};
    auto t = table::LocalTable::Create(*store, "default/t", "t", schema, {}, o);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    table = *t;
  }
  void Insert(const std::vector<Row>& rows) {
    auto v = table->Insert({RowBatch(schema, rows)});
    ASSERT_TRUE(v.ok()) << v.status().ToString();
  }
  void Index(const index::IndexSpec& spec) {
    auto r = table->CreateIndex(spec);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  void Flush() { testing::FlushTable(*table); }
};

// A table snapshot over a ShardWriter (what LocalTable::Snapshot builds).
table::TableSnapshot WriterSnapshot(const shard::ShardWriter& w) {
  table::TableSnapshot out;
  out.schema = w.schema();
  out.key_columns = w.key_columns();
  auto snap = w.Snapshot();
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  if (!snap.ok()) return out;
  const shard::ShardSnapshot& s = **snap;
  out.version = s.last_wal_position;
  out.num_rows = s.num_rows;
  out.shard = *snap;
  return out;
}

Result<QueryResult> Lookup(const table::TableSnapshot& snap, int64_t id) {
  ScanOptions o;
  o.filter = "id = " + std::to_string(id);
  return Scan(snap, o);
}

// ---------------------------------------------------------------------------------------
// Fixture: oldest SSTable keys 1-5 ("oldest", word amber), next SSTable {3,4} ("gen1",
// birch), a frozen MemTable {4,5,6} ("gen2", cedar), the active MemTable {5,6,7} ("active",
// delta). Newest source per key: 1,2 oldest; 3 gen1; 4 gen2; 5,6,7 active.

constexpr int32_t kFixDim = 4;

Row FixRow(int64_t id, int source) {
  static const char* kSrc[] = {"oldest", "gen1", "gen2", "active"};
  static const char* kWord[] = {"amber", "birch", "cedar", "delta"};
  Row r;
  r.id = id;
  r.src = kSrc[source];
  r.cat = "c";
  r.text = std::string("common ") + kWord[source];
  r.vec = {static_cast<float>(id * 10), static_cast<float>(source), 1.0f, 0.0f};
  return r;
}

const std::map<int64_t, std::string> kNewest = {{1, "oldest"}, {2, "oldest"}, {3, "gen1"},
                                                {4, "gen2"},   {5, "active"}, {6, "active"},
                                                {7, "active"}};

TEST(TierScenarioTest, EveryQueryKindReturnsEachKeyOnceFromItsNewestSource) {
  strata::testing::TempDir dir;
  auto store_or = io::LocalObjectStore::Open(dir.path());
  ASSERT_TRUE(store_or.ok());
  std::shared_ptr<io::ObjectStore> store = *store_or;
  const auto schema = ScenarioSchema(kFixDim);
  shard::ShardWriterOptions o;
  o.primary_key = {"id"};
  auto hnsw = HnswSpec("vector", index::DistanceType::kL2);
  hnsw.uuid = "u-hnsw";
  auto fts = FtsSpec("text");
  fts.uuid = "u-fts";
  auto bt = BTreeSpec("src");
  bt.uuid = "u-btree";
  o.indexes = {hnsw, fts, bt};
  auto put = [&](shard::ShardWriter& w, const std::vector<int64_t>& ids, int source) {
    std::vector<Row> rows;
    for (int64_t id : ids) rows.push_back(FixRow(id, source));
    auto r = w.Put({RowBatch(schema, rows)});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  };
  {
    // Two flushed generations (SSTables), with the flusher running.
    auto w = shard::ShardWriter::Open(store, "default/t", "s1", schema, o);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    for (int source = 0; source < 2; ++source) {
      put(**w, source == 0 ? std::vector<int64_t>{1, 2, 3, 4, 5} : std::vector<int64_t>{3, 4},
          source);
      auto sealed = (*w)->force_seal_active();
      ASSERT_TRUE(sealed.ok() && sealed->has_value());
      ASSERT_TRUE((*w)->wait_for_generation((*sealed)->generation, shard::Clock::now() + 30s).ok());
    }
    (*w)->close();
  }
  // Reopen without a flusher: a sealed MemTable stays frozen.
  o.start_flusher = false;
  auto w_or = shard::ShardWriter::Open(store, "default/t", "s1", schema, o);
  ASSERT_TRUE(w_or.ok()) << w_or.status().ToString();
  auto& w = **w_or;
  put(w, {4, 5, 6}, 2);
  auto sealed = w.force_seal_active();
  ASSERT_TRUE(sealed.ok() && sealed->has_value());
  put(w, {5, 6, 7}, 3);
  // Indexes of the MemTables are complete (rows are indexed before they become visible).
  for (int i = 0; i < 500; ++i) {
    bool done = true;
    for (const auto& p : w.IndexProgressAll()) done &= p.num_unindexed_rows == 0;
    if (done) break;
    std::this_thread::sleep_for(10ms);
  }
  const auto snap = WriterSnapshot(w);
  const auto names = SourceNames(snap);
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[0].rfind("sstable gen", 0), 0u) << names[0];
  EXPECT_EQ(names[1].rfind("sstable gen", 0), 0u) << names[1];
  EXPECT_NE(names[2].find("(frozen)"), std::string::npos) << names[2];
  EXPECT_NE(names[3].find("(active)"), std::string::npos) << names[3];
  EXPECT_EQ(snap.num_rows, 7);

  // Scan: each key once, in scan order (sources oldest first), from the newest source.
  {
    auto r = Scan(snap, ScanOptions{});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(ResultIds(*r), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(SrcById(*r), kNewest);
    auto c = CountRows(snap, std::nullopt);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(*c, 7);
    // Stale "oldest" copies of 3, 4, 5 never count (scan and BTree-covered filter).
    auto old = CountRows(snap, std::string("src = 'oldest'"));
    ASSERT_TRUE(old.ok()) << old.status().ToString();
    EXPECT_EQ(*old, 2);
    ScanOptions so;
    so.filter = "src = 'gen2' OR src = 'gen1'";
    auto g = Scan(snap, so);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ(ResultIds(*g), (std::vector<int64_t>{3, 4}));
  }
  // Point lookup: `id = k`.
  for (int64_t id = 0; id <= 8; ++id) {
    SCOPED_TRACE("lookup id " + std::to_string(id));
    auto r = Lookup(snap, id);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (id < 1 || id > 7) {
      EXPECT_EQ(r->num_rows, 0);
      continue;
    }
    ASSERT_EQ(r->num_rows, 1);
    EXPECT_EQ(ResultIds(*r), std::vector<int64_t>{id});
    EXPECT_EQ(ResultStrings(*r, "src"), std::vector<std::string>{kNewest.at(id)});
  }
  // Vector search, HNSW and exact.
  for (bool bypass : {false, true}) {
    SCOPED_TRACE(bypass ? "exact" : "HNSW");
    VectorSearchOptions vo;
    vo.query = {40, 0, 1, 0};
    vo.k = 100;
    vo.bypass_vector_index = bypass;
    auto r = VectorSearch(snap, vo);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->num_rows, 7);
    EXPECT_EQ(SrcById(*r), kNewest);
    EXPECT_EQ(r->plan.size(), 4u);
    // The stale copy of key 4 ({40,0,1,0}) is the query itself; the live one is {40,2,1,0}.
    vo.k = 1;
    auto one = VectorSearch(snap, vo);
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    EXPECT_EQ(ResultIds(*one), std::vector<int64_t>{4});
    EXPECT_EQ(ResultStrings(*one, "src"), std::vector<std::string>{"gen2"});
    EXPECT_EQ(ResultFloats(*one, kDistanceColumn), std::vector<float>{4.0f});
    // Each key's newest vector finds that key and version at distance 0.
    for (const auto& [id, src] : kNewest) {
      const int source = src == "oldest" ? 0 : src == "gen1" ? 1 : src == "gen2" ? 2 : 3;
      vo.query = FixRow(id, source).vec;
      auto hit = VectorSearch(snap, vo);
      ASSERT_TRUE(hit.ok()) << hit.status().ToString();
      EXPECT_EQ(ResultIds(*hit), std::vector<int64_t>{id});
      EXPECT_EQ(ResultStrings(*hit, "src"), std::vector<std::string>{src});
      EXPECT_EQ(ResultFloats(*hit, kDistanceColumn), std::vector<float>{0.0f});
    }
    // Filter on the version's own value: only live rows that are the "oldest" version.
    vo.query = {0, 0, 1, 0};
    vo.k = 100;
    vo.filter = "src = 'oldest'";
    auto f = VectorSearch(snap, vo);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_EQ(ResultIds(*f), (std::vector<int64_t>{1, 2}));
  }
  // Full-text search: "common" is in every version.
  {
    FtsSearchOptions fo;
    fo.query.text = "common";
    fo.k = 100;
    auto r = FtsSearch(snap, fo);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->num_rows, 7);
    EXPECT_EQ(SrcById(*r), kNewest);
    // Words only in stale versions find only the keys whose live version has them.
    const std::vector<std::pair<std::string, std::set<int64_t>>> words = {
        {"amber", {1, 2}}, {"birch", {3}}, {"cedar", {4}}, {"delta", {5, 6, 7}}};
    for (const auto& [word, want] : words) {
      fo.query.text = word;
      auto w2 = FtsSearch(snap, fo);
      ASSERT_TRUE(w2.ok()) << w2.status().ToString();
      const auto ids = ResultIds(*w2);
      EXPECT_EQ(std::set<int64_t>(ids.begin(), ids.end()), want) << word;
      EXPECT_EQ(ids.size(), want.size()) << word;
    }
    fo.query.text = "common";
    fo.filter = "id = 5";
    auto f = FtsSearch(snap, fo);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_EQ(ResultIds(*f), std::vector<int64_t>{5});
    EXPECT_EQ(ResultStrings(*f, "src"), std::vector<std::string>{"active"});
  }
  w.close();
}

// ---------------------------------------------------------------------------------------
// Stale copy must not win: the oldest tier has id=1 with vector q; the MemTable moves id=1
// far away and adds id=2 near q; search q, k=1 -> id 2.

TEST(TierScenarioTest, StaleCopyNeverWinsTheTopK) {
  constexpr int32_t dim = 8;
  RealTable t(dim);
  t.Index(HnswSpec("vector", index::DistanceType::kL2));
  std::mt19937 rng(21);
  const std::vector<float> q(dim, 0.0f);
  std::vector<Row> rows;
  rows.push_back({1, "old", "a", "one", q});
  for (int64_t id = 100; id < 400; ++id) {
    auto v = RandomVec(&rng, dim);
    for (float& x : v) x += 3.0f;  // every filler row is far from q
    rows.push_back({id, "old", "a", "filler", v});
  }
  t.Insert(rows);
  t.Flush();
  t.Insert({{1, "new", "a", "one", std::vector<float>(dim, 50.0f)},
            {2, "new", "a", "two", std::vector<float>(dim, 0.1f)}});
  ASSERT_TRUE(WaitForIndexes(*t.table));
  const auto snap = t.table->Snapshot();
  ASSERT_GE(SourceNames(snap).size(), 2u);
  for (bool bypass : {false, true}) {
    SCOPED_TRACE(bypass ? "exact" : "HNSW");
    VectorSearchOptions o;
    o.query = q;
    o.k = 1;
    o.bypass_vector_index = bypass;
    auto r = VectorSearch(snap, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(ResultIds(*r), std::vector<int64_t>{2});
    EXPECT_EQ(ResultStrings(*r, "src"), std::vector<std::string>{"new"});
    EXPECT_FLOAT_EQ(ResultFloats(*r, kDistanceColumn).at(0), 0.01f * dim);
    // Every row: id 1 once, last, with the far vector.
    o.k = 1000;
    auto all = VectorSearch(snap, o);
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    const auto ids = ResultIds(*all);
    ASSERT_EQ(ids.size(), 302u);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), 1), 1);
    EXPECT_EQ(ids.back(), 1);
    EXPECT_FLOAT_EQ(ResultFloats(*all, kDistanceColumn).back(), 2500.0f * dim);
  }
}

// ---------------------------------------------------------------------------------------
// Newer version fails the filter: flush id=1 {cat:'a'}; upsert id=1 {cat:'b'}.

TEST(TierScenarioTest, NewerVersionFailingTheFilterHidesTheOlderOne) {
  constexpr int32_t dim = 4;
  RealTable t(dim);
  t.Index(HnswSpec("vector", index::DistanceType::kL2));
  t.Index(FtsSpec("text"));
  t.Index(BTreeSpec("cat"));
  const std::vector<float> v = {1, 2, 3, 4};
  t.Insert({{1, "old", "a", "hello world", v}, {2, "old", "z", "hello there", {9, 9, 9, 9}}});
  t.Flush();
  t.Insert({{1, "new", "b", "hello world", v}});
  ASSERT_TRUE(WaitForIndexes(*t.table));
  const auto snap = t.table->Snapshot();
  for (const char* f :
       {"cat = 'a'", "cat IN ('a')", "cat = 'a' AND id = 1", "id = 1 AND cat <> 'b'"}) {
    SCOPED_TRACE(f);
    ScanOptions so;
    so.filter = f;
    auto s = Scan(snap, so);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->num_rows, 0);
    auto c = CountRows(snap, std::string(f));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(*c, 0);
    for (bool bypass : {false, true}) {
      for (bool pre : {true, false}) {
        VectorSearchOptions vo;
        vo.query = v;
        vo.k = 10;
        vo.filter = f;
        vo.prefilter = pre;
        vo.bypass_vector_index = bypass;
        auto r = VectorSearch(snap, vo);
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        EXPECT_EQ(r->num_rows, 0) << "bypass " << bypass << " prefilter " << pre;
      }
    }
    for (bool pre : {true, false}) {
      FtsSearchOptions fo;
      fo.query.text = "hello world";
      fo.k = 10;
      fo.filter = f;
      fo.prefilter = pre;
      auto r = FtsSearch(snap, fo);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->num_rows, 0) << "prefilter " << pre;
    }
  }
  // The new version passes `cat = 'b'` everywhere (the test can tell the two apart).
  ScanOptions so;
  so.filter = "cat = 'b'";
  auto s = Scan(snap, so);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(SrcById(*s), (std::map<int64_t, std::string>{{1, "new"}}));
  VectorSearchOptions vo;
  vo.query = v;
  vo.filter = "cat = 'b'";
  auto r = VectorSearch(snap, vo);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(SrcById(*r), (std::map<int64_t, std::string>{{1, "new"}}));
  FtsSearchOptions fo;
  fo.query.text = "hello";
  fo.filter = "cat = 'b'";
  auto fr = FtsSearch(snap, fo);
  ASSERT_TRUE(fr.ok());
  EXPECT_EQ(SrcById(*fr), (std::map<int64_t, std::string>{{1, "new"}}));
  auto c = CountRows(snap, std::string("cat = 'b'"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, 1);
}

// ---------------------------------------------------------------------------------------
// Key written three times (v1, v2, v3 in three tiers): lookup -> v3; a search for v1 with
// k=10 holds id 1 exactly once (its v3 is near v1 too), carrying v3.

TEST(TierScenarioTest, KeyWrittenThreeTimesAppearsOnceAsItsNewestVersion) {
  constexpr int32_t dim = 8;
  RealTable t(dim);
  t.Index(HnswSpec("vector", index::DistanceType::kL2));
  std::mt19937 rng(31);
  const std::vector<float> v1(dim, 0.0f);
  std::vector<float> v2(dim, 0.0f), v3(dim, 0.0f);
  v2[0] = 0.05f;
  v3[0] = 0.1f;
  int64_t next = 100;
  auto filler = [&](int n) {
    std::vector<Row> rows;
    for (int i = 0; i < n; ++i) rows.push_back({next++, "filler", "f", "x", RandomVec(&rng, dim)});
    return rows;
  };
  auto w1 = filler(200);
  w1.push_back({1, "v1", "a", "x", v1});
  t.Insert(w1);
  t.Flush();
  auto w2 = filler(200);
  w2.push_back({1, "v2", "a", "x", v2});
  t.Insert(w2);
  t.Flush();
  auto w3 = filler(200);
  w3.push_back({1, "v3", "a", "x", v3});
  t.Insert(w3);
  ASSERT_TRUE(WaitForIndexes(*t.table));
  const auto snap = t.table->Snapshot();
  ASSERT_GE(SourceNames(snap).size(), 3u);
  EXPECT_EQ(snap.num_rows, 601);
  auto l = Lookup(snap, 1);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(ResultStrings(*l, "src"), std::vector<std::string>{"v3"});
  for (bool bypass : {false, true}) {
    SCOPED_TRACE(bypass ? "exact" : "HNSW");
    VectorSearchOptions o;
    o.query = v1;
    o.k = 10;
    o.bypass_vector_index = bypass;
    auto r = VectorSearch(snap, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const auto ids = ResultIds(*r);
    EXPECT_EQ(ids.size(), 10u);
    ASSERT_EQ(std::count(ids.begin(), ids.end(), 1), 1);
    const auto srcs = ResultStrings(*r, "src");
    const size_t at = static_cast<size_t>(std::find(ids.begin(), ids.end(), 1) - ids.begin());
    EXPECT_EQ(srcs.at(at), "v3");
    EXPECT_NEAR(ResultFloats(*r, kDistanceColumn).at(at), 0.01f, 1e-6);
  }
}

// ---------------------------------------------------------------------------------------
// Delete across a seal: seal every 5 rows; insert id=1 with vector A, seal, delete id=1
// before the flush -> a search for A never returns id 1, before and after the flush.

void ExpectNoId1(const table::TableSnapshot& snap, const std::vector<float>& a, int64_t live) {
  for (bool bypass : {false, true}) {
    SCOPED_TRACE(bypass ? "exact" : "HNSW");
    for (int64_t k : {int64_t{1}, int64_t{3}, int64_t{100}}) {
      VectorSearchOptions o;
      o.query = a;
      o.k = k;
      o.bypass_vector_index = bypass;
      auto r = VectorSearch(snap, o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      const auto ids = ResultIds(*r);
      EXPECT_EQ(std::count(ids.begin(), ids.end(), 1), 0) << "k " << k;
      EXPECT_EQ(static_cast<int64_t>(ids.size()), std::min(k, live)) << "k " << k;
    }
  }
  auto l = Lookup(snap, 1);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->num_rows, 0);
  auto c = CountRows(snap, std::nullopt);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, live);
}

TEST(TierScenarioTest, DeleteAcrossASealHidesTheRowBeforeAndAfterTheFlush) {
  constexpr int32_t dim = 4;
  strata::testing::TempDir dir;
  std::shared_ptr<io::ObjectStore> store = *io::LocalObjectStore::Open(dir.path());
  const auto schema = ScenarioSchema(dim);
  shard::ShardWriterOptions o;
  o.primary_key = {"id"};
  o.max_memtable_rows = 5;
  o.start_flusher = false;  // keep the sealed MemTable frozen until we flush
  auto spec = HnswSpec("vector", index::DistanceType::kL2);
  spec.uuid = "u1";
  o.indexes = {spec};
  const std::vector<float> a = {0, 0, 0, 0};
  std::vector<Row> rows = {{1, "w", "a", "x", a}};
  for (int64_t id = 2; id <= 5; ++id) {
    rows.push_back({id, "w", "a", "x", {static_cast<float>(id), 1, 1, 1}});
  }
  {
    auto w = shard::ShardWriter::Open(store, "default/t", "s1", schema, o);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Put({RowBatch(schema, rows)}).ok());
    auto sealed = (*w)->force_seal_active();  // 5 rows: the seal (or the row trigger's)
    ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
    ASSERT_TRUE((*w)->Delete({KeyBatch({1})}).ok());
    // More rows cross further seals (5 rows each).
    for (int64_t id = 6; id <= 12; ++id) {
      ASSERT_TRUE(
          (*w)->Put({RowBatch(schema, {{id, "w", "a", "x", {static_cast<float>(id), 2, 2, 2}}})})
              .ok());
    }
    const auto snap = WriterSnapshot(**w);
    const auto names = SourceNames(snap);
    ASSERT_GE(names.size(), 2u);
    for (const auto& n : names) EXPECT_EQ(n.rfind("memtable", 0), 0u) << n;  // nothing flushed
    SCOPED_TRACE("before the flush");
    ExpectNoId1(snap, a, 11);
    (*w)->close();
  }
  // Reopen with the flusher: replay, seal the rest, wait until everything is in SSTables.
  o.start_flusher = true;
  auto w = shard::ShardWriter::Open(store, "default/t", "s1", schema, o);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto sealed = (*w)->force_seal_active();
  ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
  std::optional<uint64_t> g = sealed->has_value() ? std::optional<uint64_t>((*sealed)->generation)
                                                  : (*w)->newest_unpublished_generation();
  if (g) {
    ASSERT_TRUE((*w)->wait_for_generation(*g, shard::Clock::now() + 30s).ok());
  }
  const auto snap = WriterSnapshot(**w);
  const auto names = SourceNames(snap);
  ASSERT_GE(names.size(), 2u);
  for (size_t i = 0; i + 1 < names.size(); ++i) {
    EXPECT_EQ(names[i].rfind("sstable", 0), 0u) << names[i];
  }
  SCOPED_TRACE("after the flush");
  ExpectNoId1(snap, a, 11);
  (*w)->close();
}

// The same through LocalTable with the row trigger sealing every 5 rows and the flusher
// running (the flush may land at any moment between the writes).
TEST(TierScenarioTest, DeleteAcrossRowTriggeredSealsThroughTheTable) {
  constexpr int32_t dim = 4;
  shard::ShardWriterOptions o;
  o.max_memtable_rows = 5;
  RealTable t(dim, o);
  t.Index(HnswSpec("vector", index::DistanceType::kL2));
  const std::vector<float> a = {0, 0, 0, 0};
  t.Insert({{1, "w", "a", "x", a}});
  for (int64_t id = 2; id <= 9; ++id) t.Insert({{id, "w", "a", "x", {float(id), 1, 1, 1}}});
  ASSERT_TRUE(t.table->Delete({KeyBatch({1})}).ok());
  ASSERT_TRUE(WaitForIndexes(*t.table));
  {
    SCOPED_TRACE("before Flush");
    ExpectNoId1(t.table->Snapshot(), a, 8);
  }
  t.Flush();
  ASSERT_TRUE(WaitForIndexes(*t.table));
  SCOPED_TRACE("after Flush");
  ExpectNoId1(t.table->Snapshot(), a, 8);
}

// ---------------------------------------------------------------------------------------
// k bounds.

TEST(TierScenarioTest, KBounds) {
  constexpr int32_t dim = 8;
  RealTable t(dim);
  t.Index(HnswSpec("vector", index::DistanceType::kL2));
  std::mt19937 rng(41);
  {
    // Empty table: 0 rows, for both paths.
    const auto snap = t.table->Snapshot();
    for (bool bypass : {false, true}) {
      VectorSearchOptions vo;
      vo.query = RandomVec(&rng, dim);
      vo.k = 10;
      vo.bypass_vector_index = bypass;
      auto r = VectorSearch(snap, vo);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->num_rows, 0);
    }
  }
  std::vector<Row> rows;
  for (int64_t id = 0; id < 2000; ++id) rows.push_back({id, "s", "a", "x", RandomVec(&rng, dim)});
  t.Insert(std::vector<Row>(rows.begin(), rows.begin() + 1200));
  t.Flush();
  t.Insert(std::vector<Row>(rows.begin() + 1200, rows.end()));
  ASSERT_TRUE(WaitForIndexes(*t.table));
  const auto snap = t.table->Snapshot();
  ASSERT_EQ(snap.num_rows, 2000);
  for (bool bypass : {false, true}) {
    SCOPED_TRACE(bypass ? "exact" : "HNSW");
    VectorSearchOptions vo;
    vo.query = RandomVec(&rng, dim);
    vo.bypass_vector_index = bypass;
    for (int64_t k : {int64_t{2000}, int64_t{5000}}) {
      vo.k = k;
      auto r = VectorSearch(snap, vo);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      const auto ids = ResultIds(*r);
      EXPECT_EQ(ids.size(), 2000u) << "k " << k;
      EXPECT_EQ(std::set<int64_t>(ids.begin(), ids.end()).size(), 2000u) << "k " << k;
      const auto d = ResultFloats(*r, kDistanceColumn);
      EXPECT_TRUE(std::is_sorted(d.begin(), d.end()));
    }
    for (int64_t k : {int64_t{0}, int64_t{-1}}) {
      vo.k = k;
      auto r = VectorSearch(snap, vo);
      ASSERT_FALSE(r.ok()) << "k " << k;
      EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
      EXPECT_NE(r.status().message().find("k"), std::string::npos) << r.status().ToString();
    }
  }
}

// ---------------------------------------------------------------------------------------
// Selective prefilter: 20,000 x 64-d rows with an HNSW index, a filter matching exactly 322
// rows, k = 644 -> exactly those 322 rows, in the exact order.

TEST(TierScenarioTest, SelectivePrefilterReturnsEveryMatchingRow) {
  constexpr int32_t dim = 64;
  RealTable t(dim);
  t.Index(HnswSpec("vector", index::DistanceType::kL2));
  std::mt19937 rng(51);
  std::vector<int64_t> order(20000);
  for (int64_t i = 0; i < 20000; ++i) order[static_cast<size_t>(i)] = i;
  std::shuffle(order.begin(), order.end(), rng);
  const std::set<int64_t> chosen(order.begin(), order.begin() + 322);
  std::map<int64_t, Row> live;
  std::vector<Row> rows;
  for (int64_t id = 0; id < 20000; ++id) {
    Row r{id, "s", chosen.count(id) ? "chosen" : "c" + std::to_string(id % 50), "x",
          RandomVec(&rng, dim)};
    live[id] = r;
    rows.push_back(std::move(r));
  }
  t.Insert(std::vector<Row>(rows.begin(), rows.begin() + 15000));
  t.Flush();
  t.Insert(std::vector<Row>(rows.begin() + 15000, rows.end()));
  ASSERT_TRUE(WaitForIndexes(*t.table));
  const auto snap = t.table->Snapshot();
  ASSERT_EQ(snap.num_rows, 20000);
  auto c = CountRows(snap, std::string("cat = 'chosen'"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(*c, 322);
  for (bool bypass : {false, true}) {
    SCOPED_TRACE(bypass ? "exact" : "HNSW");
    VectorSearchOptions vo;
    vo.query = RandomVec(&rng, dim);
    vo.k = 644;
    vo.filter = "cat = 'chosen'";
    vo.bypass_vector_index = bypass;
    auto r = VectorSearch(snap, vo);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const auto want = BruteTopK(live, vo.query, 644, index::DistanceType::kL2,
                                [](const Row& row) { return row.cat == "chosen"; });
    ASSERT_EQ(want.size(), 322u);
    EXPECT_EQ(r->num_rows, 322);
    EXPECT_EQ(ResultIds(*r), IdsOf(want));
  }
}

// ---------------------------------------------------------------------------------------
// Filtered vector search equals exact search over the filtered rows; the merged top-k equals
// an exact top-k over the deduplicated union, for l2, cosine and dot. Keys are updated across
// tiers and some deleted; the model map holds the newest live version per key.

TEST(TierScenarioTest, MergedTopKEqualsExactTopKOverTheLiveRows) {
  constexpr int32_t dim = 16;
  RealTable t(dim);
  t.Index(HnswSpec("vector", index::DistanceType::kL2, "vec_l2"));
  t.Index(HnswSpec("vector", index::DistanceType::kCosine, "vec_cos"));
  t.Index(HnswSpec("vector", index::DistanceType::kDot, "vec_dot"));
  std::mt19937 rng(61);
  std::map<int64_t, Row> live;
  auto write = [&](int64_t first, int64_t last, const std::string& src) {
    std::vector<Row> rows;
    for (int64_t id = first; id < last; ++id) {
      Row r{id, src, "c" + std::to_string(rng() % 10), "x", RandomVec(&rng, dim)};
      live[id] = r;
      rows.push_back(std::move(r));
    }
    t.Insert(rows);
  };
  write(0, 2000, "t0");
  t.Flush();
  write(1000, 3000, "t1");  // 1000-1999 updated
  t.Flush();
  write(1500, 2500, "t2");  // updated again, stays in the MemTable
  std::vector<int64_t> dead;
  for (int64_t id = 0; id < 3000; id += 37) dead.push_back(id);
  ASSERT_TRUE(t.table->Delete({KeyBatch(dead)}).ok());
  for (int64_t id : dead) live.erase(id);
  ASSERT_TRUE(WaitForIndexes(*t.table));
  const auto snap = t.table->Snapshot();
  ASSERT_EQ(snap.num_rows, static_cast<int64_t>(live.size()));
  ASSERT_GE(SourceNames(snap).size(), 3u);

  struct FilterCase {
    std::optional<std::string> sql;
    std::function<bool(const Row&)> keep;
  };
  const std::vector<FilterCase> filters = {
      {std::nullopt, [](const Row&) { return true; }},
      {"cat = 'c3'", [](const Row& r) { return r.cat == "c3"; }},
      {"cat IN ('c1', 'c2') AND id > 1200",
       [](const Row& r) { return (r.cat == "c1" || r.cat == "c2") && r.id > 1200; }},
      {"src = 't0'", [](const Row& r) { return r.src == "t0"; }},
  };
  for (auto dist :
       {index::DistanceType::kL2, index::DistanceType::kCosine, index::DistanceType::kDot}) {
    int64_t hits = 0, total = 0;
    for (const auto& fc : filters) {
      SCOPED_TRACE(std::string(index::DistanceTypeName(dist)) + " filter " +
                   fc.sql.value_or("none"));
      for (int q = 0; q < 8; ++q) {
        VectorSearchOptions vo;
        vo.query = RandomVec(&rng, dim);
        vo.k = 10;
        vo.distance = dist;
        vo.filter = fc.sql;
        const auto want = BruteTopK(live, vo.query, 10, dist, fc.keep);
        vo.bypass_vector_index = true;
        auto exact = VectorSearch(snap, vo);
        ASSERT_TRUE(exact.ok()) << exact.status().ToString();
        EXPECT_EQ(ResultIds(*exact), IdsOf(want));
        const auto d = ResultFloats(*exact, kDistanceColumn);
        ASSERT_EQ(d.size(), want.size());
        for (size_t i = 0; i < d.size(); ++i) EXPECT_NEAR(d[i], want[i].first, 1e-4);
        // The version returned is the live one.
        const auto srcs = ResultStrings(*exact, "src");
        const auto ids = ResultIds(*exact);
        for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(srcs[i], live.at(ids[i]).src);
        vo.bypass_vector_index = false;
        auto ann = VectorSearch(snap, vo);
        ASSERT_TRUE(ann.ok()) << ann.status().ToString();
        const auto ann_ids = ResultIds(*ann);
        EXPECT_EQ(ann_ids.size(), want.size());
        EXPECT_EQ(std::set<int64_t>(ann_ids.begin(), ann_ids.end()).size(), ann_ids.size());
        const auto truth = IdsOf(want);
        for (int64_t id : ann_ids) {
          ASSERT_TRUE(live.count(id)) << "deleted id " << id << " returned";
          EXPECT_TRUE(fc.keep(live.at(id))) << "id " << id << " fails the filter";
          hits += std::count(truth.begin(), truth.end(), id);
        }
        total += static_cast<int64_t>(truth.size());
      }
    }
    const double recall = static_cast<double>(hits) / static_cast<double>(total);
    EXPECT_GE(recall, 0.9) << index::DistanceTypeName(dist);
  }
}

// ---------------------------------------------------------------------------------------
// Visibility during seal and flush: insert(id) then lookup(id) and a k=1 search of its own
// vector, 10,000 times, while another thread seals and flushes every ~50 ms -> found 100%.
// Non-durable puts (visible on return, fsync in the background) keep the 10,000 iterations
// fast; a durable run of 1,000 iterations (one fsync per put) covers the durable path.

void ReadYourWrites(bool durable, int64_t iterations) {
  constexpr int32_t dim = 8;
  shard::ShardWriterOptions o;
  o.durable_write = durable;
  RealTable t(dim, o);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> flushes{0};
  std::thread flusher([&] {
    while (!stop.load()) {
      std::this_thread::sleep_for(50ms);
      auto r = t.table->Flush(shard::Clock::now() + 30s);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      flushes.fetch_add(1);
    }
  });
  std::mt19937 rng(71);
  int64_t found_lookup = 0, found_search = 0;
  for (int64_t id = 0; id < iterations; ++id) {
    Row row{id, "s", "a", "x", RandomVec(&rng, dim)};
    auto v = t.table->Insert({RowBatch(t.schema, {row})});
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    const auto snap = t.table->Snapshot();
    auto l = Lookup(snap, id);
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    found_lookup += ResultIds(*l) == std::vector<int64_t>{id} ? 1 : 0;
    VectorSearchOptions vo;
    vo.query = row.vec;
    vo.k = 1;
    vo.columns = {{"id", ""}};
    auto s = VectorSearch(snap, vo);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    found_search += ResultIds(*s) == std::vector<int64_t>{id} ? 1 : 0;
  }
  stop = true;
  flusher.join();
  EXPECT_EQ(found_lookup, iterations);
  EXPECT_EQ(found_search, iterations);
  EXPECT_GE(flushes.load(), 2);
  const auto snap = t.table->Snapshot();
  auto c = CountRows(snap, std::nullopt);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, iterations);
  // The flushes really moved rows into SSTables along the way.
  EXPECT_GE(SourceNames(snap).size(), 2u);
}

// Each iteration re-snapshots a growing table (O(rows)), so the run is quadratic; the
// sanitizers (10-20x slower) run a fifth of it to stay inside ctest's timeout.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr int64_t kVisibilityScale = 5;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
constexpr int64_t kVisibilityScale = 5;
#else
constexpr int64_t kVisibilityScale = 1;
#endif
#else
constexpr int64_t kVisibilityScale = 1;
#endif

TEST(TierScenarioTest, ReadYourWriteDuringSealsAndFlushes) {
  ReadYourWrites(false, 10000 / kVisibilityScale);
}

TEST(TierScenarioTest, ReadYourDurableWriteDuringSealsAndFlushes) {
  ReadYourWrites(true, 1000 / kVisibilityScale);
}

// ---------------------------------------------------------------------------------------
// Bad queries: dimension mismatch names both dimensions; NaN / Inf; zero vector under cosine.

TEST(TierScenarioTest, BadQueriesAreInvalidAndNameTheProblem) {
  constexpr int32_t dim = 2;
  RealTable t(dim);
  t.Index(HnswSpec("vector", index::DistanceType::kCosine));
  t.Insert({{1, "s", "a", "x", {1, 0}}, {2, "s", "a", "x", {0, 1}}});
  t.Flush();
  t.Insert({{3, "s", "a", "x", {1, 1}}});
  ASSERT_TRUE(WaitForIndexes(*t.table));
  const auto snap = t.table->Snapshot();
  auto run = [&](std::vector<float> q, index::DistanceType d) {
    VectorSearchOptions vo;
    vo.query = std::move(q);
    vo.distance = d;
    return VectorSearch(snap, vo);
  };
  {
    auto r = run({1.0f}, index::DistanceType::kL2);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
    const std::string m = r.status().message();
    EXPECT_NE(m.find("dimension 1"), std::string::npos) << m;
    EXPECT_NE(m.find("dimension 2"), std::string::npos) << m;
  }
  {
    auto r = run({1.0f, 2.0f, 3.0f}, index::DistanceType::kL2);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("3"), std::string::npos) << r.status().ToString();
  }
  for (float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    for (auto d : {index::DistanceType::kL2, index::DistanceType::kCosine}) {
      auto r = run({0.5f, bad}, d);
      ASSERT_FALSE(r.ok()) << bad;
      EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
    }
  }
  {
    auto r = run({0.0f, 0.0f}, index::DistanceType::kCosine);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
    // The zero vector is fine under l2 (distance = squared norm of each row).
    auto l2 = run({0.0f, 0.0f}, index::DistanceType::kL2);
    ASSERT_TRUE(l2.ok()) << l2.status().ToString();
    EXPECT_EQ(ResultFloats(*l2, kDistanceColumn), (std::vector<float>{1, 1, 2}));
  }
}

}  // namespace
}  // namespace strata::query
