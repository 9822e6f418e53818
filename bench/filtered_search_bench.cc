// Filtered vector search at every selectivity (issue "Query path near the engine's limit",
// `make bench-query`), in-process through the catalog so the engine is measured, not a client:
//
//   clustered  200,000 rows (STRATA_QUERY_BENCH_ROWS) of seeded clustered 128-d vectors
//              (1,000 centres uniform in [-1, 1)^128, N(0, 0.1^2) noise per dimension), id int64
//              primary key, tag int32 uniform in [0, 1000); HNSW (l2) on vec and a BTree on tag,
//              loaded with default writer settings in 1,000-row batches, so the rows sit in
//              SSTables plus the active MemTable; then again after a compaction into the base;
//              then the base again, each query on a fresh snapshot, while a writer thread
//              inserts new rows at STRATA_QUERY_BENCH_WRITE_RATE rows/s (default 2,000; 0 =
//              skip) into the active MemTable ("base+writes").
//              Filters: none, tag < 500 (50%), tag < 100 (10%), tag < 10 (1%), tag = 7 (0.1%),
//              and tag % 10 = 3 (10%, no index can answer it: a vectorised filter pass).
//   fashion    Fashion-MNIST's 60,000 training images (784-d, l2, HNSW) with their label
//              (int32, no index), queried with t10k images: none and label = 3 (10%, the
//              filter `make demo` uses; anti-correlated with the queries of other classes).
//
// For each filter: q/s over 300 queries (k = 10, prefilter, one thread, median of 3 passes, the
// passes of all filters interleaved), the ratio to the unfiltered q/s of the same layout, and
// recall@10 against exact search with the same filter (bypass_vector_index). Each filter is
// timed with the filter-bits cache (query/filter_bits_cache.h, the server's default: a filter
// asked again is tested by bit lookups) and without it (a filter that never repeats), taking
// turns within each pass. The plans of the first query and of the first with cached bits are
// printed, so what the planner chose is visible.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../tests/index/fashion_mnist.h"
#include "arrow/builder.h"
#include "index/index_spec.h"
#include "query/filter_bits_cache.h"
#include "query/vector_search.h"
#include "table/catalog.h"
#include "table/primary_key.h"

namespace {

using namespace strata;  // NOLINT
using Clock = std::chrono::steady_clock;

int64_t NumRows() {
  const char* s = std::getenv("STRATA_QUERY_BENCH_ROWS");
  return s ? std::max<int64_t>(20000, std::atoll(s)) : 200000;
}

arrow::SchemaPtr Schema(const char* tag_name, int32_t dim) {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field(tag_name, arrow::int32(), false),
      arrow::field("vec", arrow::fixed_size_list(arrow::field("item", arrow::float32()), dim))});
  return *table::DeclarePrimaryKey(s, {"id"});
}

struct Clustered {
  static constexpr int32_t kDim = 128;
  std::mt19937_64 rng;
  std::vector<float> centroids;
  explicit Clustered(uint64_t seed) : rng(seed) {
    std::mt19937_64 c(42);
    std::uniform_real_distribution<float> u(-1, 1);
    centroids.resize(1000 * kDim);
    for (float& x : centroids) x = u(c);
  }
  std::vector<float> Next() {
    std::normal_distribution<float> n(0, 0.1f);
    const size_t c = rng() % 1000;
    std::vector<float> v(kDim);
    for (int d = 0; d < kDim; ++d) v[d] = centroids[c * kDim + d] + n(rng);
    return v;
  }
};

void Check(const Status& st, const char* what) {
  if (!st.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, st.ToString().c_str());
    std::exit(1);
  }
}

std::shared_ptr<table::Table> MakeTable(table::Catalog& catalog, const std::string& name,
                                        const arrow::SchemaPtr& schema, const char* btree_column) {
  auto t = catalog.CreateTable("default", name, schema, {}, table::CreateMode::kCreate);
  Check(t.status(), "create");
  index::IndexSpec hnsw;
  hnsw.kind = index::IndexKind::kHnsw;
  hnsw.column = "vec";
  hnsw.name = "vec_idx";
  hnsw.requested_type = "HNSW";
  Check((*t)->CreateIndex(hnsw).status(), "hnsw");
  if (btree_column != nullptr) {
    index::IndexSpec bt;
    bt.kind = index::IndexKind::kBTree;
    bt.column = btree_column;
    bt.name = std::string(btree_column) + "_idx";
    bt.requested_type = "BTREE";
    Check((*t)->CreateIndex(bt).status(), "btree");
  }
  return *t;
}

