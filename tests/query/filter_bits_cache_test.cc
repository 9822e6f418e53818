// The filter-bits cache (query/filter_bits_cache.h): bits computed the second time a
// (filter, source) pair is asked, equal to the compiled filter row for row; a MemTable that
// grew gets its new rows added; the budget bounds it (0 disables); a source whose batches were
// freed (compacted SSTables) loses its entries; and searches answered from cached bits return
// what the uncached search returns, deleted rows excluded.
#include "query/filter_bits_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include "../io/storage_test_util.h"
#include "arrow/builder.h"
#include "query/vector_search.h"
#include "query_test_util.h"
#include "table/catalog.h"
#include "table/primary_key.h"

namespace strata::query {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int32_t kDim = 16;

arrow::SchemaPtr Schema() {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("tag", arrow::int32(), true),
      arrow::field("vec", arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
  return *table::DeclarePrimaryKey(s, {"id"});
}

// The bytes an entry of a compiled predicate is charged beyond its bits: its key, "compiled:",
// the predicate's key, the source's name and its first batch's address in hex, separated.
int64_t KeyBytes(const RowPredicate& pred, const shard::SourceView& src) {
  char hex[24];
  const int len =
      std::snprintf(hex, sizeof(hex), "%zx", reinterpret_cast<uintptr_t>(src.batches[0].get()));
  return static_cast<int64_t>(std::string("compiled:").size() + pred.Key().size() + 1 +
                              src.name.size() + 1) +
         len;
}

class FilterBitsCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base::CompactionOptions co;
    co.background = false;
    catalog_ = std::move(table::Catalog::Open(dir_.path(), {}, co)).value();
    t_ = *catalog_->CreateTable("default", "f", Schema(), {}, table::CreateMode::kCreate);
    ASSERT_TRUE(
        t_->CreateIndex(testing::IndexSpecFor(index::IndexKind::kHnsw, "vec", "vec_idx")).ok());
    ASSERT_TRUE(
        t_->CreateIndex(testing::IndexSpecFor(index::IndexKind::kBTree, "tag", "tag_idx")).ok());
  }

