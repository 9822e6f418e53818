// Issue 5 read path across tiers (query/source_rows.h, scan.h, vector_search.h): SQL filters
// over SSTables + frozen + active MemTables, BTree-picked candidates equal evaluating every
// row, primary-key point lookups, `_rowid` / `_rowoffset` values and lookups, CountRows,
// computed projections, vector-search postfilter and distance bounds. Expected answers come
// from models of the live rows computed in the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../io/storage_test_util.h"
#include "index/vector/distance.h"
#include "io/local_object_store.h"
#include "query/scan.h"
#include "query/source_rows.h"
#include "query/vector_search.h"
#include "shard/shard_writer.h"
#include "table/local_table.h"
#include "tier_test_util.h"

namespace strata::query {
namespace {

using namespace std::chrono_literals;
using testing::HandSnapshot;
using testing::HandSource;
using testing::Ids;
using testing::TierRow;
using testing::TierSchema;

constexpr int32_t kDim = 4;

index::IndexSpec BTree(const std::string& column) {
  index::IndexSpec s;
  s.kind = index::IndexKind::kBTree;
  s.column = column;
  s.name = column + "_idx";
  s.requested_type = "BTREE";
  return s;
}

std::vector<int64_t> AllIds(const QueryResult& r) {
  std::vector<int64_t> out;
  for (const auto& b : r.batches) {
    const auto ids = Ids(*b);
    out.insert(out.end(), ids.begin(), ids.end());
  }
  return out;
}

std::vector<uint64_t> RowIds(const QueryResult& r) {
  std::vector<uint64_t> out;
  for (const auto& b : r.batches) {
    const int i = b->schema()->GetFieldIndex(kRowIdColumn);
    EXPECT_GE(i, 0);
    if (i < 0) return out;
    arrow::Array a = b->column(i);
    for (int64_t k = 0; k < a.length(); ++k) out.push_back(a.Value<uint64_t>(k));
  }
  return out;
}

// --- A real primary-key table over a local store, spread over SSTables + MemTables. -------

struct PkTable {
  strata::testing::TempDir dir;
  arrow::SchemaPtr schema = TierSchema(kDim);
  std::shared_ptr<table::LocalTable> table;
  PkTable() {
    auto store = io::LocalObjectStore::Open(dir.path());
    EXPECT_TRUE(store.ok());
    shard::ShardWriterOptions o;
    o.primary_key = {"id"};
    auto t = table::LocalTable::Create(*store, "default/t", "t", schema, {}, o);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    table = *t;
  }
  void Insert(const std::vector<TierRow>& rows) {
    auto v = table->Insert({testing::TierBatch(schema, rows)});
    ASSERT_TRUE(v.ok()) << v.status().ToString();
  }
};

TierRow Version(int64_t id, const std::string& text) {
  return {id, text, std::vector<float>(kDim, static_cast<float>(id))};
}

TEST(ReadPathTest, PointLookupFiltersAndRowIdsAcrossTiers) {
  PkTable t;
  // Generation A (flushed): ids 0..9 "v1"; B (flushed): 3..5 "v2"; C (active): 5, 6 "v3".
  std::vector<TierRow> a, b, c;
  for (int64_t i = 0; i < 10; ++i) a.push_back(Version(i, "v1"));
  for (int64_t i = 3; i <= 5; ++i) b.push_back(Version(i, "v2"));
  for (int64_t i = 5; i <= 6; ++i) c.push_back(Version(i, "v3"));
  t.Insert(a);
  testing::FlushTable(*t.table);
  t.Insert(b);
  testing::FlushTable(*t.table);
  t.Insert(c);
  const auto snap = t.table->Snapshot();
  ASSERT_EQ(snap.num_rows, 10);
  ASSERT_EQ(snap.shard->sources.size(), 3u);
  std::map<int64_t, std::string> newest;
  for (int64_t i = 0; i < 10; ++i) newest[i] = "v1";
  for (int64_t i = 3; i <= 5; ++i) newest[i] = "v2";
  for (int64_t i = 5; i <= 6; ++i) newest[i] = "v3";

  // Point lookups return the newest version; the plan names the key lookup.
  for (int64_t id = -1; id <= 10; ++id) {
    ScanOptions o;
    o.filter = "id = " + std::to_string(id);
    auto r = Scan(snap, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (id < 0 || id > 9) {
      EXPECT_EQ(r->num_rows, 0) << id;
      continue;
    }
    ASSERT_EQ(AllIds(*r), std::vector<int64_t>{id});
    EXPECT_EQ(arrow::Array(r->batches[0]->column(1)).GetView(0), newest[id]) << id;
    for (const auto& line : r->plan) {
      EXPECT_NE(line.find("key lookup"), std::string::npos) << line;
    }
  }
  // IN on the key, and a key conjunct plus another condition (evaluated on the candidates).
  {
    ScanOptions o;
    o.filter = "id IN (5, 1, 42, 3) AND text <> 'v1'";
    auto r = Scan(snap, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(AllIds(*r), (std::vector<int64_t>{3, 5}));
    auto n = CountRows(snap, std::string("id IN (5, 1, 42, 3)"));
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 3);
  }
  // Literal out of range / of another type: no index, same answer.
  {
    auto n = CountRows(snap, std::string("id = 4.0"));
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(*n, 1);
  }
  // _rowid values: generation << 32 | position of the returned version.
  ScanOptions all;
  all.with_row_id = true;
  auto r = Scan(snap, all);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto ids = AllIds(*r);
  const auto rowids = RowIds(*r);
  ASSERT_EQ(ids.size(), 10u);
  std::map<int64_t, uint64_t> rowid_of;
  for (size_t i = 0; i < ids.size(); ++i) {
    rowid_of[ids[i]] = rowids[i];
    EXPECT_EQ(testing::IdAtRowId(snap, rowids[i]), std::optional<int64_t>(ids[i]));
  }
  const auto& src = snap.shard->sources;
  EXPECT_EQ(rowid_of[0], EncodeRowId(src[0].generation, 0));
  EXPECT_EQ(rowid_of[4], EncodeRowId(src[1].generation, 1));
  EXPECT_EQ(rowid_of[6], EncodeRowId(src[2].generation, 1));
  // `_rowid IN (...)` fetches exactly those rows (and a stale address fetches nothing).
  {
    ScanOptions o;
    o.filter = "_rowid IN (" + std::to_string(rowid_of[6]) + ", " + std::to_string(rowid_of[1]) +
               ", " + std::to_string(EncodeRowId(src[0].generation, 5)) + ")";
    o.with_row_id = true;
    auto f = Scan(snap, o);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_EQ(AllIds(*f), (std::vector<int64_t>{1, 6}));
    EXPECT_EQ(RowIds(*f), (std::vector<uint64_t>{rowid_of[1], rowid_of[6]}));
  }
  // `_rowoffset IN (0, 2)`: the 1st and 3rd live rows in scan order.
  {
    ScanOptions o;
    o.filter = "_rowoffset IN (0, 2)";
    auto f = Scan(snap, o);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_EQ(AllIds(*f), (std::vector<int64_t>{ids[0], ids[2]}));
  }
  // The addresses survive a flush of the active MemTable.
  testing::FlushTable(*t.table);
  const auto after = t.table->Snapshot();
  auto r2 = Scan(after, all);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(AllIds(*r2), ids);
  EXPECT_EQ(RowIds(*r2), rowids);
  for (const auto& s : after.shard->sources) EXPECT_FALSE(s.memtable && s.live_rows > 0);
  // Point lookup on the flushed SSTables (bloom filter + pk index).
  ScanOptions o;
  o.filter = "id = 6";
  auto six = Scan(after, o);
  ASSERT_TRUE(six.ok());
  EXPECT_EQ(AllIds(*six), std::vector<int64_t>{6});
  EXPECT_EQ(arrow::Array(six->batches[0]->column(1)).GetView(0), "v3");
}

TEST(ReadPathTest, OffsetLimitProjectionExpressionAndCount) {
  PkTable t;
  std::vector<TierRow> a, b;
  for (int64_t i = 0; i < 6; ++i) a.push_back(Version(i, i % 2 ? "odd" : "even"));
  for (int64_t i = 6; i < 10; ++i) b.push_back(Version(i, i % 2 ? "odd" : "even"));
  t.Insert(a);
  testing::FlushTable(*t.table);
  t.Insert(b);
  const auto snap = t.table->Snapshot();
  ScanOptions o;
  o.filter = "text = 'odd' AND id > 1";
  o.offset = 1;
  o.limit = 2;
  o.columns = {{"id", "k"}, {"id * 10 + 1", "x"}};
  auto r = Scan(snap, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->batches.size(), 1u);
  const auto& batch = *r->batches[0];
  ASSERT_EQ(batch.schema()->num_fields(), 2);
  EXPECT_EQ(batch.schema()->field(0)->name, "k");
  EXPECT_EQ(batch.schema()->field(1)->name, "x");
  arrow::Array k = batch.column(0), x = batch.column(1);
  ASSERT_EQ(batch.num_rows(), 2);
  EXPECT_EQ(k.Value<int64_t>(0), 5);
  EXPECT_EQ(k.Value<int64_t>(1), 7);
  EXPECT_EQ(x.Value<int64_t>(0), 51);
  EXPECT_EQ(x.Value<int64_t>(1), 71);
  // Unfiltered scan with offset/limit spanning the two sources, and the expression too.
  ScanOptions u;
  u.offset = 4;
  u.limit = 4;
  u.columns = {{"id", ""}, {"_rowoffset", "off"}};
  auto ur = Scan(snap, u);
  ASSERT_TRUE(ur.ok()) << ur.status().ToString();
  EXPECT_EQ(AllIds(*ur), (std::vector<int64_t>{4, 5, 6, 7}));
  std::vector<uint64_t> offs;
  for (const auto& bb : ur->batches) {
    arrow::Array a2 = bb->column(1);
    for (int64_t i = 0; i < a2.length(); ++i) offs.push_back(a2.Value<uint64_t>(i));
  }
  EXPECT_EQ(offs, (std::vector<uint64_t>{4, 5, 6, 7}));
  // CountRows with and without filters.
  auto n = CountRows(snap, std::nullopt);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 10);
  n = CountRows(snap, std::string("text = 'odd'"));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 5);
  n = CountRows(snap, std::string("id BETWEEN 3 AND 7 AND text = 'even'"));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2);
  auto bad = CountRows(snap, std::string("nope = 1"));
  EXPECT_FALSE(bad.ok());
  ScanOptions neg;
  neg.offset = -1;
  EXPECT_FALSE(Scan(snap, neg).ok());
}