struct Case {
  std::string name;
  std::optional<std::string> filter;
};

struct Outcome {
  std::vector<double> qps;           // one per pass
  std::vector<double> uncached_qps;  // the same without the filter-bits cache
  double recall = 0;
  std::string plan;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int64_t IdOf(const query::QueryResult& r, int64_t row) {
  const arrow::Array ids = r.batches[0]->column(0);
  return ids.raw_values<int64_t>()[row];
}

// STRATA_QUERY_BENCH_FORCE=exact|hnsw|postfilter: every filtered search runs that plan (as
// the tests force it) instead of the planner's choice, to compare the plans on the same data.
std::optional<query::FilteredPlan> ForcedPlan() {
  const char* f = std::getenv("STRATA_QUERY_BENCH_FORCE");
  if (f == nullptr) return std::nullopt;
  const std::string s = f;
  if (s == "exact") return query::FilteredPlan::kExact;
  if (s == "hnsw") return query::FilteredPlan::kHnsw;
  if (s == "postfilter") return query::FilteredPlan::kPostfilter;
  std::fprintf(stderr, "STRATA_QUERY_BENCH_FORCE=%s: expected exact, hnsw or postfilter\n", f);
  std::exit(2);
}

// Runs every case over `queries` on one snapshot; prints one line per case.
// `fresh`: every query takes its own snapshot (as a server request does; for the sweep while a
// writer runs), else one snapshot serves them all.
void Sweep(const std::string& layout, table::Table& t, const std::vector<Case>& cases,
           const std::vector<std::vector<float>>& queries, bool fresh = false) {
  const table::TableSnapshot fixed = t.Snapshot();
  const auto snapshot = [&] { return fresh ? t.Snapshot() : fixed; };
  // STRATA_QUERY_BENCH_PROFILE=<filter>: only run that filter for 10 s (for perf), printing
  // the plans of the first queries.
  if (const char* prof = std::getenv("STRATA_QUERY_BENCH_PROFILE")) {
    const auto end = Clock::now() + std::chrono::seconds(10);
    int64_t n = 0;
    while (Clock::now() < end) {
      query::VectorSearchOptions o;
      o.query = queries[static_cast<size_t>(n++) % queries.size()];
      o.k = 10;
      if (*prof != '\0') o.filter = prof;
      o.columns = {query::ColumnRef{"id"}};
      o.force_filtered_plan = ForcedPlan();
      auto r = query::VectorSearch(snapshot(), o);
      Check(r.status(), "search");
      if (n <= 3) {
        for (const std::string& p : r->plan) std::printf("  plan: %s\n", p.c_str());
      }
    }
    std::printf("[profile] %s %s: %.0f q/s\n", layout.c_str(), prof, n / 10.0);
    return;
  }
  std::vector<Outcome> out(cases.size());
  // Recall and plans first (not timed).
  for (size_t c = 0; c < cases.size(); ++c) {
    int64_t hit = 0, total = 0;
    for (size_t q = 0; q < queries.size(); ++q) {
      query::VectorSearchOptions o;
      o.query = queries[q];
      o.k = 10;
      o.filter = cases[c].filter;
      o.columns = {query::ColumnRef{"id"}};
      o.force_filtered_plan = ForcedPlan();
      const table::TableSnapshot snap = snapshot();
      auto got = query::VectorSearch(snap, o);
      Check(got.status(), "search");
      o.bypass_vector_index = true;
      auto truth = query::VectorSearch(snap, o);
      Check(truth.status(), "exact search");
      std::set<int64_t> want;
      for (int64_t r = 0; r < truth->num_rows; ++r) want.insert(IdOf(*truth, r));
      for (int64_t r = 0; r < got->num_rows; ++r) hit += want.count(IdOf(*got, r));
      total += truth->num_rows;
      // The first query measures the filter; the second computes the filter bits, and the
      // third is the first to find them cached (query/filter_bits_cache.h).
      if ((q == 0 || q == 2) && cases[c].filter) {
        out[c].plan += q == 0 ? "\n    first query:" : "\n    once cached:";
      }
      if (q == 0 || (q == 2 && cases[c].filter)) {
        for (const std::string& p : got->plan) out[c].plan += "\n      " + p;
      }
    }
    out[c].recall = total == 0 ? 1.0 : static_cast<double>(hit) / static_cast<double>(total);
  }
  // Each case runs twice a pass: with the filter-bits cache (the server's default; a repeated
  // filter is tested by bit lookups once it has been asked twice) and without it (every query
  // measures and tests the filter afresh: a filter that never repeats). Turning the cache off
  // empties it, so every pass with it pays for computing the bits again.
  const int64_t cache_budget = query::FilterBitsCache::DefaultBudget();
  for (int pass = 0; pass < 3; ++pass) {
    for (size_t c = 0; c < cases.size(); ++c) {
      for (const bool cached : {true, false}) {
        query::FilterBitsCache::Global().SetBudget(cached ? cache_budget : 0);
        const auto t0 = Clock::now();
        for (const auto& qv : queries) {
          query::VectorSearchOptions o;
          o.query = qv;
          o.k = 10;
          o.filter = cases[c].filter;
          o.columns = {query::ColumnRef{"id"}};
          o.force_filtered_plan = ForcedPlan();
          auto r = query::VectorSearch(snapshot(), o);
          Check(r.status(), "search");
        }
        (cached ? out[c].qps : out[c].uncached_qps)
            .push_back(static_cast<double>(queries.size()) /
                       std::chrono::duration<double>(Clock::now() - t0).count());
      }
    }
  }
  query::FilterBitsCache::Global().SetBudget(cache_budget);
  const double base = Median(out[0].qps);
  const double uncached_base = Median(out[0].uncached_qps);
  for (size_t c = 0; c < cases.size(); ++c) {
    const double q = Median(out[c].qps);
    const double u = Median(out[c].uncached_qps);
    std::printf(
        "[figures] %-9s %-14s %8.0f q/s  %.2fx unfiltered  (no filter cache: %6.0f q/s  "
        "%.2fx)  recall@10 %.3f%s\n",
        layout.c_str(), cases[c].name.c_str(), q, q / base, u, u / uncached_base, out[c].recall,
        out[c].plan.c_str());
  }
  std::fflush(stdout);
}

void RunClustered(const std::string& dir) {
  const int64_t rows = NumRows();
  // No background compaction: the first sweep measures the L0 layout the load left.
  base::CompactionOptions co;
  co.background = false;
  auto catalog = std::move(table::Catalog::Open(dir, {}, co)).value();
  auto schema = Schema("tag", Clustered::kDim);
  auto t = MakeTable(*catalog, "clustered", schema, "tag");
  Clustered gen(1);
  std::mt19937_64 tags(3);
  // Rows [first, first + n) (tag uniform in [0, 1000), a clustered vector).
  const auto insert = [&](int64_t first, int64_t n) {
    arrow::RecordBatchBuilder b(schema);
    for (int64_t i = first; i < first + n; ++i) {
      (void)b.column(0)->AppendInt(i);
      (void)b.column(1)->AppendInt(static_cast<int64_t>(tags() % 1000));
      const auto v = gen.Next();
      (void)b.column(2)->child(0)->AppendFloats(v.data(), Clustered::kDim);
      (void)b.column(2)->AppendValid();
    }
    auto batch = b.Finish();
    Check(batch.status(), "batch");
    Check(t->Insert({*batch}).status(), "insert");
  };
  const auto t0 = Clock::now();
  for (int64_t first = 0; first < rows; first += 1000) {
    insert(first, std::min<int64_t>(1000, rows - first));
  }
  std::printf("clustered: %lld rows loaded in %.1f s\n", static_cast<long long>(rows),
              std::chrono::duration<double>(Clock::now() - t0).count());
  Clustered probe(7);
  std::vector<std::vector<float>> queries;
  for (int i = 0; i < 300; ++i) queries.push_back(probe.Next());
  const std::vector<Case> cases = {{"none", std::nullopt},       {"tag<500 50%", "tag < 500"},
                                   {"tag<100 10%", "tag < 100"}, {"tag<10 1%", "tag < 10"},
                                   {"tag=7 0.1%", "tag = 7"},    {"tag%10=3 10%", "tag % 10 = 3"}};
  Sweep("L0", *t, cases, queries);
  Check(t->Flush(Clock::now() + std::chrono::minutes(10)).status(), "flush");
  Check(t->Compact(Clock::now() + std::chrono::hours(1)).status(), "compact");
  Sweep("base", *t, cases, queries);
  // The same, each query on a fresh snapshot, while a writer inserts new rows in 1,000-row
  // batches at STRATA_QUERY_BENCH_WRITE_RATE rows/s (default 2,000): the active MemTable grows
  // under the queries (its cached filter bits get extended), and may be flushed.
  const char* rate_env = std::getenv("STRATA_QUERY_BENCH_WRITE_RATE");
  const double rate = rate_env ? std::atof(rate_env) : 2000.0;
  if (rate > 0) {
    std::atomic<bool> stop{false};
    int64_t written = 0;
    std::thread writer([&] {
      const auto start = Clock::now();
      while (!stop.load()) {
        const auto due = start + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>((written + 1000) / rate));
        std::this_thread::sleep_until(due);
        if (stop.load()) break;
        insert(rows + written, 1000);
        written += 1000;
      }
    });
    const auto w0 = Clock::now();
    Sweep("base+writes", *t, cases, queries, /*fresh=*/true);
    stop = true;
    writer.join();
    const double secs = std::chrono::duration<double>(Clock::now() - w0).count();
    const table::TableSnapshot end = t->Snapshot();
    std::printf(
        "base+writes: %lld rows written in %.1f s (%.0f rows/s) during the sweep; "
        "%zu sources at the end\n",
        static_cast<long long>(written), secs, static_cast<double>(written) / secs,
        end.shard->sources.size());
  }
}