  // Rows [first, first + n): tag = (id * 7919) % 1000, null every 97th id; clustered vectors.
  void Insert(int64_t first, int64_t n) {
    std::mt19937_64 rng(static_cast<uint64_t>(first) + 1);
    std::normal_distribution<float> noise(0, 0.1f);
    arrow::RecordBatchBuilder b(Schema());
    for (int64_t id = first; id < first + n; ++id) {
      (void)b.column(0)->AppendInt(id);
      if (id % 97 == 3) {
        (void)b.column(1)->AppendNull();
      } else {
        (void)b.column(1)->AppendInt((id * 7919) % 1000);
      }
      std::vector<float> v(kDim);
      for (int d = 0; d < kDim; ++d) v[d] = static_cast<float>((id % 20) * (d % 3)) + noise(rng);
      (void)b.column(2)->child(0)->AppendFloats(v.data(), kDim);
      (void)b.column(2)->AppendValid();
    }
    auto batch = b.Finish();
    ASSERT_TRUE(batch.ok());
    ASSERT_TRUE(t_->Insert({*batch}).ok());
  }
  // Rows with the given ids, tags (nullopt = null) and vectors, one batch.
  void InsertRows(const std::vector<int64_t>& ids, const std::vector<std::optional<int64_t>>& tags,
                  const std::vector<std::vector<float>>& vecs) {
    arrow::RecordBatchBuilder b(Schema());
    for (size_t i = 0; i < ids.size(); ++i) {
      (void)b.column(0)->AppendInt(ids[i]);
      if (tags[i]) {
        (void)b.column(1)->AppendInt(*tags[i]);
      } else {
        (void)b.column(1)->AppendNull();
      }
      (void)b.column(2)->child(0)->AppendFloats(vecs[i].data(), kDim);
      (void)b.column(2)->AppendValid();
    }
    auto batch = b.Finish();
    ASSERT_TRUE(batch.ok());
    ASSERT_TRUE(t_->Insert({*batch}).ok());
  }
  void DeleteIds(const std::vector<std::optional<int64_t>>& dead) {
    auto key_schema = std::make_shared<arrow::Schema>(
        std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64(), false)});
    ASSERT_TRUE(t_->Delete({std::make_shared<arrow::RecordBatch>(
                               key_schema, static_cast<int64_t>(dead.size()),
                               std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(dead)})})
                    .ok());
  }
  void Flush() { ASSERT_TRUE(t_->Flush(Clock::now() + std::chrono::minutes(2)).ok()); }

  // The compiled predicate of `filter` over `snap`'s shard.
  static RowPredicate Compile(const table::TableSnapshot& snap, const std::string& filter) {
    auto f = SnapshotFilter::Make(*snap.shard, filter);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    auto pred = RowPredicate::Compile(*snap.shard->schema, *f->expr()->expr());
    EXPECT_TRUE(pred.has_value()) << filter;
    return *pred;
  }

  // Asserts `bits` hold exactly the rows of [0, rows) of `src` that `bound` passes.
  static void ExpectEqual(const FilterBits& bits, const RowPredicate::Bound& bound,
                          const shard::SourceView& src, int64_t rows) {
    ASSERT_GE(bits.rows, rows);
    int64_t passing = 0;
    for (int64_t p = 0; p < rows; ++p) {
      ASSERT_EQ(bits.Test(p), bound.Test(p)) << src.name << " position " << p;
      passing += bound.Test(p);
    }
    EXPECT_EQ(bits.CountBelow(rows), passing);
    EXPECT_GT(passing, 0);
    if (bits.positions) {
      EXPECT_LE(static_cast<int64_t>(bits.positions->size()) * 64, bits.rows);
      EXPECT_EQ(static_cast<int64_t>(bits.positions->size()), bits.count);
      for (int64_t p : *bits.positions) EXPECT_TRUE(bound.Test(p)) << p;
    }
  }

  Result<QueryResult> Search(const std::vector<float>& q, const std::string& filter,
                             std::optional<FilteredPlan> plan, bool exact = false) {
    VectorSearchOptions o;
    o.query = q;
    o.k = 10;
    o.filter = filter;
    o.columns = {ColumnRef{"id", ""}};
    o.bypass_vector_index = exact;
    o.force_filtered_plan = plan;
    return VectorSearch(t_->Snapshot(), o);
  }
  static std::vector<int64_t> Ids(const QueryResult& r) {
    std::vector<int64_t> out;
    for (const auto& b : r.batches) {
      const arrow::Array ids = b->column(0);
      for (int64_t i = 0; i < b->num_rows(); ++i) out.push_back(ids.raw_values<int64_t>()[i]);
    }
    return out;
  }

  strata::testing::TempDir dir_;
  std::unique_ptr<table::Catalog> catalog_;
  std::shared_ptr<table::Table> t_;
};

TEST_F(FilterBitsCacheTest, ComputedOnTheSecondAskAndEqualToTheFilter) {
  Insert(0, 3000);
  Flush();
  Insert(3000, 1500);
  const table::TableSnapshot snap = t_->Snapshot();
  ASSERT_EQ(snap.shard->sources.size(), 2u);  // the SSTable and the active MemTable
  FilterBitsCache cache(int64_t{1} << 20);
  int64_t bytes = 0;  // a bit per row, 64 bytes per entry, 8 per position kept
  // 50%, 10% and 0.1% (sparse: the positions are kept too), and a string of checks.
  for (const std::string f : {"tag < 500", "tag >= 100 AND tag < 200", "tag = 7"}) {
    SCOPED_TRACE(f);
    const RowPredicate pred = Compile(snap, f);
    for (const shard::SourceView& src : snap.shard->sources) {
      const RowPredicate::Bound bound = pred.Bind(src);
      EXPECT_EQ(cache.Get(pred.Key(), bound, src, src.num_rows), nullptr);  // asked once
      const auto bits = cache.Get(pred.Key(), bound, src, src.num_rows);
      ASSERT_NE(bits, nullptr);
      ExpectEqual(*bits, bound, src, src.num_rows);
      EXPECT_EQ(bits->positions.has_value(), bits->count * 64 <= bits->rows);
      bytes += (src.num_rows + 63) / 64 * 8 + 64 + (bits->positions ? 8 * bits->count : 0) +
               KeyBytes(pred, src);
      EXPECT_EQ(cache.Get(pred.Key(), bound, src, src.num_rows), bits);  // a hit
    }
  }
  const FilterBitsCacheStats st = cache.stats();
  EXPECT_EQ(st.entries, 6);
  EXPECT_EQ(st.builds, 6);
  EXPECT_EQ(st.hits, 6);
  EXPECT_EQ(st.bytes, bytes);
  // Equal checks give equal keys; different ones differ.
  EXPECT_EQ(Compile(snap, "tag < 500").Key(), Compile(snap, "500 > tag").Key());
  EXPECT_NE(Compile(snap, "tag < 500").Key(), Compile(snap, "tag < 501").Key());
  EXPECT_NE(Compile(snap, "tag IN (1, 2)").Key(), Compile(snap, "tag IN (12)").Key());
}

