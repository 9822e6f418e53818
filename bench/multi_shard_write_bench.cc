// Multi-shard ingest at the storage level (issue 16; docs/SHARDING.md "All-or-nothing
// multi-shard writes"): C client threads each write batches of B rows of Fashion-MNIST shape
// (id int64 primary key, vector fixed_size_list<float32>[784], random keys), either
//   - "1 shard": ShardWriter::Put into one shard, or
//   - "N shards": the rows split by key % N and written with table::WriteAllOrNothing (a part
//     per shard, prepared in parallel, a commit record, then published),
// to a LocalObjectStore on this machine's disk (durable puts: every WAL entry and record is
// fsynced). The two layouts run in turns (ABABAB), each turn on a fresh directory for S
// seconds; reported: rows/s, p50 / p99 latency of one client write, and the CPU the process
// used (cores = CPU seconds / wall seconds; latency includes generating the batch), with the
// median over the turns and the ratio of the medians. That isolates what the write path itself
// gains or pays. The table level (STRATA_MSW_LEVEL=table, or both) writes the same batches through
// Table::Insert of a catalog table: unsharded against a bucket LSM write spec of N buckets
// (routing by the MemWAL bucket hash, one multi-shard write at a time per table, background
// compaction and GC on), the path every REST write takes after decoding. A write refused with
// Backpressure (the L0 stop while compaction catches up) is retried after 50 ms, as a client
// retries a 503, and counted.
// Environment: STRATA_MSW_SECONDS (4), STRATA_MSW_CLIENTS (4), STRATA_MSW_ROWS (1000),
// STRATA_MSW_SHARDS (4), STRATA_MSW_TURNS (3), STRATA_MSW_LEVEL (both | storage | table).
// `make bench-multi-shard` runs it.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "arrow/builder.h"
#include "io/local_object_store.h"
#include "shard/shard_writer.h"
#include "table/local_catalog.h"
#include "table/lsm_write_spec.h"
#include "table/multi_shard_write.h"
#include "table/primary_key.h"
#include "table/txn_log.h"

namespace {

using namespace strata;  // NOLINT
using Clock = std::chrono::steady_clock;

constexpr int32_t kDim = 784;
constexpr char kTable[] = "default/bench";

int64_t Env(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoll(v) > 0 ? std::atoll(v) : fallback;
}

arrow::SchemaPtr Schema() {
  static const arrow::SchemaPtr s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false),
      arrow::field("vector",
                   arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
  return s;
}

arrow::RecordBatchPtr Rows(const std::vector<int64_t>& keys, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<std::optional<int64_t>> ids(keys.begin(), keys.end());
  std::vector<float> v(keys.size() * kDim);
  for (auto& x : v) x = u(rng);
  return std::make_shared<arrow::RecordBatch>(
      Schema(), static_cast<int64_t>(keys.size()),
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids),
                                       arrow::MakeVectorArray(v, kDim)});
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Turn {
  double rows_per_s = 0, p50_ms = 0, p99_ms = 0, cores = 0;
  int64_t retries = 0;  // writes refused with Backpressure (503), retried like a client
};

