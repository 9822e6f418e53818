// Full-text index over the WordNet 3.0 glosses (Debian wordnet-base,
// /usr/share/wordnet/data.{noun,verb,adj,adv}: every line not starting with two spaces is a
// synset, the gloss follows " | "). One document per synset, default FtsParams
// (simple tokenizer, lower case, ASCII folding, stop words, Snowball English).
//   BM_Build/{0,1}: build time, documents, memory_bytes() without / with positions.
//   BM_Query/<set>: one query = QueryTerms + Stats + Search(limit 10), cycling through a set
//     of queries; counters median_us and p99_us over every timed query.
// Sets: 1, 2 and 3 words, each as OR and as AND, and a phrase (positional index).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "arrow/builder.h"
#include "index/fts/inverted_index.h"

namespace {

using namespace strata::index;  // NOLINT

const std::vector<std::optional<std::string>>& Glosses() {
  static const std::vector<std::optional<std::string>> docs = [] {
    std::vector<std::optional<std::string>> out;
    for (const char* part : {"noun", "verb", "adj", "adv"}) {
      std::ifstream in(std::string("/usr/share/wordnet/data.") + part);
      std::string line;
      while (std::getline(in, line)) {
        if (line.rfind("  ", 0) == 0) continue;  // license header
        const size_t bar = line.find(" | ");
        if (bar == std::string::npos) continue;
        out.push_back(line.substr(bar + 3));
      }
    }
    return out;
  }();
  return docs;
}

std::unique_ptr<InvertedIndex> BuildIndex(bool with_position) {
  FtsParams p;
  p.with_position = with_position;
  auto idx = InvertedIndex::Make(p).value();
  const auto& docs = Glosses();
  // Batches of 1,000 rows, as a MemTable receives them.
  for (size_t start = 0; start < docs.size(); start += 1000) {
    const size_t end = std::min(docs.size(), start + 1000);
    std::vector<std::optional<std::string>> batch(docs.begin() + static_cast<std::ptrdiff_t>(start),
                                                  docs.begin() + static_cast<std::ptrdiff_t>(end));
    strata::arrow::Array col(strata::arrow::MakeUtf8Array(batch));
    if (!idx->AddColumn(col, static_cast<int64_t>(start)).ok()) std::abort();
  }
  return idx;
}

const InvertedIndex& Index(bool with_position) {
  static const std::unique_ptr<InvertedIndex> plain = BuildIndex(false);
  static const std::unique_ptr<InvertedIndex> positional = BuildIndex(true);
  return with_position ? *positional : *plain;
}

void BM_Build(benchmark::State& state) {
  const bool with_position = state.range(0) != 0;
  if (Glosses().empty()) {
    state.SkipWithError("no WordNet glosses in /usr/share/wordnet (install wordnet-base)");
    return;
  }
  int64_t docs = 0, mem = 0, terms_bytes = 0;
  for (auto _ : state) {
    auto idx = BuildIndex(with_position);
    docs = idx->num_docs();
    mem = idx->memory_bytes();
    terms_bytes = static_cast<int64_t>(idx->Serialize().value().size());
  }
  state.counters["docs"] = static_cast<double>(docs);
  state.counters["memory_MB"] = static_cast<double>(mem) / 1e6;
  state.counters["serialized_MB"] = static_cast<double>(terms_bytes) / 1e6;
  state.counters["docs_per_s"] =
      benchmark::Counter(static_cast<double>(docs), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Build)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(1);

struct QuerySet {
  const char* name;
  FtsQuery::Kind kind;
  bool require_all;
  std::vector<std::string> texts;
};

const std::vector<QuerySet>& Sets() {
  static const std::vector<QuerySet> sets = [] {
    const std::vector<std::string> one = {"water", "animal", "music", "river",  "disease",
                                          "metal", "small",  "color", "person", "tree"};
    const std::vector<std::string> two = {
        "small animal", "musical instrument", "body water",      "genus plant",  "large bird",
        "river flows",  "chemical element",   "native american", "capital city", "wild flower"};
    const std::vector<std::string> three = {
        "small european bird", "tropical american tree", "act of moving",      "large body water",
        "member of family",    "state in united states", "having the quality", "sweet yellow fruit",
        "used as food",        "north american plant"};
    const std::vector<std::string> phrases = {
        "a member of the", "the act of", "united states",        "native to",    "used as a",
        "body of water",   "genus of",   "in the united states", "a person who", "the quality of"};
    return std::vector<QuerySet>{
        {"1word_OR", FtsQuery::Kind::kMatch, false, one},
        {"1word_AND", FtsQuery::Kind::kMatch, true, one},
        {"2word_OR", FtsQuery::Kind::kMatch, false, two},
        {"2word_AND", FtsQuery::Kind::kMatch, true, two},
        {"3word_OR", FtsQuery::Kind::kMatch, false, three},
        {"3word_AND", FtsQuery::Kind::kMatch, true, three},
        {"phrase", FtsQuery::Kind::kPhrase, false, phrases},
    };
  }();
  return sets;
}

void BM_Query(benchmark::State& state) {
  const QuerySet& set = Sets()[static_cast<size_t>(state.range(0))];
  state.SetLabel(set.name);
  const bool phrase = set.kind == FtsQuery::Kind::kPhrase;
  const InvertedIndex& idx = Index(phrase);
  std::vector<FtsQuery> queries;
  for (const auto& t : set.texts) {
    FtsQuery q;
    q.kind = set.kind;
    q.require_all = set.require_all;
    q.text = t;
    queries.push_back(q);
  }
  double matches = 0;  // documents matching each query (no limit), averaged over the set
  for (const auto& q : queries) {
    matches += static_cast<double>(idx.Search(q, idx.Stats(idx.QueryTerms(q)), -1).value().size());
  }
  state.counters["avg_matches"] = matches / static_cast<double>(queries.size());
  std::vector<double> us;
  size_t i = 0;
  int64_t hits = 0;
  for (auto _ : state) {
    const FtsQuery& q = queries[i++ % queries.size()];
    const auto t0 = std::chrono::steady_clock::now();
    const Bm25Stats s = idx.Stats(idx.QueryTerms(q));
    auto r = idx.Search(q, s, 10);
    const auto t1 = std::chrono::steady_clock::now();
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    hits += static_cast<int64_t>(r->size());
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  state.counters["median_us"] = us[us.size() / 2];
  state.counters["p99_us"] = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  state.counters["avg_hits"] = static_cast<double>(hits) / static_cast<double>(us.size());
}
BENCHMARK(BM_Query)->DenseRange(0, 6)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