TEST_F(FilterBitsCacheTest, AGrownMemTableGetsItsNewRows) {
  Insert(0, 2000);
  FilterBitsCache cache(int64_t{1} << 20);
  const table::TableSnapshot before = t_->Snapshot();
  const RowPredicate pred = Compile(before, "tag < 300");
  const shard::SourceView& small = before.shard->sources.back();
  ASSERT_EQ(small.num_rows, 2000);
  const RowPredicate::Bound b1 = pred.Bind(small);
  EXPECT_EQ(cache.Get(pred.Key(), b1, small, small.num_rows), nullptr);
  const auto first = cache.Get(pred.Key(), b1, small, small.num_rows);
  ASSERT_NE(first, nullptr);
  // More rows in the same MemTable: its first batch and name stay, the bits grow.
  Insert(2000, 1700);
  const table::TableSnapshot after = t_->Snapshot();
  const shard::SourceView& big = after.shard->sources.back();
  ASSERT_EQ(big.num_rows, 3700);
  ASSERT_EQ(big.name, small.name);
  const RowPredicate::Bound b2 = pred.Bind(big);
  const auto grown = cache.Get(pred.Key(), b2, big, big.num_rows);  // no second ask needed
  ASSERT_NE(grown, nullptr);
  EXPECT_EQ(grown->rows, 3700);
  ExpectEqual(*grown, b2, big, big.num_rows);
  EXPECT_EQ(cache.stats().builds, 2);
  EXPECT_EQ(cache.stats().entries, 1);
  // The older, smaller view is served by the bigger bits (positions below its rows).
  const auto again = cache.Get(pred.Key(), b1, small, small.num_rows);
  EXPECT_EQ(again, grown);
  EXPECT_EQ(again->CountBelow(2000), first->count);
}

// A source that keeps its name and first batch but holds another batch after it (a rewrite)
// must not be served the old bits: positions there are other rows.
TEST_F(FilterBitsCacheTest, ASourceWithAReplacedBatchGetsNewBits) {
  Insert(0, 1000);
  Insert(1000, 1000);
  Insert(5001, 1000);  // other tags at the same positions of a third batch
  const table::TableSnapshot snap = t_->Snapshot();
  const shard::SourceView& mem = snap.shard->sources.back();
  ASSERT_EQ(mem.batches.size(), 3u);
  const auto view = [&](size_t second) {  // batches 0 and `second` of the MemTable
    shard::SourceView v;
    v.name = mem.name;
    v.batches.push_back(mem.batches[0]);
    v.batches.push_back(mem.batches[second]);
    v.batch_starts.push_back(0);
    v.batch_starts.push_back(1000);
    v.num_rows = v.live_rows = 2000;
    return v;
  };
  const shard::SourceView a = view(1), b = view(2);
  const RowPredicate pred = Compile(snap, "tag < 500");
  const RowPredicate::Bound ba = pred.Bind(a), bb = pred.Bind(b);
  FilterBitsCache cache(int64_t{1} << 20);
  (void)cache.Get(pred.Key(), ba, a, 2000);
  const auto bits_a = cache.Get(pred.Key(), ba, a, 2000);
  ASSERT_NE(bits_a, nullptr);
  ExpectEqual(*bits_a, ba, a, 2000);
  EXPECT_EQ(cache.Get(pred.Key(), bb, b, 2000), nullptr);  // not a's: a new pair, asked once
  const auto bits_b = cache.Get(pred.Key(), bb, b, 2000);
  ASSERT_NE(bits_b, nullptr);
  ExpectEqual(*bits_b, bb, b, 2000);
  int64_t differ = 0;
  for (int64_t p = 1000; p < 2000; ++p) differ += bits_a->Test(p) != bits_b->Test(p);
  EXPECT_GT(differ, 100);  // the second batches' tags differ
  EXPECT_EQ(cache.stats().entries, 1);
}

