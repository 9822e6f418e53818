// The cost of the tiers (issue 5 benchmark, Google Benchmark): the same rows in two tables,
// (tiered) spread over 5 SSTables and the active MemTable, and (single) all in one SSTable,
// queried in one run:
//   BM_ScanFilter   Scan with a selective filter `cat = 'c7' AND price > 50` (BTree on cat)
//   BM_PointLookup  Scan with `id = k`, k random (key index per source, newest first)
//   BM_VectorSearch VectorSearch k = 10, random query (HNSW in every source)
//   BM_FtsSearch    FtsSearch k = 10, two random words of the vocabulary (OR)
// Rows: id int64 (primary key), cat utf8 (100 values), price float64 in [0, 100), text of 8
// words from a 100-word vocabulary, vector fixed_size_list<float32>[64] (uniform [-1, 1)).
// Indexes: HNSW(vector, l2), BTree(cat), FTS(text), created before the rows are written.
// Queries run on one snapshot per table (the server takes one per request; it is cached).
// After the run, a summary prints the ratio tiered / single of the mean time per query.
// Rows: STRATA_TIERS_BENCH_ROWS (default 100,000).
#include <benchmark/benchmark.h>

#include <stdlib.h>
#include <unistd.h>
#include "ratio_reporter.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "arrow/builder.h"
#include "index/index_spec.h"
#include "io/local_object_store.h"
#include "query/fts_search.h"
#include "query/scan.h"
#include "query/vector_search.h"
#include "table/local_table.h"

namespace {

using namespace strata;  // NOLINT

constexpr int32_t kDim = 64;
constexpr int kVocab = 100;
constexpr int kWordsPerRow = 8;
constexpr int kSstables = 5;

int64_t NumRows() {
  const char* s = ::getenv("STRATA_TIERS_BENCH_ROWS");
  return s ? std::max<int64_t>(1000, std::atoll(s)) : 100000;
}

arrow::SchemaPtr BenchSchema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), /*nullable=*/false), arrow::field("cat", arrow::utf8()),
      arrow::field("price", arrow::float64()), arrow::field("text", arrow::utf8()),
      arrow::field("vector",
                   arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
}

// 100 made-up three-syllable words (no English stop words).
const std::vector<std::string>& Vocabulary() {
  static const std::vector<std::string> words = [] {
    const std::string c = "bdfgklmnprstvz", v = "aeiou";
    std::vector<std::string> out;
    std::mt19937 rng(3);
    std::map<std::string, bool> seen;
    while (static_cast<int>(out.size()) < kVocab) {
      std::string w;
      for (int s = 0; s < 3; ++s) {
        w += c[rng() % c.size()];
        w += v[rng() % v.size()];
      }
      if (!seen[w]) {
        seen[w] = true;
        out.push_back(w);
      }
    }
    return out;
  }();
  return words;
}

// Rows [first, last) of the data set (deterministic per id).
arrow::RecordBatchPtr Rows(int64_t first, int64_t last) {
  arrow::RecordBatchBuilder b(BenchSchema());
  std::vector<float> vec(kDim);
  for (int64_t id = first; id < last; ++id) {
    std::mt19937_64 rng(static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ULL + 1);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    (void)b.column(0)->AppendInt(id);
    (void)b.column(1)->AppendBytes("c" + std::to_string(rng() % 100));
    (void)b.column(2)->AppendDouble(static_cast<double>(rng() % 10000) / 100.0);
    std::string text;
    for (int w = 0; w < kWordsPerRow; ++w) {
      if (w) text += ' ';
      text += Vocabulary()[rng() % kVocab];
    }
    (void)b.column(3)->AppendBytes(text);
    for (float& x : vec) x = u(rng);
    (void)b.column(4)->child(0)->AppendFloats(vec.data(), kDim);
    (void)b.column(4)->AppendValid();
  }
  return b.Finish().value();
}

std::vector<index::IndexSpec> Specs() {
  index::IndexSpec hnsw;
  hnsw.kind = index::IndexKind::kHnsw;
  hnsw.column = "vector";
  hnsw.name = "vector_idx";
  hnsw.requested_type = "IVF_HNSW_SQ";
  hnsw.hnsw.distance = index::DistanceType::kL2;
  index::IndexSpec bt;
  bt.kind = index::IndexKind::kBTree;
  bt.column = "cat";
  bt.name = "cat_idx";
  bt.requested_type = "BTREE";
  index::IndexSpec fts;
  fts.kind = index::IndexKind::kFts;
  fts.column = "text";
  fts.name = "text_idx";
  fts.requested_type = "FTS";
  return {hnsw, bt, fts};
}

