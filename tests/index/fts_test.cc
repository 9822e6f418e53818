#include <gtest/gtest.h>
#include <xxhash.h>

#include <atomic>
#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "arrow/builder.h"
#include "index/fts/bm25.h"
#include "index/fts/inverted_index.h"

namespace strata::index {
namespace {

using arrow::Array;

Array Utf8(const std::vector<std::optional<std::string>>& v) {
  return Array(arrow::MakeUtf8Array(v));
}

std::unique_ptr<InvertedIndex> Build(const std::vector<std::optional<std::string>>& docs,
                                     FtsParams params = FtsParams(), int64_t first = 0) {
  auto idx = InvertedIndex::Make(params);
  EXPECT_TRUE(idx.ok()) << idx.status().ToString();
  EXPECT_TRUE((*idx)->AddColumn(Utf8(docs), first).ok());
  return std::move(idx).value();
}

FtsQuery Match(std::string text, bool all = false) {
  FtsQuery q;
  q.text = std::move(text);
  q.require_all = all;
  return q;
}
FtsQuery Phrase(std::string text) {
  FtsQuery q;
  q.kind = FtsQuery::Kind::kPhrase;
  q.text = std::move(text);
  return q;
}

// Search with the index's own statistics.
std::vector<ScoredDoc> Query(const InvertedIndex& idx, const FtsQuery& q, int64_t limit = -1) {
  auto r = idx.Search(q, idx.Stats(idx.QueryTerms(q)), limit);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<ScoredDoc>{};
}
std::vector<int64_t> Positions(const std::vector<ScoredDoc>& docs) {
  std::vector<int64_t> p;
  for (const auto& d : docs) p.push_back(d.position);
  return p;
}
std::vector<int64_t> Sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Hand-computed BM25 term score with k1 = 1.2, b = 0.75.
double Term(double idf, double tf, double len, double avgdl) {
  return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len / avgdl));
}

TEST(Bm25Test, FormulaValues) {
  // N = 10, df = 3: ln(1 + 7.5 / 3.5)
  EXPECT_DOUBLE_EQ(Bm25Idf(10, 3), std::log(1.0 + 7.5 / 3.5));
  EXPECT_DOUBLE_EQ(Bm25Idf(0, 0), 0.0);
  // df = N still gives a positive idf: ln(1 + 0.5 / 10.5)
  EXPECT_DOUBLE_EQ(Bm25Idf(10, 10), std::log(1.0 + 0.5 / 10.5));
  // idf 2, tf 3, |d| 10, avgdl 5: 2 * 3 * 2.2 / (3 + 1.2 * (0.25 + 0.75 * 2))
  EXPECT_DOUBLE_EQ(Bm25TermScore(2.0, 3, 10, 5.0), 2.0 * 3 * 2.2 / (3 + 1.2 * (0.25 + 1.5)));
  EXPECT_DOUBLE_EQ(Bm25TermScore(2.0, 0, 10, 5.0), 0.0);
  // avgdl 0: the length ratio counts as 1 -> 2 * 1 * 2.2 / (1 + 1.2)
  EXPECT_DOUBLE_EQ(Bm25TermScore(2.0, 1, 0, 0.0), 2.0);

  Bm25Stats a;
  a.num_docs = 3;
  a.total_tokens = 12;
  a.doc_freq = {{"x", 1}, {"y", 2}};
  Bm25Stats b;
  b.num_docs = 2;
  b.total_tokens = 3;
  b.doc_freq = {{"x", 2}, {"z", 1}};
  a.Merge(b);
  EXPECT_EQ(a.num_docs, 5);
  EXPECT_EQ(a.total_tokens, 15);
  EXPECT_EQ(a.doc_freq["x"], 3);
  EXPECT_EQ(a.doc_freq["y"], 2);
  EXPECT_EQ(a.doc_freq["z"], 1);
  EXPECT_DOUBLE_EQ(a.avg_doc_len(), 3.0);
  EXPECT_DOUBLE_EQ(Bm25Stats().avg_doc_len(), 0.0);
}