TEST_F(FilterBitsCacheTest, TheBudgetBoundsItAndZeroTurnsItOff) {
  Insert(0, 3000);
  const table::TableSnapshot snap = t_->Snapshot();
  const shard::SourceView& src = snap.shard->sources.back();
  const RowPredicate a = Compile(snap, "tag < 500");
  const RowPredicate b = Compile(snap, "tag > 500");
  const RowPredicate::Bound ba = a.Bind(src), bb = b.Bind(src);
  // One bitmap of 3,000 rows and its key (the two keys have the same length).
  const int64_t one = (3000 + 63) / 64 * 8 + 64 + KeyBytes(a, src);
  ASSERT_EQ(KeyBytes(a, src), KeyBytes(b, src));
  {
    FilterBitsCache off(0);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(off.Get(a.Key(), ba, src, src.num_rows), nullptr);
    EXPECT_EQ(off.stats().entries, 0);
  }
  {
    FilterBitsCache tiny(one - 1);  // never fits: never computed
    for (int i = 0; i < 3; ++i) EXPECT_EQ(tiny.Get(a.Key(), ba, src, src.num_rows), nullptr);
    EXPECT_EQ(tiny.stats().builds, 0);
  }
  FilterBitsCache cache(one + one / 2);  // room for one
  (void)cache.Get(a.Key(), ba, src, src.num_rows);
  ASSERT_NE(cache.Get(a.Key(), ba, src, src.num_rows), nullptr);
  (void)cache.Get(b.Key(), bb, src, src.num_rows);
  const auto kept = cache.Get(b.Key(), bb, src, src.num_rows);
  ASSERT_NE(kept, nullptr);
  ExpectEqual(*kept, bb, src, src.num_rows);
  FilterBitsCacheStats st = cache.stats();
  EXPECT_EQ(st.entries, 1);
  EXPECT_EQ(st.evictions, 1);
  EXPECT_EQ(st.bytes, one);
  // A long filter's key counts: an IN list of 2,000 values (a key of about 10 KB) does not
  // fit a budget its bits alone would fit.
  std::string in = "tag IN (0";
  for (int v = 1; v < 2000; ++v) in += ", " + std::to_string(v);
  const RowPredicate long_pred = Compile(snap, in + ")");
  ASSERT_GT(KeyBytes(long_pred, src), 2 * one);
  const RowPredicate::Bound bl = long_pred.Bind(src);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(cache.Get(long_pred.Key(), bl, src, 3000), nullptr);
  EXPECT_EQ(cache.stats().builds, 2);
  cache.SetBudget(0);
  EXPECT_EQ(cache.stats().entries, 0);
  EXPECT_EQ(cache.stats().bytes, 0);
  EXPECT_EQ(cache.Get(b.Key(), bb, src, src.num_rows), nullptr);
}

TEST_F(FilterBitsCacheTest, CompactedSourcesLoseTheirEntries) {
  Insert(0, 2000);
  Flush();
  Insert(2000, 2000);
  Flush();
  FilterBitsCache cache(int64_t{1} << 20);
  {
    const table::TableSnapshot snap = t_->Snapshot();
    const RowPredicate pred = Compile(snap, "tag < 500");
    for (const shard::SourceView& src : snap.shard->sources) {
      const RowPredicate::Bound bound = pred.Bind(src);
      (void)cache.Get(pred.Key(), bound, src, src.num_rows);
      (void)cache.Get(pred.Key(), bound, src, src.num_rows);
    }
    EXPECT_EQ(cache.stats().entries, 2);  // the two SSTables (the MemTable is empty)
  }
  ASSERT_TRUE(t_->Compact(Clock::now() + std::chrono::minutes(2)).ok());
  const table::TableSnapshot snap = t_->Snapshot();
  ASSERT_EQ(snap.shard->sources.front().name, "base");
  const RowPredicate pred = Compile(snap, "tag < 500");
  const shard::SourceView& base = snap.shard->sources.front();
  const RowPredicate::Bound bound = pred.Bind(base);
  (void)cache.Get(pred.Key(), bound, base, base.num_rows);
  const auto bits = cache.Get(pred.Key(), bound, base, base.num_rows);  // an insert sweeps
  ASSERT_NE(bits, nullptr);
  ExpectEqual(*bits, bound, base, base.num_rows);
  EXPECT_EQ(cache.stats().entries, 1);
  EXPECT_EQ(cache.stats().bytes, bits->bytes() + KeyBytes(pred, base));
}

