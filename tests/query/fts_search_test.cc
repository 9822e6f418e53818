// Full-text search over shard sources (fts_search.h): per-source or temporary inverted
// indexes, BM25 with statistics over the live rows of all sources, liveness, filters, errors.
#include "query/fts_search.h"
#include "query/source_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "../io/storage_test_util.h"
#include "io/local_object_store.h"
#include "query/query_result.h"
#include "tier_test_util.h"

namespace strata::query {
namespace {

using testing::FlushTable;
using testing::FtsSpec;
using testing::HandSnapshot;
using testing::HandSource;
using testing::Ids;
using testing::NumericColumn;
using testing::PlanSays;
using testing::TierBatch;
using testing::TierRow;
using testing::TierSchema;
using testing::WaitForIndexes;

TierRow Doc(int64_t id, const char* text) { return {id, std::string(text), std::nullopt}; }

// The corpus: no stop words, so a document's length is its word count.
const std::vector<TierRow>& Corpus() {
  static const std::vector<TierRow> docs = {Doc(1, "apple banana"), Doc(2, "apple cherry cherry"),
                                            Doc(3, "banana date"), Doc(4, "kiwi")};
  return docs;
}

std::map<int64_t, double> ScoresById(const QueryResult& r) {
  std::map<int64_t, double> out;
  const auto ids = Ids(*r.batches[0]);
  const auto scores = NumericColumn(*r.batches[0], kScoreColumn);
  for (size_t i = 0; i < ids.size(); ++i) out[ids[i]] = scores[i];
  return out;
}

FtsSearchOptions Match(const std::string& text, bool all = false) {
  FtsSearchOptions o;
  o.query.kind = index::FtsQuery::Kind::kMatch;
  o.query.text = text;
  o.query.require_all = all;
  return o;
}

// Hand-computed BM25 (k1 1.2, b 0.75, idf ln(1 + (N - df + 0.5) / (df + 0.5))).
double Bm25(int64_t n, int64_t df, int64_t tf, int64_t len, double avgdl) {
  const double idf = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
  return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len / avgdl));
}

