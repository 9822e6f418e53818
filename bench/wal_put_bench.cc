// Durable WAL put throughput and ack latency with and without group commit (Google
// Benchmark), issue 3. Each case runs W writer threads for about 1 s, each doing durable
// WalWriter::Append calls of B rows of (id int64, vector fixed_size_list<float32>[784]) to a
// LocalObjectStore in a temporary directory on this machine's disk (each entry put = write a
// temp file, fdatasync it, link it, fsync the directory). Counters: rows_per_s, p50_us /
// p99_us (ack latency of one Append), puts_per_fsync (appends per entry write), entries.
// BM_RawFdatasync is the reference: 4 KiB pwrite + fdatasync of one existing file (p50_us).
// Targets (issue 3): >= 8 puts per fsync with 16 writers of 1-row puts; durable p50 ack <= 2x
// raw fdatasync at 1 writer.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "arrow/builder.h"
#include "io/local_object_store.h"
#include "wal/wal_writer.h"

namespace {

using namespace strata;  // NOLINT
using Clock = std::chrono::steady_clock;

constexpr int32_t kDim = 784;
constexpr double kSecondsPerCase = 1.0;

arrow::SchemaPtr BenchSchema() {
  static const arrow::SchemaPtr s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false),
      arrow::field("vector",
                   arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
  return s;
}

arrow::RecordBatchPtr MakeRows(int64_t first, int64_t n) {
  std::mt19937 rng(static_cast<uint32_t>(first));
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<std::optional<int64_t>> ids;
  std::vector<float> v(static_cast<size_t>(n) * kDim);
  for (int64_t i = 0; i < n; ++i) ids.push_back(first + i);
  for (auto& x : v) x = u(rng);
  return std::make_shared<arrow::RecordBatch>(
      BenchSchema(), n,
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids),
                                       arrow::MakeVectorArray(v, kDim)});
}

struct TempDir {
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "strata-walbench-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string path;
};

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  size_t k = static_cast<size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

// Args: rows per put, writers, group commit (1/0).
void BM_WalPut(benchmark::State& state) {
  const int64_t batch_rows = state.range(0);
  const int writers = static_cast<int>(state.range(1));
  const bool group = state.range(2) != 0;
  for (auto _ : state) {
    TempDir dir;
    auto store = *io::LocalObjectStore::Open(dir.path);
    wal::WalWriterOptions opt;
    opt.group_commit = group;
    wal::WalWriter w(store, "db/t/_mem_wal/s", BenchSchema(), 1, opt);
    std::vector<arrow::RecordBatchPtr> batches;
    for (int t = 0; t < writers; ++t) batches.push_back(MakeRows(t * batch_rows, batch_rows));
    std::vector<std::vector<double>> lat(static_cast<size_t>(writers));
    std::atomic<int64_t> rows{0};
    std::atomic<bool> failed{false};
    const auto start = Clock::now();
    const auto end = start + std::chrono::duration<double>(kSecondsPerCase);
    std::vector<std::thread> threads;
    for (int t = 0; t < writers; ++t) {
      threads.emplace_back([&, t] {
        while (Clock::now() < end) {
          const auto t0 = Clock::now();
          auto r = w.Append({batches[static_cast<size_t>(t)]}, 1, {});
          const auto t1 = Clock::now();
          if (!r.ok()) {
            failed = true;
            return;
          }
          lat[static_cast<size_t>(t)].push_back(
              std::chrono::duration<double, std::micro>(t1 - t0).count());
          rows.fetch_add(batch_rows);
        }
      });
    }
    for (auto& th : threads) th.join();
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    if (failed) {
      state.SkipWithError("WAL append failed");
      return;
    }
    std::vector<double> all;
    for (auto& l : lat) all.insert(all.end(), l.begin(), l.end());
    auto s = w.stats();
    state.counters["rows_per_s"] = static_cast<double>(rows.load()) / secs;
    state.counters["p50_us"] = Percentile(all, 0.50);
    state.counters["p99_us"] = Percentile(all, 0.99);
    state.counters["puts_per_fsync"] =
        s.fsyncs ? static_cast<double>(s.appends) / static_cast<double>(s.fsyncs) : 0;
    state.counters["entries"] = static_cast<double>(s.entries_written);
    state.counters["MB_per_s"] = static_cast<double>(s.bytes_written) / secs / 1e6;
  }
}

void BM_RawFdatasync(benchmark::State& state) {
  TempDir dir;
  const std::string path = dir.path + "/raw";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
  std::string block(4096, 'x');
  std::vector<double> lat;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    if (::pwrite(fd, block.data(), block.size(), 0) != 4096 || ::fdatasync(fd) != 0) {
      state.SkipWithError("pwrite/fdatasync failed");
      break;
    }
    lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  ::close(fd);
  state.counters["p50_us"] = Percentile(lat, 0.50);
  state.counters["p99_us"] = Percentile(lat, 0.99);
}

// The floor of one entry put: what LocalObjectStore::PutIfAbsent does for a 4 KiB object
// (create temp file, write, fdatasync, link to the final name, unlink temp, fsync directory).
void BM_RawCreateSyncLink(benchmark::State& state) {
  TempDir dir;
  std::string block(4096, 'x');
  std::vector<double> lat;
  int64_t i = 0;
  const int dfd = ::open(dir.path.c_str(), O_RDONLY | O_DIRECTORY);
  for (auto _ : state) {
    const std::string tmp = dir.path + "/t" + std::to_string(i);
    const std::string fin = dir.path + "/f" + std::to_string(i++);
    const auto t0 = Clock::now();
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    bool ok = fd >= 0 && ::write(fd, block.data(), block.size()) == 4096 && ::fdatasync(fd) == 0;
    if (fd >= 0) ::close(fd);
    ok = ok && ::link(tmp.c_str(), fin.c_str()) == 0 && ::unlink(tmp.c_str()) == 0 &&
         ::fsync(dfd) == 0;
    if (!ok) {
      state.SkipWithError("create/fdatasync/link/fsync failed");
      break;
    }
    lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  ::close(dfd);
  state.counters["p50_us"] = Percentile(lat, 0.50);
  state.counters["p99_us"] = Percentile(lat, 0.99);
}

void Cases(benchmark::internal::Benchmark* b) {
  for (int group : {1, 0}) {
    for (int64_t rows : {1, 100, 1000}) {
      for (int writers : {1, 4, 16}) b->Args({rows, writers, group});
    }
  }
}

BENCHMARK(BM_RawFdatasync)->Iterations(500)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RawCreateSyncLink)->Iterations(500)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WalPut)
    ->ArgNames({"rows", "writers", "group"})
    ->Apply(Cases)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