// --- BTree candidates equal evaluating every row, on random data and random filters. ------

TEST(ReadPathTest, BTreePathEqualsEvaluatingEveryRow) {
  auto schema = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("cat", arrow::utf8()),
      arrow::field("n", arrow::int32())});
  std::mt19937 rng(5);
  const std::vector<std::string> cats = {"a", "b", "c", "d"};
  // Three hand-built sources with random liveness; one copy indexed, one not.
  auto layout = memtable::MakeStorageLayout(schema, {});
  ASSERT_TRUE(layout.ok());
  auto make = [&](bool indexed) {
    std::mt19937 r(7);  // same data for both copies
    auto shard = std::make_shared<shard::ShardSnapshot>();
    shard->schema = schema;
    shard->storage_schema = layout->storage_schema;
    shard->rowid_column = layout->rowid_column;
    shard->visibility = std::make_shared<shard::Visibility>();
    table::TableSnapshot snap;
    snap.schema = schema;
    int64_t next_id = 0;
    for (int s = 0; s < 3; ++s) {
      shard::SourceView v;
      v.name = "source " + std::to_string(s);
      v.generation = static_cast<uint64_t>(s + 1);
      std::vector<bool> live;
      for (int b = 0; b < 2; ++b) {
        arrow::RecordBatchBuilder builder(schema);
        const int rows = 150;
        for (int i = 0; i < rows; ++i) {
          EXPECT_TRUE(builder.column(0)->AppendInt(next_id++).ok());
          if (r() % 10 == 0) {
            EXPECT_TRUE(builder.column(1)->AppendNull().ok());
          } else {
            EXPECT_TRUE(builder.column(1)->AppendBytes(cats[r() % cats.size()]).ok());
          }
          if (r() % 12 == 0) {
            EXPECT_TRUE(builder.column(2)->AppendNull().ok());
          } else {
            EXPECT_TRUE(builder.column(2)->AppendInt(static_cast<int64_t>(r() % 100) - 20).ok());
          }
          live.push_back(r() % 5 != 0);
        }
        auto user = builder.Finish();
        EXPECT_TRUE(user.ok());
        auto storage = memtable::AddHiddenColumns(*layout, **user, 1000 * s + 150 * b);
        EXPECT_TRUE(storage.ok());
        v.batch_starts.push_back(v.num_rows);
        v.num_rows += rows;
        v.batches.push_back(*storage);
      }
      v.SetLiveRows(live);
      if (indexed) {
        for (const char* col : {"cat", "n"}) {
          auto idx =
              index::ColumnIndex::Build(BTree(col), *layout->storage_schema, v.batches.ToVector());
          EXPECT_TRUE(idx.ok()) << idx.status().ToString();
          v.indexes.push_back(*idx);
        }
      }
      snap.num_rows += v.live_rows;
      shard->num_rows += v.live_rows;
      shard->sources.push_back(std::move(v));
    }
    snap.shard = shard;
    return snap;
  };
  const auto with_index = make(true);
  const auto without = make(false);
  auto random_conjunct = [&]() -> std::string {
    const std::string n = std::to_string(static_cast<int>(rng() % 100) - 20);
    switch (rng() % 9) {
      case 0:
        return "cat = '" + cats[rng() % cats.size()] + "'";
      case 1:
        return "n < " + n;
      case 2:
        return "n >= " + n;
      case 3:
        return "n BETWEEN " + n + " AND " + std::to_string(std::stoi(n) + 15);
      case 4:
        return "cat IN ('a', '" + cats[rng() % cats.size()] + "', NULL)";
      case 5:
        return "cat IS NULL";
      case 6:
        return "n IS NOT NULL";
      case 7:
        return "n <> " + n;
      default:
        return n + " > n";
    }
  };
  int used_btree = 0;
  for (int iter = 0; iter < 60; ++iter) {
    std::string f = random_conjunct();
    if (rng() % 2) f += " AND " + random_conjunct();
    if (rng() % 4 == 0) f += " AND (id % 3 = 0 OR cat = 'b')";
    SCOPED_TRACE(f);
    ScanOptions o;
    o.filter = f;
    o.with_row_id = true;
    auto a = Scan(with_index, o);
    auto b = Scan(without, o);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_EQ(AllIds(*a), AllIds(*b));
    EXPECT_EQ(RowIds(*a), RowIds(*b));
    for (const auto& line : a->plan) used_btree += line.find("candidate") != std::string::npos;
    for (const auto& line : b->plan) EXPECT_EQ(line.find("BTree"), std::string::npos) << line;
    auto ca = CountRows(with_index, f);
    ASSERT_TRUE(ca.ok());
    EXPECT_EQ(*ca, a->num_rows);
  }
  EXPECT_GT(used_btree, 30);  // the index path really ran
}

