// Exact vector search throughput (Google Benchmark): query::VectorSearch over a snapshot of
// 60,000 x 784 float32 vectors (Fashion-MNIST's shape) in 60 batches of 1,000 rows, k = 10,
// for each distance type; bytes/s counts the vector bytes scanned per query (188 MB), and
// BM_ReadVectors sums the same floats, as the memory-bandwidth reference of the same run.
// BM_HttpQuery runs the same search through the REST server (in-process, loopback,
// httplib::Client): JSON body with 784 numbers, search, Arrow IPC file answer.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <vector>

#include <httplib.h>

#include <filesystem>
#include <string>

#include "arrow/builder.h"
#include "arrow/ipc/writer.h"
#include "query/vector_search.h"
#include "server/http_server.h"

namespace {

using namespace strata;  // NOLINT

constexpr int64_t kRows = 60000;
constexpr int64_t kBatchRows = 1000;
constexpr int32_t kDim = 784;

const table::TableSnapshot& Snapshot() {
  static const table::TableSnapshot snap = [] {
    table::TableSnapshot s;
    s.schema = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
        arrow::field("id", arrow::int64()),
        arrow::field("vector",
                     arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(0.0f, 255.0f);
    std::vector<float> v(kDim);
    std::vector<arrow::RecordBatchPtr> batches;
    for (int64_t start = 0; start < kRows; start += kBatchRows) {
      arrow::RecordBatchBuilder b(s.schema);
      for (int64_t r = start; r < start + kBatchRows; ++r) {
        (void)b.column(0)->AppendInt(r);
        for (auto& x : v) x = u(rng);
        (void)b.column(1)->child(0)->AppendFloats(v.data(), kDim);
        (void)b.column(1)->AppendValid();
      }
      batches.push_back(b.Finish().value());
    }
    s.shard = shard::ViewOfBatches(s.schema, batches);
    s.num_rows = kRows;
    return s;
  }();
  return snap;
}

void BM_VectorSearch(benchmark::State& state) {
  const auto& snap = Snapshot();
  query::VectorSearchOptions o;
  o.query.assign(kDim, 100.0f);
  o.k = 10;
  o.distance = static_cast<query::DistanceType>(state.range(0));
  o.columns = {{"id", ""}};
  for (auto _ : state) {
    auto r = query::VectorSearch(snap, o);
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(state.iterations() * kRows * kDim * 4);
  state.SetLabel(query::DistanceTypeName(o.distance));
}
BENCHMARK(BM_VectorSearch)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

void BM_ReadVectors(benchmark::State& state) {
  const auto& snap = Snapshot();
  for (auto _ : state) {
    float acc[16] = {};
    for (const auto& b : snap.shard->sources[0].batches) {
      const float* p = b->column(1).child(0).raw_values<float>();
      const int64_t n = b->num_rows() * kDim;
      for (int64_t i = 0; i + 16 <= n; i += 16) {
        for (int l = 0; l < 16; ++l) acc[l] += p[i + l];
      }
    }
    benchmark::DoNotOptimize(acc);
  }
  state.SetBytesProcessed(state.iterations() * kRows * kDim * 4);
}
BENCHMARK(BM_ReadVectors)->Unit(benchmark::kMillisecond);

void BM_HttpQuery(benchmark::State& state) {
  const auto& snap = Snapshot();
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "strata-vector-search-bench";
  fs::remove_all(dir);
  server::ServerOptions opts;
  opts.data_dir = dir.string();
  opts.port = 0;
  opts.max_body_bytes = int64_t{1} << 30;
  auto srv = server::HttpServer::Start(opts);
  if (!srv.ok()) return state.SkipWithError(srv.status().ToString().c_str());
  httplib::Client cli("127.0.0.1", (*srv)->port());
  auto stream = arrow::ipc::WriteStream(*snap.schema, snap.shard->sources[0].batches.ToVector());
  auto created =
      cli.Post("/v1/table/bench/create/", *stream, "application/vnd.apache.arrow.stream");
  if (!created || created->status != 200) return state.SkipWithError("create failed");
  std::string body = "{\"k\":10,\"columns\":[\"id\"],\"vector\":[";
  for (int i = 0; i < kDim; ++i) body += (i ? "," : "") + std::to_string(100.0 + i % 7);
  body += "]}";
  for (auto _ : state) {
    auto r = cli.Post("/v1/table/bench/query/", body, "application/json");
    if (!r || r->status != 200) return state.SkipWithError("query failed");
    benchmark::DoNotOptimize(r->body.size());
  }
  (*srv)->Stop();
  fs::remove_all(dir);
}
BENCHMARK(BM_HttpQuery)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