// Through VectorSearch and the server's cache: every plan answers the same from cached bits
// as the exact search, before and after rows that passed are deleted.
TEST_F(FilterBitsCacheTest, SearchesFromCachedBitsMatchTheExactSearchAndSkipDeletedRows) {
  FilterBitsCache::Global().SetBudget(int64_t{64} << 20);
  Insert(0, 3000);
  Flush();
  Insert(3000, 3000);
  std::vector<std::vector<float>> queries;
  for (int i = 0; i < 20; ++i) {
    std::vector<float> q(kDim);
    for (int d = 0; d < kDim; ++d) q[d] = static_cast<float>(i * (d % 3));
    queries.push_back(q);
  }
  const int64_t builds = FilterBitsCache::Global().stats().builds;
  for (const int round : {0, 1}) {
    // Compiled filters, and two the evaluator answers (bits from filter::EvaluateMask).
    for (const std::string f :
         {"tag < 500", "tag < 30", "tag = 7", "tag % 10 = 3", "tag = 7 OR tag = 900"}) {
      for (const auto plan : {std::optional<FilteredPlan>{}, std::optional{FilteredPlan::kExact},
                              std::optional{FilteredPlan::kHnsw}}) {
        SCOPED_TRACE(f + " round " + std::to_string(round));
        int64_t hit = 0, total = 0;
        for (size_t i = 0; i < queries.size(); ++i) {
          auto got = Search(queries[i], f, plan);
          auto truth = Search(queries[i], f, std::nullopt, /*exact=*/true);
          ASSERT_TRUE(got.ok() && truth.ok());
          const std::vector<int64_t> g = Ids(*got), w = Ids(*truth);
          if (plan == FilteredPlan::kExact) {
            EXPECT_EQ(g, w);
          }
          const std::set<int64_t> want(w.begin(), w.end());
          for (int64_t id : g) {
            hit += want.count(id);
            if (round == 1) {
              EXPECT_NE(id % 5, 0) << "deleted row " << id << " returned";
            }
          }
          total += static_cast<int64_t>(w.size());
          if (i >= 2) {
            bool cached = false;
            for (const std::string& p : got->plan) {
              cached = cached || p.find("from cached filter bits") != std::string::npos;
            }
            EXPECT_TRUE(cached);
          }
        }
        EXPECT_GE(static_cast<double>(hit) / static_cast<double>(total), 0.95);
      }
    }
    if (round == 0) {
      // Delete every id divisible by 5 (a fifth of the passing rows of every filter).
      std::vector<std::optional<int64_t>> dead;
      for (int64_t id = 0; id < 6000; id += 5) dead.push_back(id);
      auto key_schema = std::make_shared<arrow::Schema>(
          std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64(), false)});
      auto keys = std::make_shared<arrow::RecordBatch>(
          key_schema, static_cast<int64_t>(dead.size()),
          std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(dead)});
      ASSERT_TRUE(t_->Delete({keys}).ok());
    }
  }
  // Each filter's bits were computed once per source (5 filters, 2 sources; the MemTable grew
  // by the tombstones, so its bits were extended once per filter).
  EXPECT_GE(FilterBitsCache::Global().stats().builds - builds, 10);
  EXPECT_LE(FilterBitsCache::Global().stats().builds - builds, 15);
}