void Check(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "tiers_bench: %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

struct BenchTable {
  std::string dir;
  std::shared_ptr<table::LocalTable> table;
  table::TableSnapshot snap;
  double load_seconds = 0;
  std::vector<std::string> sources;
};

// tiered: 6 equal parts, the first 5 each flushed into an SSTable, the last left in the
// active MemTable. single: every row, one flush.
BenchTable Build(bool tiered) {
  BenchTable t;
  t.dir = (std::filesystem::temp_directory_path() /
           ("strata-tiers-bench-" + std::string(tiered ? "tiered" : "single") + "-" +
            std::to_string(::getpid())))
              .string();
  std::filesystem::remove_all(t.dir);
  std::filesystem::create_directories(t.dir);
  auto store = io::LocalObjectStore::Open(t.dir);
  Check(store.status(), "open store");
  shard::ShardWriterOptions o;
  o.primary_key = {"id"};
  o.max_memtable_rows = int64_t{1} << 40;
  o.max_memtable_bytes = int64_t{1} << 40;
  o.max_unflushed_bytes = int64_t{1} << 40;
  o.max_memtable_age = std::chrono::hours(24);
  auto created = table::LocalTable::Create(*store, "default/t", "t", BenchSchema(), {}, o);
  Check(created.status(), "create table");
  t.table = *created;
  for (const auto& spec : Specs()) Check(t.table->CreateIndex(spec).status(), "create index");
  const auto start = std::chrono::steady_clock::now();
  const int64_t n = NumRows();
  const int parts = tiered ? kSstables + 1 : 1;
  for (int p = 0; p < parts; ++p) {
    const int64_t first = n * p / parts, last = n * (p + 1) / parts;
    for (int64_t b = first; b < last; b += 5000) {
      Check(t.table->Insert({Rows(b, std::min(last, b + 5000))}).status(), "insert");
    }
    if (p < kSstables || !tiered) {
      Check(t.table->Flush(shard::Clock::now() + std::chrono::minutes(10)).status(), "flush");
    }
  }
  // Every index complete in every source.
  for (;;) {
    bool done = true;
    for (const auto& st : t.table->ListIndexes()) done = done && st.num_unindexed_rows == 0;
    if (done) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  t.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  t.snap = t.table->Snapshot();
  for (const auto& s : t.snap.shard->sources) t.sources.push_back(s.name);
  if (t.snap.num_rows != n) {
    std::fprintf(stderr, "tiers_bench: %lld rows, expected %lld\n",
                 static_cast<long long>(t.snap.num_rows), static_cast<long long>(n));
    std::exit(1);
  }
  return t;
}

BenchTable& Table(int64_t layout) {
  static BenchTable tiered = Build(true);
  static BenchTable single = Build(false);
  return layout == 0 ? tiered : single;
}

const char* LayoutName(int64_t layout) { return layout == 0 ? "tiered" : "single"; }

void BM_ScanFilter(benchmark::State& state) {
  const auto& snap = Table(state.range(0)).snap;
  query::ScanOptions o;
  o.filter = "cat = 'c7' AND price > 50";
  int64_t rows = 0;
  for (auto _ : state) {
    auto r = query::Scan(snap, o);
    if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
    rows = r->num_rows;
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["rows"] = static_cast<double>(rows);
  state.SetLabel(LayoutName(state.range(0)));
}
BENCHMARK(BM_ScanFilter)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_PointLookup(benchmark::State& state) {
  const auto& snap = Table(state.range(0)).snap;
  std::mt19937_64 rng(5);
  const int64_t n = NumRows();
  int64_t found = 0;
  for (auto _ : state) {
    query::ScanOptions o;
    o.filter = "id = " + std::to_string(static_cast<int64_t>(rng() % static_cast<uint64_t>(n)));
    auto r = query::Scan(snap, o);
    if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
    found += r->num_rows;
  }
  if (found != static_cast<int64_t>(state.iterations())) {
    return state.SkipWithError("a lookup did not find its key");
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(LayoutName(state.range(0)));
}
BENCHMARK(BM_PointLookup)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_VectorSearch(benchmark::State& state) {
  const auto& snap = Table(state.range(0)).snap;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<std::vector<float>> queries(64, std::vector<float>(kDim));
  for (auto& q : queries) {
    for (float& x : q) x = u(rng);
  }
  size_t i = 0;
  for (auto _ : state) {
    query::VectorSearchOptions o;
    o.query = queries[i++ % queries.size()];
    o.k = 10;
    auto r = query::VectorSearch(snap, o);
    if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
    if (r->num_rows != 10) return state.SkipWithError("fewer than 10 neighbours");
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(LayoutName(state.range(0)));
}
BENCHMARK(BM_VectorSearch)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_FtsSearch(benchmark::State& state) {
  const auto& snap = Table(state.range(0)).snap;
  std::mt19937 rng(9);
  std::vector<std::string> queries;
  for (int i = 0; i < 64; ++i) {
    queries.push_back(Vocabulary()[rng() % kVocab] + " " + Vocabulary()[rng() % kVocab]);
  }
  size_t i = 0;
  for (auto _ : state) {
    query::FtsSearchOptions o;
    o.query.text = queries[i++ % queries.size()];
    o.k = 10;
    auto r = query::FtsSearch(snap, o);
    if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
    if (r->num_rows != 10) return state.SkipWithError("fewer than 10 documents");
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(LayoutName(state.range(0)));
}
BENCHMARK(BM_FtsSearch)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

using strata::bench::RatioReporter;

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // Build both tables before timing anything (and report how).
  for (int64_t layout : {0, 1}) {
    const BenchTable& t = Table(layout);
    std::printf("%s: %lld rows in %zu sources [", LayoutName(layout),
                static_cast<long long>(t.snap.num_rows), t.sources.size());
    for (size_t i = 0; i < t.sources.size(); ++i) {
      std::printf("%s%s", i ? ", " : "", t.sources[i].c_str());
    }
    std::printf("], loaded + indexed in %.1f s\n", t.load_seconds);
  }
  std::fflush(stdout);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nCost of the tiers (mean time per query, tiered / single):\n");
  for (const char* name : {"BM_ScanFilter", "BM_PointLookup", "BM_VectorSearch", "BM_FtsSearch"}) {
    const auto& t = reporter.times();
    auto a = t.find(std::string(name) + "/0"), b = t.find(std::string(name) + "/1");
    if (a == t.end() || b == t.end() || b->second <= 0) continue;
    std::printf("  %-16s tiered %10.1f us  single %10.1f us  ratio %.2f\n", name, a->second,
                b->second, a->second / b->second);
  }
  benchmark::Shutdown();
  for (int64_t layout : {0, 1}) {
    Table(layout).table.reset();
    std::filesystem::remove_all(Table(layout).dir);
  }
  return 0;
}