// --- Vector search: postfilter vs prefilter, distance bounds, filtered = exact over rows. --

TEST(ReadPathTest, VectorPostfilterPrefilterAndBounds) {
  auto schema = TierSchema(2);
  std::vector<TierRow> rows;
  for (int64_t i = 0; i < 20; ++i) {
    rows.push_back(
        {i, i % 4 == 0 ? "four" : "other", std::vector<float>{static_cast<float>(i), 0}});
  }
  HandSource a{"sstable gen 1", false, {rows.begin(), rows.begin() + 10}, {}, {}, 4, 0};
  HandSource b{
      "memtable gen 2 (active)", true, {rows.begin() + 10, rows.end()}, {}, {}, 1 << 30, 10};
  const auto snap = HandSnapshot(schema, {a, b}, {});
  VectorSearchOptions o;
  o.query = {0, 0};
  o.k = 4;
  o.filter = "text = 'four'";
  auto pre = VectorSearch(snap, o);
  ASSERT_TRUE(pre.ok()) << pre.status().ToString();
  EXPECT_EQ(Ids(*pre->batches[0]), (std::vector<int64_t>{0, 4, 8, 12}));
  o.prefilter = false;
  auto post = VectorSearch(snap, o);
  ASSERT_TRUE(post.ok()) << post.status().ToString();
  // The unfiltered top 4 are 0..3; only 0 passes.
  EXPECT_EQ(Ids(*post->batches[0]), (std::vector<int64_t>{0}));
  EXPECT_TRUE(testing::PlanSays(post->plan, "postfilter", "1 of 4 top rows pass"));
  // Bounds: lower <= d < upper (l2 is squared: d = id^2), k rows come back when enough exist.
  VectorSearchOptions bo;
  bo.query = {0, 0};
  bo.k = 3;
  bo.lower_bound = 9.0f;    // id >= 3
  bo.upper_bound = 100.0f;  // id < 10
  auto bounded = VectorSearch(snap, bo);
  ASSERT_TRUE(bounded.ok()) << bounded.status().ToString();
  EXPECT_EQ(Ids(*bounded->batches[0]), (std::vector<int64_t>{3, 4, 5}));
  bo.k = 100;
  bounded = VectorSearch(snap, bo);
  ASSERT_TRUE(bounded.ok());
  EXPECT_EQ(Ids(*bounded->batches[0]), (std::vector<int64_t>{3, 4, 5, 6, 7, 8, 9}));
  bo.lower_bound = 5.0f;
  bo.upper_bound = 1.0f;
  auto bad = VectorSearch(snap, bo);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("lower_bound"), std::string::npos);
  bo.lower_bound = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(VectorSearch(snap, bo).ok());
}