// The 5-document corpus (after stemming: apple -> appl, cherry -> cherri):
//   d0 "apple banana apple"        appl:2 banana:1          |d| = 3
//   d1 "banana cherry"             banana:1 cherri:1        |d| = 2
//   d2 "cherry cherry cherry date" cherri:3 date:1          |d| = 4
//   d3 "the apple"                 appl:1 ("the" dropped)   |d| = 1
//   d4 "date fig grape kiwi"       4 terms                  |d| = 4
// N = 5, total = 14, avgdl = 14 / 5 = 2.8.
const std::vector<std::optional<std::string>> kCorpus = {"apple banana apple", "banana cherry",
                                                         "cherry cherry cherry date", "the apple",
                                                         "date fig grape kiwi"};

TEST(FtsIndexTest, Bm25ScoresMatchHandComputedValues) {
  auto idx = Build(kCorpus);
  EXPECT_EQ(idx->num_docs(), 5);

  const Bm25Stats s = idx->Stats({"appl", "banana", "cherri", "zzz"});
  EXPECT_EQ(s.num_docs, 5);
  EXPECT_EQ(s.total_tokens, 14);
  EXPECT_EQ(s.doc_freq.at("appl"), 2);
  EXPECT_EQ(s.doc_freq.at("banana"), 2);
  EXPECT_EQ(s.doc_freq.at("cherri"), 2);
  EXPECT_EQ(s.doc_freq.at("zzz"), 0);

  // "apple": df 2 -> idf = ln(1 + (5 - 2 + 0.5) / (2 + 0.5)) = ln(2.4).
  const double idf2 = std::log(1.0 + 3.5 / 2.5);
  auto apple = Query(*idx, Match("apple"));
  ASSERT_EQ(apple.size(), 2u);
  // d3 (tf 1, |d| 1) scores just above d0 (tf 2, |d| 3).
  EXPECT_EQ(apple[0].position, 3);
  EXPECT_NEAR(apple[0].score, Term(idf2, 1, 1, 2.8), 1e-5);
  EXPECT_EQ(apple[1].position, 0);
  EXPECT_NEAR(apple[1].score, Term(idf2, 2, 3, 2.8), 1e-5);

  // "banana cherry" (OR): both df 2.
  auto bc = Query(*idx, Match("banana cherry"));
  ASSERT_EQ(bc.size(), 3u);
  const double d1 = Term(idf2, 1, 2, 2.8) + Term(idf2, 1, 2, 2.8);
  const double d2 = Term(idf2, 3, 4, 2.8);
  const double d0 = Term(idf2, 1, 3, 2.8);
  EXPECT_EQ(Positions(bc), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_NEAR(bc[0].score, d1, 1e-5);
  EXPECT_NEAR(bc[1].score, d2, 1e-5);
  EXPECT_NEAR(bc[2].score, d0, 1e-5);

  // "kiwi": df 1 -> idf = ln(1 + 4.5 / 1.5) = ln(4); d4 tf 1, |d| 4.
  auto kiwi = Query(*idx, Match("kiwi"));
  ASSERT_EQ(kiwi.size(), 1u);
  EXPECT_NEAR(kiwi[0].score, Term(std::log(4.0), 1, 4, 2.8), 1e-5);

  // Caller-supplied statistics (e.g. several tiers): N = 50, total = 100 (avgdl 2), df 10.
  Bm25Stats global;
  global.num_docs = 50;
  global.total_tokens = 100;
  global.doc_freq["kiwi"] = 10;
  auto r = idx->Search(Match("kiwi"), global, -1);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_NEAR((*r)[0].score, Term(std::log(1.0 + 40.5 / 10.5), 1, 4, 2.0), 1e-5);

  // limit keeps the best.
  EXPECT_EQ(Positions(Query(*idx, Match("banana cherry"), 1)), (std::vector<int64_t>{1}));
  EXPECT_TRUE(Query(*idx, Match("banana cherry"), 0).empty());
}

TEST(FtsIndexTest, StatsWithLiveFilter) {
  auto idx = Build(kCorpus, FtsParams(), 100);  // positions 100..104
  auto live = [](int64_t pos) { return pos != 100 && pos != 102; };
  const Bm25Stats s = idx->Stats({"appl", "cherri", "date"}, live);
  EXPECT_EQ(s.num_docs, 3);               // d1, d3, d4
  EXPECT_EQ(s.total_tokens, 2 + 1 + 4);   // their lengths
  EXPECT_EQ(s.doc_freq.at("appl"), 1);    // d3
  EXPECT_EQ(s.doc_freq.at("cherri"), 1);  // d1
  EXPECT_EQ(s.doc_freq.at("date"), 1);    // d4
  // accept filters results the same way.
  auto r = idx->Search(Match("apple cherry"), s, -1, live);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Sorted(Positions(*r)), (std::vector<int64_t>{101, 103}));
}