// A row the filter cannot evaluate that no search reaches (here deleted: an int64 overflow)
// must not make a repeated filter fail once its bits are computed (a break test got a 400 on
// every other query): the search goes on without bits, as it does uncached.
TEST_F(FilterBitsCacheTest, ARowNoSearchReachesDoesNotFailARepeatedEvaluatedFilter) {
  FilterBitsCache::Global().SetBudget(int64_t{64} << 20);
  Insert(0, 100);  // tags 0..999: tag * 10^12 fits int64
  std::vector<int64_t> ids;
  std::vector<std::optional<int64_t>> tags, dead;
  std::vector<std::vector<float>> vecs;
  for (int64_t i = 0; i < 10; ++i) {
    ids.push_back(1000 + i);
    tags.push_back(2000000000);  // * 10^12 overflows
    vecs.push_back(std::vector<float>(kDim, 1.0f));
    dead.push_back(1000 + i);
  }
  InsertRows(ids, tags, vecs);
  DeleteIds(dead);
  const std::vector<float> q(kDim, 0.5f);
  auto truth = Search(q, "tag * 1000000000000 > 5", std::nullopt, /*exact=*/true);
  ASSERT_TRUE(truth.ok()) << truth.status().ToString();
  for (int i = 0; i < 4; ++i) {
    auto got = Search(q, "tag * 1000000000000 > 5", std::nullopt);
    ASSERT_TRUE(got.ok()) << "search " << i << ": " << got.status().ToString();
    EXPECT_EQ(Ids(*got), Ids(*truth)) << "search " << i;
  }
}

// A filter anti-correlated with the query (tag = the row's cluster; queries near clusters
// that fail it): the walk's tested rows pass far less often than the source's, so the exact
// plan answers (a break test had recall@10 0.75 for `tag % 5 = 3` once its bits were cached).
TEST_F(FilterBitsCacheTest, AnAntiCorrelatedFilterKeepsItsRecall) {
  FilterBitsCache::Global().SetBudget(int64_t{64} << 20);
  std::mt19937_64 rng(123);
  std::uniform_real_distribution<float> u(0, 10), jitter(-0.5f, 0.5f);
  std::vector<std::vector<float>> centres(20, std::vector<float>(kDim));
  for (auto& c : centres) {
    for (float& x : c) x = u(rng);
  }
  for (int64_t first = 0; first < 20000; first += 5000) {
    std::vector<int64_t> ids;
    std::vector<std::optional<int64_t>> tags;
    std::vector<std::vector<float>> vecs;
    for (int64_t i = first; i < first + 5000; ++i) {
      ids.push_back(i);
      tags.push_back(i % 20);
      std::vector<float> v = centres[static_cast<size_t>(i % 20)];
      for (float& x : v) x += jitter(rng);
      vecs.push_back(v);
    }
    InsertRows(ids, tags, vecs);
  }
  Flush();
  ASSERT_TRUE(t_->Compact(Clock::now() + std::chrono::minutes(2)).ok());
  for (const std::string f :
       {"tag % 5 = 3", "tag = 3 OR tag = 4 OR tag = 5 OR tag = 6", "tag IN (3, 4, 5, 6)"}) {
    SCOPED_TRACE(f);
    int64_t hit = 0, total = 0;
    for (int t = 0; t < 15; ++t) {
      std::vector<float> q = centres[static_cast<size_t>(t % 3)];  // clusters 0-2 fail
      for (float& x : q) x += jitter(rng);
      auto truth = Search(q, f, std::nullopt, /*exact=*/true);
      ASSERT_TRUE(truth.ok());
      const std::vector<int64_t> w = Ids(*truth);
      const std::set<int64_t> want(w.begin(), w.end());
      for (int rep = 0; rep < 3; ++rep) {  // the third runs on cached bits
        auto got = Search(q, f, std::nullopt);
        ASSERT_TRUE(got.ok());
        if (rep < 2) continue;
        for (int64_t id : Ids(*got)) hit += want.count(id);
        total += static_cast<int64_t>(w.size());
      }
    }
    const double recall = static_cast<double>(hit) / static_cast<double>(total);
    std::printf("[figures] anti-correlated %s: recall@10 %.3f\n", f.c_str(), recall);
    // Without the guard these were 0.75 (OR, %) and 0.78-0.82 (IN); with it 1.000, or
    // 0.947-0.967 for IN / OR in 5 of 25 runs under CPU load (a different graph walk), so the
    // bound sits between the two.
    EXPECT_GE(recall, 0.90);
  }
}

