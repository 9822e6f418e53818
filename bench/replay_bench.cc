// Time to the first answer after a restart with a full MemTable (issue "Reads that stay fast
// as a table grows": a table with a full MemTable of 100k rows answers its first query
// within 2 s of start). A primary-key table (id int64, vec fixed_size_list<float32>[64]) with
// an HNSW index (M 16, ef_construction 100, l2) created on the empty table takes N rows in
// 1,000-row durable puts, all in the active MemTable (no seal, no flush); the catalog is
// closed (the WAL holds the rows) and opened again. Reported, for N = 50,000 and 100,000
// (or the sizes given as arguments): the open (claim + WAL replay) time, the first vector
// search (k 10) and count after it, and the time until the MemTable's HNSW is complete again
// (index/{n}/stats/ num_unindexed_rows = 0), each from the start of the open. One run per
// size: a whole-process figure, not a microbenchmark.
// Usage: replay_bench [rows...]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "arrow/builder.h"
#include "query/scan.h"
#include "query/vector_search.h"
#include "table/catalog.h"
#include "table/primary_key.h"

namespace {

using namespace strata;  // NOLINT
using SteadyClock = std::chrono::steady_clock;

constexpr int32_t kDim = 64;
constexpr int64_t kPutRows = 1000;

arrow::SchemaPtr BenchSchema() {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), /*nullable=*/false),
      arrow::field("vec", arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
  return table::DeclarePrimaryKey(s, {"id"}).value();
}

arrow::RecordBatchPtr Rows(const arrow::SchemaPtr& schema, int64_t first, int64_t last,
                           std::mt19937& rng) {
  std::vector<std::optional<int64_t>> ids;
  std::vector<float> vecs;
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (int64_t id = first; id < last; ++id) {
    ids.push_back(id);
    for (int d = 0; d < kDim; ++d) vecs.push_back(g(rng));
  }
  return std::make_shared<arrow::RecordBatch>(
      schema, last - first,
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids),
                                       arrow::MakeVectorArray(vecs, kDim)});
}

void Check(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "replay_bench: %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

double Seconds(SteadyClock::time_point from) {
  return std::chrono::duration<double>(SteadyClock::now() - from).count();
}

void RunSize(int64_t n) {
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("strata-replay-bench-" + std::to_string(::getpid())))
                              .string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  shard::ShardWriterOptions o;
  o.max_memtable_rows = n + 1;
  o.max_memtable_bytes = int64_t{1} << 40;
  o.max_unflushed_bytes = int64_t{1} << 40;
  o.max_memtable_age = std::chrono::hours(24);
  const arrow::SchemaPtr schema = BenchSchema();
  double load_seconds = 0;
  {
    auto catalog = table::Catalog::Open(dir, o);
    Check(catalog.status(), "open catalog");
    auto t = (*catalog)->CreateTable("default", "t", schema, {}, table::CreateMode::kCreate);
    Check(t.status(), "create table");
    index::IndexSpec spec;
    spec.kind = index::IndexKind::kHnsw;
    spec.column = "vec";
    spec.name = "vec_idx";
    spec.requested_type = "HNSW";
    spec.hnsw.distance = index::DistanceType::kL2;
    Check((*t)->CreateIndex(spec).status(), "create index");
    std::mt19937 rng(7);
    const auto t0 = SteadyClock::now();
    for (int64_t first = 0; first < n; first += kPutRows) {
      Check((*t)->Insert({Rows(schema, first, std::min(n, first + kPutRows), rng)}).status(),
            "insert");
    }
    load_seconds = Seconds(t0);
  }  // closed: the rows are in the WAL only

  const auto start = SteadyClock::now();
  auto catalog = table::Catalog::Open(dir, o);
  Check(catalog.status(), "reopen catalog");
  auto t = (*catalog)->GetTable("default", "t");
  Check(t.status(), "open table");
  const double open_seconds = Seconds(start);
  query::VectorSearchOptions vs;
  vs.query.assign(kDim, 0.1f);
  vs.k = 10;
  auto hits = query::VectorSearch((*t)->Snapshot(), vs);
  Check(hits.status(), "first vector search");
  const double first_search_seconds = Seconds(start);
  auto count = query::CountRows((*t)->Snapshot(), std::nullopt);
  Check(count.status(), "count");
  if (*count != n || hits->num_rows != 10) {
    std::fprintf(stderr, "replay_bench: %lld rows (expected %lld), %lld hits\n",
                 static_cast<long long>(*count), static_cast<long long>(n),
                 static_cast<long long>(hits->num_rows));
    std::exit(1);
  }
  double indexed_seconds = -1;
  while (Seconds(start) < 600) {
    const auto stats = (*t)->ListIndexes();
    if (!stats.empty() && stats.front().num_unindexed_rows == 0) {
      indexed_seconds = Seconds(start);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::printf(
      "%8lld rows: load %.2f s; after restart: open %.3f s, first vector search %.3f s, "
      "index complete %.3f s\n",
      static_cast<long long>(n), load_seconds, open_seconds, first_search_seconds, indexed_seconds);
  std::fflush(stdout);
  t->reset();
  catalog->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty()) sizes = {50000, 100000};
  for (int64_t n : sizes) RunSize(n);
  return 0;
}
