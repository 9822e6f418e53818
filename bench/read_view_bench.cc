// The cost of building a read view after a write (issue "Reads that stay fast as a table
// grows", Google Benchmark). A primary-key table (id int64, vec fixed_size_list<float32>[16],
// no vector index) holds N rows already flushed into SSTables (N = 100,000 and 1,000,000;
// 100,000-row MemTables, so 1 and 10 SSTables; 10,000-row puts, then Flush). Each iteration:
//   1. put 1 row (a new id; BM_ViewAfterUpsert: an existing id, so an SSTable row dies),
//      NOT timed (reported as the `put_us` counter);
//   2. Table::Snapshot() -- the read view every query starts from; the put invalidated the
//      cached one, so this builds a new one;
//   3. query::CountRows without a filter on it, checked against the expected row count.
// The reported time (manual timing) is steps 2 + 3 only: what a reader pays after a write
// before it can answer. A read view that re-merges every tier costs O(N) here; an incremental
// one with per-source liveness should cost about the same at 100k and 1M. The summary prints
// the 1M / 100k ratio of the mean time per iteration for each benchmark.
// Puts are non-durable (durable_write = false: the MemTable holds the row when Put returns and
// it is visible) so the untimed part of an iteration is not an fsync.
// Tables are built once per N (1M rows take a few seconds and about 0.3 GB) in a temporary
// folder removed at exit.
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
#include <vector>

#include "arrow/builder.h"
#include "query/scan.h"
#include "table/catalog.h"
#include "table/primary_key.h"

namespace {

using namespace strata;  // NOLINT

constexpr int32_t kDim = 16;
constexpr int64_t kPutRows = 10000;
constexpr int64_t kMemTableRows = 100000;

arrow::SchemaPtr BenchSchema() {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), /*nullable=*/false),
      arrow::field("vec", arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
  return table::DeclarePrimaryKey(s, {"id"}).value();
}

// Rows [first, last): vector elements uniform in [-1, 1), deterministic per id.
arrow::RecordBatchPtr Rows(int64_t first, int64_t last) {
  std::vector<std::optional<int64_t>> ids;
  std::vector<float> vecs;
  for (int64_t id = first; id < last; ++id) {
    ids.push_back(id);
    std::mt19937 rng(static_cast<uint32_t>(id * 2654435761u));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (int d = 0; d < kDim; ++d) vecs.push_back(u(rng));
  }
  static const arrow::SchemaPtr schema = BenchSchema();
  return std::make_shared<arrow::RecordBatch>(
      schema, last - first,
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids),
                                       arrow::MakeVectorArray(vecs, kDim)});
}

void Check(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "read_view_bench: %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

struct BenchTable {
  std::string dir;
  std::unique_ptr<table::Catalog> catalog;
  std::shared_ptr<table::Table> table;
  int64_t rows = 0;     // live rows now
  int64_t next_id = 0;  // next new id
  double load_seconds = 0;
  size_t sstables = 0;
};

BenchTable* Build(int64_t n) {
  auto* t = new BenchTable;
  t->dir = (std::filesystem::temp_directory_path() /
            ("strata-read-view-bench-" + std::to_string(n) + "-" + std::to_string(::getpid())))
               .string();
  std::filesystem::remove_all(t->dir);
  std::filesystem::create_directories(t->dir);
  shard::ShardWriterOptions o;
  o.durable_write = false;
  o.max_memtable_rows = kMemTableRows;
  o.max_memtable_bytes = int64_t{1} << 40;
  o.max_unflushed_bytes = int64_t{1} << 40;
  o.max_memtable_age = std::chrono::hours(24);
  auto catalog = table::Catalog::Open(t->dir, o);
  Check(catalog.status(), "open catalog");
  t->catalog = std::move(*catalog);
  auto created =
      t->catalog->CreateTable("default", "t", BenchSchema(), {}, table::CreateMode::kCreate);
  Check(created.status(), "create table");
  t->table = *created;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t first = 0; first < n; first += kPutRows) {
    Check(t->table->Insert({Rows(first, std::min(n, first + kPutRows))}).status(), "insert");
  }
  Check(t->table->Flush(shard::Clock::now() + std::chrono::minutes(10)).status(), "flush");
  t->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  t->rows = n;
  t->next_id = n;
  t->sstables = t->table->DescribeShards().at(0).sstables.size();
  auto count = query::CountRows(t->table->Snapshot(), std::nullopt);
  Check(count.status(), "count");
  if (*count != n) {
    std::fprintf(stderr, "read_view_bench: %lld rows, expected %lld\n",
                 static_cast<long long>(*count), static_cast<long long>(n));
    std::exit(1);
  }
  return t;
}