TEST(FtsSearchTest, ScoresAreBm25OverAllLiveSourcesWhateverTierHoldsTheRow) {
  auto schema = TierSchema(2);
  auto spec = FtsSpec("text");
  const auto& c = Corpus();
  // A: one indexed source. B: split, the newer source without the index (temporary index).
  // C: as B plus a superseded copy and a dead document that must not count in the statistics.
  const auto a = HandSnapshot(schema, {{"sstable gen 1", false, c, {}, {spec}}}, {spec});
  const auto b = HandSnapshot(schema,
                              {{"sstable gen 1", false, {c[0], c[1]}, {}, {spec}},
                               {"memtable gen 2 (active)", true, {c[2], c[3]}, {}, {}}},
                              {spec});
  const auto cc =
      HandSnapshot(schema,
                   {{"sstable gen 1",
                     false,
                     {Doc(3, "cherry cherry cherry cherry"), c[0], c[1], Doc(9, "cherry kiwi")},
                     {false, true, true, false},
                     {spec}},
                    {"memtable gen 2 (frozen)", true, {c[2]}, {}, {spec}},
                    {"memtable gen 3 (active)", true, {c[3]}, {}, {}}},
                   {spec});
  for (const char* q : {"cherry", "apple banana", "Kiwi date"}) {
    SCOPED_TRACE(q);
    auto ra = FtsSearch(a, Match(q));
    auto rb = FtsSearch(b, Match(q));
    auto rc = FtsSearch(cc, Match(q));
    ASSERT_TRUE(ra.ok()) << ra.status().ToString();
    ASSERT_TRUE(rb.ok()) << rb.status().ToString();
    ASSERT_TRUE(rc.ok()) << rc.status().ToString();
    const auto sa = ScoresById(*ra);
    EXPECT_FALSE(sa.empty());
    EXPECT_EQ(sa, ScoresById(*rb));
    EXPECT_EQ(sa, ScoresById(*rc));
    EXPECT_EQ(Ids(*ra->batches[0]), Ids(*rc->batches[0]));
  }
  // N = 4 documents, 8 tokens (avgdl 2). "cherry": df 1, doc 2 has tf 2 and length 3.
  auto r = FtsSearch(b, Match("cherry"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Ids(*r->batches[0]), (std::vector<int64_t>{2}));
  EXPECT_NEAR(NumericColumn(*r->batches[0], kScoreColumn)[0], Bm25(4, 1, 2, 3, 2.0), 1e-5);
  // "apple banana": docs 1 (both terms, length 2), 2 (apple, length 3), 3 (banana, length 2).
  auto ab = FtsSearch(cc, Match("apple banana"));
  ASSERT_TRUE(ab.ok());
  EXPECT_EQ(Ids(*ab->batches[0]), (std::vector<int64_t>{1, 3, 2}));
  const auto s = NumericColumn(*ab->batches[0], kScoreColumn);
  EXPECT_NEAR(s[0], 2 * Bm25(4, 2, 1, 2, 2.0), 1e-5);
  EXPECT_NEAR(s[1], Bm25(4, 2, 1, 2, 2.0), 1e-5);
  EXPECT_NEAR(s[2], Bm25(4, 2, 1, 3, 2.0), 1e-5);
  EXPECT_EQ(ab->batches[0]->schema()->field(3)->name, kScoreColumn);
  EXPECT_EQ(ab->batches[0]->schema()->field(3)->type->id(), arrow::TypeId::kFloat32);
  // Plans: the complete indexes, and the temporary one for the active MemTable.
  EXPECT_TRUE(PlanSays(ab->plan, "sstable gen 1", "FTS 'text_idx' on 'text', 2 matches"))
      << ab->plan[0];
  EXPECT_TRUE(PlanSays(ab->plan, "memtable gen 3 (active)", "temporary index over 1 rows"))
      << ab->plan[2];
}

// Rows written before the index exists (no source index: a temporary one) and after.
TEST(FtsSearchTest, FindsRowsWrittenBeforeAndAfterCreateIndex) {
  auto schema = TierSchema(2);
  auto spec = FtsSpec("text");
  const auto snap = HandSnapshot(
      schema,
      {{"sstable gen 1", false, {Doc(1, "Running shoes"), Doc(2, "a café in town")}, {}, {}},
       {"memtable gen 2 (active)", true, {Doc(3, "run fast"), Doc(4, "the cafe")}, {}, {spec}}},
      {spec});
  auto run = FtsSearch(snap, Match("run"));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  auto ids = Ids(*run->batches[0]);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<int64_t>{1, 3}));  // "Running" stems to "run"
  auto cafe = FtsSearch(snap, Match("CAFE"));
  ASSERT_TRUE(cafe.ok());
  ids = Ids(*cafe->batches[0]);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<int64_t>{2, 4}));  // ascii folding
  EXPECT_TRUE(PlanSays(cafe->plan, "sstable gen 1", "temporary index over 2 rows"));
  EXPECT_FALSE(PlanSays(cafe->plan, "memtable gen 2 (active)", "temporary"));
}