TEST(ReadPathTest, FilteredVectorSearchEqualsExactSearchOverFilteredRows) {
  auto schema = TierSchema(kDim);
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<TierRow> rows;
  for (int64_t i = 0; i < 400; ++i) {
    std::vector<float> v(kDim);
    for (float& x : v) x = u(rng);
    rows.push_back({i, i % 3 == 0 ? "x" : "y", v});
  }
  for (index::DistanceType dist :
       {index::DistanceType::kL2, index::DistanceType::kCosine, index::DistanceType::kDot}) {
    SCOPED_TRACE(index::DistanceTypeName(dist));
    auto hnsw = testing::HnswSpec("vector", dist);
    HandSource a{"sstable gen 1", false, {rows.begin(), rows.begin() + 250}, {}, {hnsw}, 100, 0};
    HandSource b{"memtable gen 2 (active)",
                 true,
                 {rows.begin() + 250, rows.end()},
                 {},
                 {hnsw},
                 1 << 30,
                 250};
    const auto snap = HandSnapshot(schema, {a, b}, {hnsw});
    std::vector<float> q(kDim);
    for (float& x : q) x = u(rng);
    // Exact answer over the filtered rows.
    std::vector<std::pair<float, int64_t>> truth;
    for (const TierRow& r : rows) {
      if (r.text != "x" || r.id < 30) continue;
      truth.push_back(
          {index::Distance(dist, q.data(), std::sqrt(index::SquaredNorm(q.data(), kDim)),
                           r.vector->data(), kDim),
           r.id});
    }
    std::sort(truth.begin(), truth.end());
    truth.resize(10);
    VectorSearchOptions o;
    o.query = q;
    o.k = 10;
    o.distance = dist;
    o.filter = "text = 'x' AND id >= 30";
    o.bypass_vector_index = true;
    auto r = VectorSearch(snap, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<int64_t> want;
    for (const auto& p : truth) want.push_back(p.second);
    EXPECT_EQ(Ids(*r->batches[0]), want);
    const auto d = testing::NumericColumn(*r->batches[0], kDistanceColumn);
    for (size_t i = 0; i < d.size() && i < truth.size(); ++i) {
      EXPECT_NEAR(d[i], truth[i].first, 1e-4);
    }
    // Through the HNSW: every row passes the filter, recall high on this small set.
    o.bypass_vector_index = false;
    auto h = VectorSearch(snap, o);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    const auto hids = Ids(*h->batches[0]);
    int hit = 0;
    for (int64_t id : hids) {
      EXPECT_TRUE(id % 3 == 0 && id >= 30) << id;
      hit += std::count(want.begin(), want.end(), id);
    }
    EXPECT_GE(hit, 9);
  }
}

}  // namespace
}  // namespace strata::query