std::map<int64_t, BenchTable*>& Tables() {
  static std::map<int64_t, BenchTable*> tables;
  return tables;
}

BenchTable& TableOf(int64_t n) {
  auto& t = Tables()[n];
  if (t == nullptr) t = Build(n);
  return *t;
}

void Run(benchmark::State& state, bool upsert) {
  BenchTable& t = TableOf(state.range(0));
  std::mt19937_64 rng(11);
  double put_seconds = 0;
  for (auto _ : state) {
    const auto p0 = std::chrono::steady_clock::now();
    const int64_t id =
        upsert ? static_cast<int64_t>(rng() % static_cast<uint64_t>(state.range(0))) : t.next_id++;
    auto put = t.table->Insert({Rows(id, id + 1)});
    if (!put.ok()) return state.SkipWithError(put.status().ToString().c_str());
    if (!upsert) ++t.rows;
    const auto p1 = std::chrono::steady_clock::now();
    table::TableSnapshot snap = t.table->Snapshot();
    auto count = query::CountRows(snap, std::nullopt);
    const auto p2 = std::chrono::steady_clock::now();
    if (!count.ok()) return state.SkipWithError(count.status().ToString().c_str());
    if (*count != t.rows) return state.SkipWithError("count differs from the rows written");
    benchmark::DoNotOptimize(snap);
    put_seconds += std::chrono::duration<double>(p1 - p0).count();
    state.SetIterationTime(std::chrono::duration<double>(p2 - p1).count());
  }
  state.counters["put_us"] = 1e6 * put_seconds / static_cast<double>(state.iterations());
  state.counters["rows"] = static_cast<double>(t.rows);
  state.counters["sstables"] = static_cast<double>(t.sstables);
}

void BM_ViewAfterInsert(benchmark::State& state) { Run(state, /*upsert=*/false); }
void BM_ViewAfterUpsert(benchmark::State& state) { Run(state, /*upsert=*/true); }
BENCHMARK(BM_ViewAfterInsert)
    ->Arg(100000)
    ->Arg(1000000)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ViewAfterUpsert)
    ->Arg(100000)
    ->Arg(1000000)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

using strata::bench::RatioReporter;

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  for (int64_t n : {100000, 1000000}) {
    const BenchTable& t = TableOf(n);
    std::printf("%lld rows in %zu SSTables, loaded and flushed in %.1f s\n",
                static_cast<long long>(n), t.sstables, t.load_seconds);
  }
  std::fflush(stdout);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nRead view after a write (Snapshot + count, mean per iteration), 1M / 100k:\n");
  for (const char* name : {"BM_ViewAfterInsert", "BM_ViewAfterUpsert"}) {
    const auto& times = reporter.times();
    // Names carry the manual-time suffix: "BM_x/100000/manual_time".
    auto find = [&](int64_t n) {
      for (const auto& [k, v] : times) {
        if (k.rfind(std::string(name) + "/" + std::to_string(n) + "/", 0) == 0 ||
            k == std::string(name) + "/" + std::to_string(n)) {
          return v;
        }
      }
      return -1.0;
    };
    const double small = find(100000), large = find(1000000);
    if (small <= 0 || large <= 0) continue;
    std::printf("  %-20s 100k %10.1f us  1M %10.1f us  ratio %.2f\n", name, small, large,
                large / small);
  }
  benchmark::Shutdown();
  for (auto& [n, t] : Tables()) {
    t->table.reset();
    t->catalog.reset();
    std::filesystem::remove_all(t->dir);
    delete t;
  }
  return 0;
}