TEST(FtsSearchTest, FilterOperatorsPhraseOffsetAndRowId) {
  auto schema = TierSchema(2);
  auto spec = FtsSpec("text", /*with_position=*/true);
  const auto snap = HandSnapshot(
      schema,
      {{"sstable gen 1",
        false,
        {Doc(1, "big red cat"), Doc(2, "red big cat"), Doc(3, "big dog")},
        {true, true, true},
        {spec},
        1 << 30,
        100},
       {"memtable gen 2 (active)", true, {Doc(4, "big cat"), Doc(5, "cat")}, {}, {}, 1 << 30, 103}},
      {spec});
  auto sorted_ids = [](const QueryResult& r) {
    auto ids = Ids(*r.batches[0]);
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  auto any = FtsSearch(snap, Match("big cat"));
  ASSERT_TRUE(any.ok()) << any.status().ToString();
  EXPECT_EQ(sorted_ids(*any), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  auto all = FtsSearch(snap, Match("big cat", true));
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(sorted_ids(*all), (std::vector<int64_t>{1, 2, 4}));
  FtsSearchOptions phrase = Match("big cat");
  phrase.query.kind = index::FtsQuery::Kind::kPhrase;
  auto ph = FtsSearch(snap, phrase);
  ASSERT_TRUE(ph.ok()) << ph.status().ToString();
  EXPECT_EQ(sorted_ids(*ph), (std::vector<int64_t>{2, 4}));
  // Filter + row ids (_rowid = generation << 32 | position: id 4 is row 0 of generation 2).
  FtsSearchOptions f = Match("cat");
  f.filter = "id = 4";
  f.with_row_id = true;
  f.columns_out = {{"text", "t"}};
  auto fr = FtsSearch(snap, f);
  ASSERT_TRUE(fr.ok()) << fr.status().ToString();
  ASSERT_EQ(fr->num_rows, 1);
  EXPECT_EQ(fr->batches[0]->schema()->field(0)->name, "t");
  EXPECT_EQ(arrow::Array(fr->batches[0]->column(0)).GetView(0), "big cat");
  EXPECT_EQ(NumericColumn(*fr->batches[0], kRowIdColumn),
            (std::vector<double>{static_cast<double>(EncodeRowId(2, 0))}));
  // Offset and k: the ranking of the OR query, shifted by one.
  FtsSearchOptions page = Match("big cat");
  page.k = 2;
  page.offset = 1;
  auto pr = FtsSearch(snap, page);
  ASSERT_TRUE(pr.ok());
  const auto full = Ids(*any->batches[0]);
  EXPECT_EQ(Ids(*pr->batches[0]), (std::vector<int64_t>{full[1], full[2]}));
  // k larger than the matches returns every match.
  FtsSearchOptions big = Match("big cat");
  big.k = std::numeric_limits<int64_t>::max();
  auto br = FtsSearch(snap, big);
  ASSERT_TRUE(br.ok());
  EXPECT_EQ(Ids(*br->batches[0]), full);
  // Only stop words: no match, no error.
  auto stop = FtsSearch(snap, Match("the and of"));
  ASSERT_TRUE(stop.ok()) << stop.status().ToString();
  EXPECT_EQ(stop->num_rows, 0);
}

TEST(FtsSearchTest, Errors) {
  auto schema = TierSchema(2);
  const auto no_fts = HandSnapshot(schema, {{"sstable gen 1", false, Corpus(), {}, {}}}, {});
  auto spec = FtsSpec("text");
  const auto fts = HandSnapshot(schema, {{"sstable gen 1", false, Corpus(), {}, {spec}}}, {spec});
  struct Case {
    const table::TableSnapshot* snap;
    FtsSearchOptions options;
    const char* needle;
  };
  FtsSearchOptions phrase = Match("apple banana");
  phrase.query.kind = index::FtsQuery::Kind::kPhrase;
  FtsSearchOptions on_id = Match("apple");
  on_id.columns = {"id"};
  FtsSearchOptions on_missing = Match("apple");
  on_missing.columns = {"nope"};
  FtsSearchOptions k0 = Match("apple");
  k0.k = 0;
  FtsSearchOptions bad_projection = Match("apple");
  bad_projection.columns_out = {{"nope", ""}};
  for (const Case& c : {
           Case{&no_fts, Match("apple"), "no FTS index"},
           Case{&fts, Match("   "), "query text is empty"},
           Case{&fts, phrase, "with_position"},
           Case{&fts, on_id, "column 'id' has no FTS index"},
           Case{&fts, on_missing, "'nope' is not in the table schema"},
           Case{&fts, k0, "k must be >= 1"},
           Case{&fts, bad_projection, "nope"},
       }) {
    auto r = FtsSearch(*c.snap, c.options);
    ASSERT_FALSE(r.ok()) << c.needle;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.needle), std::string::npos) << r.status().ToString();
  }
}

// --- Through the real stack: table::LocalTable over a local object store. ---

std::shared_ptr<table::LocalTable> MakeTable(const strata::testing::TempDir& dir,
                                             int64_t memtable_rows = 1000) {
  auto store = io::LocalObjectStore::Open(dir.path());
  EXPECT_TRUE(store.ok());
  shard::ShardWriterOptions o;
  o.max_memtable_rows = memtable_rows;
  auto t = table::LocalTable::Create(*store, "default/t", "t", TierSchema(2), {}, o);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : nullptr;
}