void RunFashion(const std::string& dir) {
  if (!testing::FashionMnistAvailable()) {
    std::printf("fashion: skipped (no Fashion-MNIST under %s)\n",
                testing::FashionMnistDir().c_str());
    return;
  }
  std::string error;
  testing::IdxImages train, test;
  testing::IdxBytes labels;
  if (!testing::ReadIdxImages(testing::FashionMnistTrainPath(), -1, &train, &error) ||
      !testing::ReadIdxImages(testing::FashionMnistTestPath(), 300, &test, &error) ||
      !testing::ReadIdxUbyte(testing::FashionMnistTrainLabelsPath(), 1, -1, &labels, &error)) {
    std::fprintf(stderr, "fashion: %s\n", error.c_str());
    std::exit(1);
  }
  const int32_t dim = static_cast<int32_t>(train.dim);
  auto catalog = std::move(table::Catalog::Open(dir)).value();
  auto schema = Schema("label", dim);
  auto t = MakeTable(*catalog, "fashion", schema, nullptr);
  for (int64_t first = 0; first < train.count; first += 1000) {
    arrow::RecordBatchBuilder b(schema);
    for (int64_t i = first; i < std::min(train.count, first + 1000); ++i) {
      (void)b.column(0)->AppendInt(i);
      (void)b.column(1)->AppendInt(labels.bytes[static_cast<size_t>(i)]);
      (void)b.column(2)->child(0)->AppendFloats(train.row(i), dim);
      (void)b.column(2)->AppendValid();
    }
    auto batch = b.Finish();
    Check(batch.status(), "batch");
    Check(t->Insert({*batch}).status(), "insert");
  }
  std::vector<std::vector<float>> queries;
  for (int64_t i = 0; i < test.count; ++i) {
    queries.emplace_back(test.row(i), test.row(i) + dim);
  }
  Sweep("fashion", *t, {{"none", std::nullopt}, {"label=3 10%", "label = 3"}}, queries);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root =
      (std::filesystem::temp_directory_path() / ("strata-query-bench-" + std::to_string(getpid())))
          .string();
  const std::string only = argc > 1 ? argv[1] : "";
  if (only.empty() || only == "clustered") RunClustered(root + "/clustered");
  if (only.empty() || only == "fashion") RunFashion(root + "/fashion");
  std::filesystem::remove_all(root);
  return 0;
}
