// What the L0 trigger buys (issue "Compaction into an indexed base table", `make bench-l0`):
// the same rows (default 160,000 of seeded clustered 128-d vectors, id int64 primary key, HNSW
// l2; STRATA_L0_BENCH_ROWS) in four layouts, queried side by side in one run:
//   base     every row compacted into the base (one HNSW over all rows)
//   L0=1     one uncompacted SSTable
//   L0=4     four SSTables (the default compaction trigger)
//   L0=16    sixteen SSTables (what a table written once a minute has after 16 minutes
//            without compaction)
// For each: p50 and p99 of a k = 10 vector search (300 queries, one thread, on one snapshot)
// and p50 of a point lookup by key (id = k), and the ratio to the base layout.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "arrow/builder.h"
#include "index/index_spec.h"
#include "query/scan.h"
#include "query/vector_search.h"
#include "table/catalog.h"
#include "table/primary_key.h"

namespace {

using namespace strata;  // NOLINT
using Clock = std::chrono::steady_clock;
constexpr int32_t kDim = 128;

int64_t NumRows() {
  const char* s = std::getenv("STRATA_L0_BENCH_ROWS");
  return s ? std::max<int64_t>(16000, std::atoll(s)) : 160000;
}

arrow::SchemaPtr Schema() {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false),
      arrow::field("vec", arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
  return *table::DeclarePrimaryKey(s, {"id"});
}

struct Gen {
  std::mt19937_64 rng{42};
  std::vector<float> centroids = [this] {
    std::vector<float> c(1000 * kDim);
    std::uniform_real_distribution<float> u(-1, 1);
    for (float& x : c) x = u(rng);
    return c;
  }();
  std::vector<float> Next() {
    std::normal_distribution<float> n(0, 0.1f);
    const size_t c = rng() % 1000;
    std::vector<float> v(kDim);
    for (int d = 0; d < kDim; ++d) v[d] = centroids[c * kDim + d] + n(rng);
    return v;
  }
};

double Pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

struct Figures {
  std::string layout;
  double search_p50 = 0, search_p99 = 0, lookup_p50 = 0;
};

Figures Run(const std::string& dir, const std::string& layout, int sstables, int64_t rows) {
  base::CompactionOptions co;
  co.background = false;
  auto catalog = std::move(table::Catalog::Open(dir, {}, co)).value();
  auto t =
      std::move(catalog->CreateTable("default", "l0", Schema(), {}, table::CreateMode::kCreate))
          .value();
  index::IndexSpec hnsw;
  hnsw.kind = index::IndexKind::kHnsw;
  hnsw.column = "vec";
  hnsw.name = "vec_idx";
  hnsw.requested_type = "HNSW";
  if (!t->CreateIndex(hnsw).ok()) std::exit(1);
  Gen gen;
  const int parts = std::max(1, sstables);
  const int64_t per = rows / parts;
  for (int p = 0; p < parts; ++p) {
    for (int64_t first = p * per; first < (p + 1) * per; first += 1000) {
      arrow::RecordBatchBuilder b(Schema());
      for (int64_t i = first; i < std::min((p + 1) * per, first + 1000); ++i) {
        (void)b.column(0)->AppendInt(i);
        const auto v = gen.Next();
        (void)b.column(1)->child(0)->AppendFloats(v.data(), kDim);
        (void)b.column(1)->AppendValid();
      }
      if (!t->Insert({*b.Finish()}).ok()) std::exit(1);
    }
    if (!t->Flush(Clock::now() + std::chrono::minutes(10)).ok()) std::exit(1);
  }
  if (sstables == 0) {
    if (!t->Compact(Clock::now() + std::chrono::hours(1)).ok()) std::exit(1);
  }
  const table::TableSnapshot snap = t->Snapshot();
  Figures f;
  f.layout = layout;
  std::vector<double> search, lookup;
  Gen probe;
  probe.rng.seed(7);
  std::mt19937_64 keys(9);
  for (int q = 0; q < 300; ++q) {
    query::VectorSearchOptions o;
    o.query = probe.Next();
    o.k = 10;
    auto t0 = Clock::now();
    auto r = query::VectorSearch(snap, o);
    search.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!r.ok() || r->num_rows != 10) std::exit(2);
    query::ScanOptions s;
    s.filter = "id = " + std::to_string(keys() % static_cast<uint64_t>(parts * per));
    t0 = Clock::now();
    auto l = query::Scan(snap, s);
    lookup.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!l.ok() || l->num_rows != 1) std::exit(3);
  }
  f.search_p50 = Pct(search, 0.5);
  f.search_p99 = Pct(search, 0.99);
  f.lookup_p50 = Pct(lookup, 0.5);
  return f;
}

}  // namespace

int main() {
  const int64_t rows = NumRows();
  const std::string root =
      (std::filesystem::temp_directory_path() / ("strata-l0-bench-" + std::to_string(getpid())))
          .string();
  std::printf("l0_bench: %lld rows of %d-d clustered vectors per layout\n",
              static_cast<long long>(rows), kDim);
  std::vector<Figures> all;
  const std::pair<const char*, int> layouts[] = {
      {"base", 0}, {"L0=1", 1}, {"L0=4", 4}, {"L0=16", 16}};
  for (const auto& [name, n] : layouts) {
    all.push_back(Run(root + "/" + name, name, n, rows));
    std::filesystem::remove_all(root + "/" + name);
    const Figures& f = all.back();
    std::printf(
        "[figures] %-6s search p50 %.3f ms p99 %.3f ms (%.2fx base), point lookup p50 "
        "%.3f ms (%.2fx base)\n",
        f.layout.c_str(), f.search_p50, f.search_p99, f.search_p50 / all[0].search_p50,
        f.lookup_p50, f.lookup_p50 / all[0].lookup_p50);
    std::fflush(stdout);
  }
  std::filesystem::remove_all(root);
  return 0;
}