std::vector<int64_t> SortedIds(const QueryResult& r) {
  auto ids = Ids(*r.batches[0]);
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(FtsSearchRealTest, RowsWrittenBeforeCreateIndexAndAfterAreFound) {
  strata::testing::TempDir dir;
  auto t = MakeTable(dir, /*memtable_rows=*/3);
  ASSERT_NE(t, nullptr);
  // Before the index: two SSTables' worth and a MemTable.
  ASSERT_TRUE(t->Insert({TierBatch(t->schema(), {Doc(1, "Running shoes"), Doc(2, "red apple"),
                                                 Doc(3, "green apple")})})
                  .ok());
  FlushTable(*t);
  ASSERT_TRUE(t->Insert({TierBatch(t->schema(), {Doc(4, "running late")})}).ok());
  ASSERT_TRUE(t->CreateIndex(FtsSpec("text")).ok());
  // Whether or not the background build finished, the rows are found.
  auto before = FtsSearch(t->Snapshot(), Match("run"));
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_EQ(SortedIds(*before), (std::vector<int64_t>{1, 4}));
  // After: new rows are indexed on insert.
  ASSERT_TRUE(t->Insert({TierBatch(t->schema(), {Doc(5, "he runs"), Doc(6, "apple pie")})}).ok());
  auto after = FtsSearch(t->Snapshot(), Match("run"));
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(SortedIds(*after), (std::vector<int64_t>{1, 4, 5}));
  ASSERT_TRUE(WaitForIndexes(*t));
  auto done = FtsSearch(t->Snapshot(), Match("apple"));
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(SortedIds(*done), (std::vector<int64_t>{2, 3, 6}));
  for (const auto& line : done->plan) {
    EXPECT_EQ(line.find("temporary"), std::string::npos) << line;  // every source indexed now
  }
}

// The same rows score the same whether they sit in SSTables or in the MemTable, and updated
// or deleted rows neither match nor count in the statistics.
TEST(FtsSearchRealTest, ScoreDoesNotDependOnTheTier) {
  const std::vector<TierRow> docs = {Doc(1, "the quick brown fox"), Doc(2, "a lazy brown dog"),
                                     Doc(3, "quick quick fox jumps"), Doc(4, "nothing here")};
  strata::testing::TempDir d1, d2;
  auto flushed = MakeTable(d1);
  auto fresh = MakeTable(d2);
  ASSERT_NE(flushed, nullptr);
  ASSERT_NE(fresh, nullptr);
  for (auto* t : {flushed.get(), fresh.get()}) {
    ASSERT_TRUE(t->CreateIndex(FtsSpec("text")).ok());
    ASSERT_TRUE(t->Insert({TierBatch(t->schema(), {docs[0], docs[1]})}).ok());
    ASSERT_TRUE(t->Insert({TierBatch(t->schema(), {docs[2], docs[3]})}).ok());
  }
  FlushTable(*flushed);
  ASSERT_TRUE(WaitForIndexes(*flushed));
  ASSERT_TRUE(WaitForIndexes(*fresh));
  EXPECT_EQ(flushed->DescribeShards()[0].sstables.size(), 1u);
  EXPECT_TRUE(fresh->DescribeShards()[0].sstables.empty());
  for (const char* q : {"quick fox", "brown", "lazy dog jumps"}) {
    SCOPED_TRACE(q);
    auto a = FtsSearch(flushed->Snapshot(), Match(q));
    auto b = FtsSearch(fresh->Snapshot(), Match(q));
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_FALSE(ScoresById(*a).empty());
    EXPECT_EQ(ScoresById(*a), ScoresById(*b));
    EXPECT_EQ(Ids(*a->batches[0]), Ids(*b->batches[0]));
  }
  // A delete in the MemTable over a flushed row: the row is gone, and the remaining scores
  // equal those of a table that never had it.
  auto keys = std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(
          std::vector<arrow::FieldPtr>{arrow::field("_rowid", arrow::uint64(), false)}),
      1, std::vector<arrow::ArrayDataPtr>{memtable::MakeRowIdArray(2, 1)});  // doc 3
  ASSERT_TRUE(flushed->Delete({keys}).ok());
  strata::testing::TempDir d3;
  auto without = MakeTable(d3);
  ASSERT_TRUE(without->CreateIndex(FtsSpec("text")).ok());
  ASSERT_TRUE(without->Insert({TierBatch(without->schema(), {docs[0], docs[1], docs[3]})}).ok());
  ASSERT_TRUE(WaitForIndexes(*without));
  auto a = FtsSearch(flushed->Snapshot(), Match("quick fox"));
  auto b = FtsSearch(without->Snapshot(), Match("quick fox"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(SortedIds(*a), (std::vector<int64_t>{1}));
  EXPECT_EQ(ScoresById(*a), ScoresById(*b));
}

}  // namespace
}  // namespace strata::query