// StatsBelow (the all-live fast path) equals Stats with a "position < end" liveness test.
TEST(FtsIndexTest, StatsBelowMatchesStatsWithPositionFilter) {
  auto idx = Build(kCorpus, FtsParams(), 100);  // positions 100..104
  const std::vector<std::string> terms = {"appl", "banana", "cherri", "date"};
  for (int64_t end : {100, 102, 103, 105, 200}) {
    const Bm25Stats fast = idx->StatsBelow(terms, end);
    const Bm25Stats slow = idx->Stats(terms, [end](int64_t pos) { return pos < end; });
    EXPECT_EQ(fast.num_docs, slow.num_docs) << end;
    EXPECT_EQ(fast.total_tokens, slow.total_tokens) << end;
    EXPECT_EQ(fast.doc_freq, slow.doc_freq) << end;
  }
  EXPECT_EQ(idx->StatsBelow(terms, 103).num_docs, 3);  // d0, d1, d2
  EXPECT_EQ(idx->StatsBelow(terms, 105).num_docs, 5);
}

TEST(FtsIndexTest, StemmingAndFolding) {
  auto idx = Build({"He was running fast", "cafe au lait", "un café noir", "a run"});
  EXPECT_EQ(Sorted(Positions(Query(*idx, Match("run")))), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(Sorted(Positions(Query(*idx, Match("Running")))), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(Sorted(Positions(Query(*idx, Match("cafe")))), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Sorted(Positions(Query(*idx, Match("CAFÉ")))), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Sorted(Positions(Query(*idx, Match("cafe\xCC\x81")))), (std::vector<int64_t>{1, 2}));
}

TEST(FtsIndexTest, StopWordsAreNotIndexed) {
  auto idx = Build({"the cat", "a dog and the bird", "the"});
  EXPECT_TRUE(Query(*idx, Match("the")).empty());
  EXPECT_TRUE(Query(*idx, Match("the and a")).empty());
  EXPECT_TRUE(idx->QueryTerms(Match("the a")).empty());
  EXPECT_EQ(idx->QueryTerms(Match("The cats")), (std::vector<std::string>{"cat"}));
  const Bm25Stats s = idx->Stats({"the"});
  EXPECT_EQ(s.doc_freq.at("the"), 0);
  EXPECT_EQ(s.num_docs, 3);      // "the" alone is still a (non-null) document
  EXPECT_EQ(s.total_tokens, 3);  // cat, dog, bird
  // With remove_stop_words off they are indexed.
  FtsParams p;
  p.remove_stop_words = false;
  auto idx2 = Build({"the cat", "a dog"}, p);
  EXPECT_EQ(Positions(Query(*idx2, Match("the"))), (std::vector<int64_t>{0}));
}

TEST(FtsIndexTest, AndVersusOr) {
  auto idx = Build({"red apple", "green apple", "red car", "blue sky"});
  EXPECT_EQ(Sorted(Positions(Query(*idx, Match("red apple")))), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(Positions(Query(*idx, Match("red apple", true))), (std::vector<int64_t>{0}));
  // A term absent from the index: OR ignores it, AND matches nothing.
  EXPECT_EQ(Sorted(Positions(Query(*idx, Match("red zebra")))), (std::vector<int64_t>{0, 2}));
  EXPECT_TRUE(Query(*idx, Match("red zebra", true)).empty());
  // Repeated terms count once.
  EXPECT_EQ(Positions(Query(*idx, Match("sky sky", true))), (std::vector<int64_t>{3}));
}

TEST(FtsIndexTest, PhraseMatchesOnlyAdjacentTerms) {
  FtsParams p;
  p.with_position = true;
  auto idx = Build({"the quick brown fox", "brown quick fox", "quick the brown", "quick and brown",
                    "a quick brown dog and quick brown fox"},
                   p);
  EXPECT_EQ(Sorted(Positions(Query(*idx, Phrase("quick brown")))), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(Sorted(Positions(Query(*idx, Phrase("brown fox")))), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(Sorted(Positions(Query(*idx, Phrase("Quick Brown Fox")))),
            (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(Query(*idx, Phrase("fox brown")).empty());
  EXPECT_TRUE(Query(*idx, Phrase("brown dog fox")).empty());
  // The dropped word keeps its slot in the query as in the document.
  EXPECT_EQ(Sorted(Positions(Query(*idx, Phrase("quick the brown")))),
            (std::vector<int64_t>{2, 3}));
  // Match (not phrase) finds all of them.
  EXPECT_EQ(Query(*idx, Match("quick brown", true)).size(), 5u);
  // One-word phrase = term query.
  EXPECT_EQ(Query(*idx, Phrase("dog")).size(), 1u);

  auto no_pos = Build({"quick brown"});
  auto r = no_pos->Search(Phrase("quick brown"), Bm25Stats(), -1);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalid());
  EXPECT_NE(r.status().message().find("with_position"), std::string::npos);
}

TEST(FtsIndexTest, MaxTokenLengthDropsLongTokens) {
  FtsParams p;
  p.max_token_length = 6;
  auto idx = Build({"short supercalifragilistic words", "tiny"}, p);
  EXPECT_TRUE(Query(*idx, Match("supercalifragilistic")).empty());
  EXPECT_EQ(Positions(Query(*idx, Match("short"))), (std::vector<int64_t>{0}));
  EXPECT_EQ(idx->Stats({}).total_tokens, 3);  // short, word, tiny
}

TEST(FtsIndexTest, NullsSkippedAndTypesChecked) {
  auto idx = Build({"alpha", std::nullopt, "alpha beta"}, FtsParams(), 10);
  EXPECT_EQ(idx->num_docs(), 2);
  EXPECT_EQ(Sorted(Positions(Query(*idx, Match("alpha")))), (std::vector<int64_t>{10, 12}));

  arrow::ArrayBuilder lb(arrow::large_utf8());
  ASSERT_TRUE(lb.AppendBytes("gamma alpha").ok());
  auto large = lb.Finish();
  ASSERT_TRUE(large.ok());
  ASSERT_TRUE(idx->AddColumn(Array(*large), 20).ok());
  EXPECT_EQ(Sorted(Positions(Query(*idx, Match("alpha")))), (std::vector<int64_t>{10, 12, 20}));

  const int64_t mem = idx->memory_bytes();
  auto st = idx->AddColumn(Array(arrow::MakeInt64Array({1, 2})), 30);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(st.IsInvalid());
  EXPECT_EQ(idx->num_docs(), 3);
  EXPECT_EQ(idx->memory_bytes(), mem);
  EXPECT_GT(mem, 0);
}

std::vector<FtsQuery> SampleQueries() {
  return {Match("apple"),        Match("banana cherry"), Match("banana cherry", true),
          Match("date kiwi"),    Phrase("cherry date"),  Phrase("cherry cherry"),
          Phrase("apple apple"), Match("the"),           Match("grape fig", true)};
}

TEST(FtsIndexTest, SerializeRoundTripGivesIdenticalResults) {
  FtsParams p;
  p.with_position = true;
  p.max_token_length = 30;
  std::vector<std::optional<std::string>> docs = kCorpus;
  docs.push_back(std::nullopt);
  docs.push_back("Café, café! apple cherry");
  auto idx = Build(docs, p, 7);
  auto bytes = idx->Serialize();
  ASSERT_TRUE(bytes.ok());
  auto back = InvertedIndex::Deserialize(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)->num_docs(), idx->num_docs());
  EXPECT_EQ((*back)->params().max_token_length, 30);
  EXPECT_TRUE((*back)->params().with_position);
  for (const FtsQuery& q : SampleQueries()) {
    const auto terms = idx->QueryTerms(q);
    const Bm25Stats a = idx->Stats(terms), b = (*back)->Stats(terms);
    EXPECT_EQ(a.num_docs, b.num_docs);
    EXPECT_EQ(a.total_tokens, b.total_tokens);
    EXPECT_EQ(a.doc_freq, b.doc_freq);
    auto ra = Query(*idx, q), rb = Query(**back, q);
    ASSERT_EQ(ra.size(), rb.size()) << q.text;
    for (size_t i = 0; i < ra.size(); ++i) {
      EXPECT_EQ(ra[i].position, rb[i].position);
      EXPECT_EQ(ra[i].score, rb[i].score);
    }
  }
  EXPECT_EQ(Positions(Query(**back, Phrase("cherry date"))), (std::vector<int64_t>{9}));
  // Same bytes again, and the loaded index keeps accepting documents.
  EXPECT_EQ((*back)->Serialize().value(), *bytes);
  ASSERT_TRUE((*back)->AddColumn(Utf8({"kiwi kiwi"}), 100).ok());
  EXPECT_EQ(Positions(Query(**back, Match("kiwi"))), (std::vector<int64_t>{100, 11}));
}

TEST(FtsIndexTest, EmptyIndexRoundTrip) {
  auto idx = InvertedIndex::Make(FtsParams()).value();
  auto back = InvertedIndex::Deserialize(idx->Serialize().value());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)->num_docs(), 0);
  EXPECT_TRUE(Query(**back, Match("anything")).empty());
}

TEST(FtsIndexTest, TruncationAndByteFlipsAreCorruption) {
  FtsParams p;
  p.with_position = true;
  auto idx = Build(kCorpus, p);
  const std::string bytes = idx->Serialize().value();
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = InvertedIndex::Deserialize(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << n;
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t mask : {0x01, 0x80, 0xFF}) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      auto r = InvertedIndex::Deserialize(bad);
      ASSERT_FALSE(r.ok()) << i;
      EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << i;
    }
  }
}

// Structural checks behind a valid checksum (a writer bug, not a disk error).
TEST(FtsIndexTest, StructuralErrorsBehindValidChecksum) {
  auto idx = Build({"alpha beta", "beta"});
  const std::string good = idx->Serialize().value();
  auto reseal = [](std::string body) {
    body.resize(body.size() - 8);
    const uint64_t h = XXH64(body.data(), body.size(), 0);
    for (int i = 0; i < 8; ++i) body.push_back(static_cast<char>((h >> (8 * i)) & 0xFF));
    return body;
  };
  ASSERT_TRUE(InvertedIndex::Deserialize(reseal(good)).ok());
  auto expect_corrupt = [&](std::string bytes, const std::string& needle) {
    auto r = InvertedIndex::Deserialize(reseal(std::move(bytes)));
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
  };
  // Header: magic 8, version 4, flags 4, max_token_length 4, "simple" 4 + 6, "English" 4 + 7.
  std::string b = good;
  b[8] = 2;
  expect_corrupt(b, "version");
  b = good;
  b[12] = static_cast<char>(0x40);
  expect_corrupt(b, "flags");
  b = good;
  b[16] = 0;  // max_token_length 0
  expect_corrupt(b, "max_token_length");
  // Documents: num_docs at 41, positions 49.., lengths 65..; alpha beta -> 2, beta -> 1.
  const size_t lens = 41 + 8 + 2 * 8;
  b = good;
  b[lens] = 3;
  expect_corrupt(b, "length");
  b = good;
  b[41] = 9;  // num_docs 9: too many for the bytes, or ids/lengths inconsistent
  auto r = InvertedIndex::Deserialize(reseal(b));
  EXPECT_FALSE(r.ok());
  // Term dictionary: num_terms then "alpha" (4 + 5), count 1, doc 0, tf 1, "beta"...
  const size_t terms = lens + 8;
  b = good;
  b[terms] = 3;
  expect_corrupt(b, "num_terms");
  b = good;
  b[terms + 8 + 4] = 'z';  // "zlpha" sorts after "beta"
  expect_corrupt(b, "sorted");
  b = good;
  b[terms + 8 + 9 + 4] = 5;  // posting document id 5 >= num_docs
  expect_corrupt(b, "posting document");
  b = good;
  b[terms + 8 + 9 + 8] = 0;  // tf 0
  expect_corrupt(b, "zero term frequency");
  b = good.substr(0, good.size() - 8) + "x" + good.substr(good.size() - 8);
  expect_corrupt(b, "unexpected bytes");
}

TEST(FtsIndexTest, ConcurrentReadersWhileOneWriterAdds) {
  FtsParams p;
  p.with_position = true;
  auto idx = InvertedIndex::Make(p).value();
  constexpr int kBatches = 60;
  constexpr int kBatchRows = 50;
  std::atomic<bool> done{false};
  std::atomic<int64_t> checks{0};
  std::vector<std::thread> readers;
  std::atomic<bool> failed{false};
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      size_t last = 0;
      while (!done.load()) {
        const FtsQuery q = t % 2 == 0 ? Match("common words", true) : Phrase("common words");
        const Bm25Stats s = idx->Stats(idx->QueryTerms(q));
        auto r = idx->Search(q, s, -1);
        if (!r.ok()) {
          failed = true;
          return;
        }
        // Batches are added atomically, results only grow, and every position exists. (Stats
        // taken before the first batch give N = 0 and so idf 0: scores are then 0.)
        const size_t n = r->size();
        if (n % kBatchRows != 0 || n < last) {
          ADD_FAILURE() << "reader saw " << n << " results after " << last;
          failed = true;
        }
        for (const auto& d : *r) {
          if (d.position < 0 || d.position >= kBatches * kBatchRows ||
              (s.num_docs > 0 && !(d.score > 0))) {
            ADD_FAILURE() << "bad result " << d.position << " score " << d.score;
            failed = true;
          }
        }
        last = n;
        ++checks;
      }
    });
  }
  for (int b = 0; b < kBatches; ++b) {
    std::vector<std::optional<std::string>> rows;
    for (int i = 0; i < kBatchRows; ++i) {
      rows.push_back("common words row" + std::to_string(b * kBatchRows + i) + " extra");
    }
    ASSERT_TRUE(idx->AddColumn(Utf8(rows), b * kBatchRows).ok());
  }
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_FALSE(failed.load());
  EXPECT_GT(checks.load(), 0);
  EXPECT_EQ(idx->num_docs(), kBatches * kBatchRows);
  EXPECT_EQ(Query(*idx, Phrase("common words")).size(), static_cast<size_t>(kBatches * kBatchRows));
}

}  // namespace
}  // namespace strata::index