// Bits count dead rows too: once updates moved all but 30 rows off `tag = 5`, the plan must
// see 30 passing rows, not the 10,000 the bits hold (a break test got the graph walk, which
// spent its budget, at 1.6x the time of the exact plan).
TEST_F(FilterBitsCacheTest, ThePlanSeesLiveRowsNotTheBitsCount) {
  FilterBitsCache::Global().SetBudget(int64_t{64} << 20);
  const auto rows = [](int64_t moved_from) {  // ids 0..19999, odd ids tag 5 (or 6 once moved)
    std::vector<int64_t> ids;
    std::vector<std::optional<int64_t>> tags;
    std::vector<std::vector<float>> vecs;
    for (int64_t i = 0; i < 20000; ++i) {
      if (moved_from >= 0 && (i % 2 == 0 || i < moved_from)) continue;
      ids.push_back(i);
      tags.push_back(i % 2 == 1 ? (moved_from >= 0 ? 6 : 5) : 1);
      std::vector<float> v(kDim);
      for (int d = 0; d < kDim; ++d) v[d] = static_cast<float>((i * (d + 3)) % 97) / 10.0f;
      vecs.push_back(v);
    }
    return std::make_tuple(ids, tags, vecs);
  };
  {
    auto [ids, tags, vecs] = rows(-1);
    InsertRows(ids, tags, vecs);
  }
  Flush();
  ASSERT_TRUE(t_->Compact(Clock::now() + std::chrono::minutes(2)).ok());
  {
    auto [ids, tags, vecs] = rows(60);  // odd ids from 60 up move to tag 6: 30 stay at 5
    InsertRows(ids, tags, vecs);
  }
  const std::vector<float> q(kDim, 3.0f);
  auto truth = Search(q, "tag = 5", std::nullopt, /*exact=*/true);
  ASSERT_TRUE(truth.ok());
  ASSERT_EQ(Ids(*truth).size(), 10u);
  for (int i = 0; i < 3; ++i) {
    auto got = Search(q, "tag = 5", std::nullopt);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(Ids(*got), Ids(*truth));
    if (i == 2) {
      const std::string& base_plan = got->plan.front();
      EXPECT_NE(base_plan.find("from cached filter bits"), std::string::npos) << base_plan;
      EXPECT_EQ(base_plan.rfind("base: exact", 0), 0u) << base_plan;
    }
  }
}

// Readers searching with repeated filters while a writer grows the MemTable (run under TSan by
// `make tsan`): bits get computed, extended and hit from several threads, and every row a
// search returns passes its filter (tag is a function of id, see Insert).
TEST_F(FilterBitsCacheTest, ConcurrentSearchesWhileTheMemTableGrows) {
  FilterBitsCache::Global().SetBudget(int64_t{64} << 20);
  Insert(0, 2000);
  Flush();
  Insert(2000, 1000);
  std::atomic<bool> done{false};
  std::atomic<int64_t> searches{0}, wrong{0}, errors{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      const char* filters[] = {"tag < 500", "tag < 20", "tag = 7"};
      for (int i = 0; !done.load() || i < 20; ++i) {
        std::vector<float> q(kDim);
        for (int d = 0; d < kDim; ++d) q[d] = static_cast<float>((i + r) % 20 * (d % 3));
        const std::string f = filters[(i + r) % 3];
        const int64_t limit = f == "tag < 500" ? 500 : f == "tag < 20" ? 20 : -1;
        auto got = Search(q, f, std::nullopt);
        if (!got.ok()) {
          ++errors;
          continue;
        }
        for (int64_t id : Ids(*got)) {
          const int64_t tag = (id * 7919) % 1000;
          const bool passes = id % 97 != 3 && (limit < 0 ? tag == 7 : tag < limit);
          wrong += !passes;
        }
        ++searches;
      }
    });
  }
  for (int b = 0; b < 15; ++b) Insert(3000 + 300 * b, 300);
  done = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(searches.load(), 60);
  EXPECT_GT(FilterBitsCache::Global().stats().hits, 0);
}

}  // namespace
}  // namespace strata::query