// Runs `clients` threads calling `write(rng)` (one batch each; true: acknowledged, false: a
// Backpressure refusal, retried after 50 ms as a client would) for `seconds`.
template <typename Write>
Turn Drive(int64_t clients, int64_t rows, double seconds, int salt, const Write& write) {
  Turn out;
  std::atomic<int64_t> written{0}, retries{0};
  std::atomic<bool> stop{false};
  std::vector<std::vector<double>> lat(static_cast<size_t>(clients));
  const double cpu0 = CpuSeconds();
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int64_t c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      std::mt19937 rng(static_cast<uint32_t>(c * 7919 + salt));
      while (!stop.load()) {
        const auto start = Clock::now();
        if (!write(rng)) {
          retries.fetch_add(1);
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          continue;
        }
        lat[static_cast<size_t>(c)].push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        written.fetch_add(rows);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  out.cores = (CpuSeconds() - cpu0) / wall;
  out.rows_per_s = static_cast<double>(written.load()) / wall;
  out.retries = retries.load();
  std::vector<double> all;
  for (const auto& l : lat) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  if (!all.empty()) {
    out.p50_ms = all[all.size() / 2];
    out.p99_ms = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  }
  return out;
}

// The table level: Table::Insert of `rows`-row batches into a catalog table of `shards` bucket
// shards (1: no LSM write spec).
Turn RunTableTurn(int shards, int64_t clients, int64_t rows, double seconds) {
  const std::string dir =
      (std::filesystem::temp_directory_path() /
       ("strata-msw-table-" + std::to_string(::getpid()) + "-" + std::to_string(shards)))
          .string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Turn out;
  {
    auto store = *io::LocalObjectStore::Open(dir);
    table::LocalCatalog catalog(store, {}, {});
    std::optional<table::LsmWriteSpec> spec;
    if (shards > 1) {
      spec = table::LsmWriteSpec{};
      spec->mode = table::ShardingMode::kBucket;
      spec->column = "id";
      spec->num_buckets = shards;
    }
    auto t = catalog.CreateTable("default", "bench", *table::DeclarePrimaryKey(Schema(), {"id"}),
                                 {}, table::CreateMode::kCreate, spec);
    if (!t.ok()) {
      std::fprintf(stderr, "create: %s\n", t.status().ToString().c_str());
      std::exit(1);
    }
    std::shared_ptr<table::Table> table = *t;
    out = Drive(clients, rows, seconds, shards, [&](std::mt19937& rng) {
      std::uniform_int_distribution<int64_t> key(0, int64_t{1} << 40);
      std::vector<int64_t> keys(static_cast<size_t>(rows));
      for (auto& k : keys) k = key(rng);
      auto batch = Rows(keys, rng);
      auto r = table->Insert({std::make_shared<arrow::RecordBatch>(
          *table::DeclarePrimaryKey(Schema(), {"id"}), batch->num_rows(), batch->columns())});
      if (r.status().code() == StatusCode::kBackpressure) return false;
      if (!r.ok()) {
        std::fprintf(stderr, "insert: %s\n", r.status().ToString().c_str());
        std::exit(1);
      }
      return true;
    });
  }
  std::filesystem::remove_all(dir);
  return out;
}

Turn RunTurn(int shards, int64_t clients, int64_t rows, double seconds) {
  const std::string dir =
      (std::filesystem::temp_directory_path() /
       ("strata-msw-" + std::to_string(::getpid()) + "-" + std::to_string(shards)))
          .string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Turn out;
  {
    auto store = *io::LocalObjectStore::Open(dir);
    table::TxnLog log(store, kTable);
    std::vector<std::unique_ptr<shard::ShardWriter>> writers;
    for (int s = 0; s < shards; ++s) {
      shard::ShardWriterOptions o;
      o.primary_key = {"id"};
      o.txn_committed = [&log, id = "s" + std::to_string(s)](const std::string& txn,
                                                             uint64_t position) {
        return log.PartCommitted(txn, id, position);
      };
      auto w = shard::ShardWriter::Open(store, kTable, "s" + std::to_string(s), Schema(), o);
      if (!w.ok()) {
        std::fprintf(stderr, "open: %s\n", w.status().ToString().c_str());
        std::exit(1);
      }
      writers.push_back(std::move(*w));
    }
    out = Drive(clients, rows, seconds, shards, [&](std::mt19937& rng) {
      std::uniform_int_distribution<int64_t> key(0, int64_t{1} << 40);
      std::vector<std::vector<int64_t>> by_shard(static_cast<size_t>(shards));
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t k = key(rng);
        by_shard[static_cast<size_t>(k % shards)].push_back(k);
      }
      Status st;
      if (shards == 1) {
        st = writers[0]->Put({Rows(by_shard[0], rng)}).status();
      } else {
        std::vector<table::ShardWrite> parts;
        for (int s = 0; s < shards; ++s) {
          parts.push_back({writers[static_cast<size_t>(s)].get(),
                           {},
                           {Rows(by_shard[static_cast<size_t>(s)], rng)}});
        }
        st = table::WriteAllOrNothing(log, std::move(parts)).status();
      }
      if (st.code() == StatusCode::kBackpressure) return false;
      if (!st.ok()) {
        std::fprintf(stderr, "write: %s\n", st.ToString().c_str());
        std::exit(1);
      }
      return true;
    });
  }
  std::filesystem::remove_all(dir);
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main() {
  const double seconds = static_cast<double>(Env("STRATA_MSW_SECONDS", 4));
  const int64_t clients = Env("STRATA_MSW_CLIENTS", 4);
  const int64_t rows = Env("STRATA_MSW_ROWS", 1000);
  const int shards = static_cast<int>(Env("STRATA_MSW_SHARDS", 4));
  const int64_t turns = Env("STRATA_MSW_TURNS", 3);
  const char* level_env = std::getenv("STRATA_MSW_LEVEL");
  const std::string level = level_env != nullptr ? level_env : "both";
  std::printf(
      "multi-shard write bench: %lld clients, %lld-row batches (784-d float32), %d s "
      "per turn, %lld turns, %d hardware threads\n",
      static_cast<long long>(clients), static_cast<long long>(rows), static_cast<int>(seconds),
      static_cast<long long>(turns), static_cast<int>(std::thread::hardware_concurrency()));
  for (const std::string lvl : {"storage", "table"}) {
    if (level != "both" && level != lvl) continue;
    std::printf("-- %s level (%s)\n", lvl.c_str(),
                lvl == "storage" ? "ShardWriter::Put vs WriteAllOrNothing"
                                 : "Table::Insert, unsharded vs a bucket LSM write spec");
    std::vector<double> rps[2], p50[2], p99[2], cores[2];
    for (int64_t t = 0; t < turns; ++t) {
      for (int m = 0; m < 2; ++m) {
        const int n = m == 0 ? 1 : shards;
        const Turn r = lvl == "storage" ? RunTurn(n, clients, rows, seconds)
                                        : RunTableTurn(n, clients, rows, seconds);
        std::printf(
            "turn %lld  %d shard(s): %9.0f rows/s  p50 %7.1f ms  p99 %7.1f ms  %.2f cores  %lld "
            "503s\n",
            static_cast<long long>(t + 1), n, r.rows_per_s, r.p50_ms, r.p99_ms, r.cores,
            static_cast<long long>(r.retries));
        rps[m].push_back(r.rows_per_s);
        p50[m].push_back(r.p50_ms);
        p99[m].push_back(r.p99_ms);
        cores[m].push_back(r.cores);
      }
    }
    for (int m = 0; m < 2; ++m) {
      std::printf("median %d shard(s): %9.0f rows/s  p50 %7.1f ms  p99 %7.1f ms  %.2f cores\n",
                  m == 0 ? 1 : shards, Median(rps[m]), Median(p50[m]), Median(p99[m]),
                  Median(cores[m]));
    }
    std::printf("ratio %d shards / 1 shard: rows/s %.2fx, p50 %.2fx, cores %.2fx\n", shards,
                Median(rps[1]) / Median(rps[0]), Median(p50[1]) / Median(p50[0]),
                Median(cores[1]) / Median(cores[0]));
  }
  return 0;
}
