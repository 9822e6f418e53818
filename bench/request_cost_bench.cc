// Per-request cost of a vector query through the server (issue "Query path near the engine's
// limit", `make bench-request`): a lean HTTP client (wrk, from Debian) against `strata serve`,
// next to raw hnswlib in-process on the same data, graph parameters, ef and queries.
//
// Data: Fashion-MNIST (60,000 training images, 784-d float32 pixels, l2; Debian's
// dataset-fashion-mnist), table `fashion` (id int64 primary key, vec), HNSW M 16,
// ef_construction 100. Queries: the first test images as JSON bodies
// {"vector": [...784 numbers...], "k": 10, "ef": 20, "columns": ["id"]}; wrk rotates over 100
// of them. Two layouts of the same 60,000 rows:
//   base+mem  59,000 rows compacted into the base, 1,000 in the active MemTable
//   4 tiers   3 SSTables (59,000 rows) and 1,000 rows in the active MemTable (no base)
// For each layout and 1 and 8 connections: q/s, mean latency and server CPU per query
// (utime+stime of the server process from /proc over the run / requests), median of
// STRATA_REQUEST_BENCH_ROUNDS (3) runs of STRATA_REQUEST_BENCH_SECONDS (5) each. Recall@10 of
// both Strata layouts (in-process, same ef) and of hnswlib against exact search is printed.
// Then a primary-key point query at 1 connection: {"filter": "id = N", "k": 1, "columns":
// ["id"]}, wrk rotating over 100 ids spread over the table (a scan through the key index).
// Then both queries again at 1 connection from a client that polls its socket instead of
// sleeping (spin_client.h): wrk's own wake-up from a halted vCPU is part of its round trip on
// this VM, and the issue asks for a client that is not the bottleneck.
// Usage: request_cost_bench STRATA_BINARY (wrk must be on PATH: scripts/install-deps).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hnswlib/hnswlib.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "../tests/index/fashion_mnist.h"
#include "arrow/builder.h"
#include "index/index_spec.h"
#include "knn_ground_truth.h"
#include "query/vector_search.h"
#include "spin_client.h"
#include "table/catalog.h"
#include "table/primary_key.h"

namespace {

using namespace strata;  // NOLINT
using Clock = std::chrono::steady_clock;
constexpr int64_t kRows = 60000;
constexpr int64_t kMemRows = 1000;
constexpr int kK = 10;
constexpr int kEf = 20;
constexpr int kRecallQueries = 500;
constexpr int kWrkQueries = 100;

int EnvInt(const char* name, int fallback, int min_value) {
  const char* s = std::getenv(name);
  return s ? std::max(min_value, std::atoi(s)) : fallback;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Data {
  int64_t dim = 0;
  std::vector<uint8_t> train, test;
  const uint8_t* row(int64_t i) const { return train.data() + i * dim; }
  const uint8_t* query(int64_t i) const { return test.data() + i * dim; }
};

arrow::SchemaPtr Schema(int64_t dim) {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false),
      arrow::field("vec", arrow::fixed_size_list(arrow::field("item", arrow::float32()),
                                                 static_cast<int32_t>(dim)))});
  return *table::DeclarePrimaryKey(s, {"id"});
}

std::vector<float> Floats(const uint8_t* p, int64_t dim) { return {p, p + dim}; }

void Check(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "request_cost_bench: %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

template <typename T>
void Check(const Result<T>& r, const char* what) {
  if (!r.ok()) Check(r.status(), what);
}

void Insert(table::Table& t, const Data& d, int64_t first, int64_t last) {
  for (int64_t b0 = first; b0 < last; b0 += 1000) {
    arrow::RecordBatchBuilder b(Schema(d.dim));
    for (int64_t i = b0; i < std::min(last, b0 + 1000); ++i) {
      (void)b.column(0)->AppendInt(i);
      const auto v = Floats(d.row(i), d.dim);
      (void)b.column(1)->child(0)->AppendFloats(v.data(), d.dim);
      (void)b.column(1)->AppendValid();
    }
    Check(t.Insert({*b.Finish()}), "insert");
  }
}

double RecallOf(const std::vector<std::vector<int64_t>>& got, const bench::KnnGroundTruth& gt) {
  int64_t hit = 0;
  for (int64_t q = 0; q < gt.queries; ++q) {
    for (int64_t id : got[static_cast<size_t>(q)]) {
      for (int j = 0; j < kK; ++j) hit += gt.ids[static_cast<size_t>(q * gt.k + j)] == id;
    }
  }
  return static_cast<double>(hit) / static_cast<double>(gt.queries * kK);
}

struct EngineFigures {
  double recall = 0, qps = 0;
};

// Builds the layout under `dir`; returns its recall@10 at ef 20 and the q/s of
// query::VectorSearch on it (in-process, one thread: the engine without HTTP and JSON).
EngineFigures BuildLayout(const std::string& dir, const Data& d, bool compact,
                          const bench::KnnGroundTruth& gt, int rounds) {
  base::CompactionOptions co;
  co.background = false;
  auto catalog = std::move(table::Catalog::Open(dir, {}, co)).value();
  auto t = std::move(catalog->CreateTable("default", "fashion", Schema(d.dim), {},
                                          table::CreateMode::kCreate))
               .value();
  index::IndexSpec hnsw;
  hnsw.kind = index::IndexKind::kHnsw;
  hnsw.column = "vec";
  hnsw.name = "vec_idx";
  hnsw.requested_type = "HNSW";
  Check(t->CreateIndex(hnsw), "create index");
  const auto deadline = [] { return Clock::now() + std::chrono::minutes(30); };
  const int64_t flushed = kRows - kMemRows;
  const int parts = compact ? 1 : 3;
  for (int p = 0; p < parts; ++p) {
    Insert(*t, d, flushed * p / parts, flushed * (p + 1) / parts);
    Check(t->Flush(deadline()), "flush");
  }
  if (compact) Check(t->Compact(deadline()), "compact");
  Insert(*t, d, flushed, kRows);
  const table::TableSnapshot snap = t->Snapshot();
  std::vector<query::VectorSearchOptions> opts(kRecallQueries);
  for (int q = 0; q < kRecallQueries; ++q) {
    opts[q].query = Floats(d.query(q), d.dim);
    opts[q].k = kK;
    opts[q].ef = kEf;
    opts[q].columns = {query::ColumnRef{"id"}};
  }
  std::vector<std::vector<int64_t>> got;
  for (const auto& o : opts) {
    auto r = query::VectorSearch(snap, o);
    if (!r.ok()) Check(r.status(), "search");
    std::vector<int64_t> row;
    for (const auto& batch : r->batches) {
      const arrow::Array ids = batch->column(0);
      for (int64_t i = 0; i < batch->num_rows(); ++i) row.push_back(ids.raw_values<int64_t>()[i]);
    }
    got.push_back(row);
  }
  EngineFigures f;
  f.recall = RecallOf(got, gt);
  std::vector<double> qps;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = Clock::now();
    for (const auto& o : opts) Check(query::VectorSearch(snap, o), "search");
    qps.push_back(static_cast<double>(opts.size()) /
                  std::chrono::duration<double>(Clock::now() - t0).count());
  }
  f.qps = Median(qps);
  // STRATA_REQUEST_BENCH_PROFILE=S: search in-process for S more seconds (for perf).
  if (const char* prof = std::getenv("STRATA_REQUEST_BENCH_PROFILE")) {
    std::printf("  (profiling: searching in-process for %s s)\n", prof);
    std::fflush(stdout);
    const auto end = Clock::now() + std::chrono::seconds(std::atoi(prof));
    while (Clock::now() < end) {
      for (const auto& o : opts) Check(query::VectorSearch(snap, o), "search");
    }
  }
  return f;
}

struct Server {
  pid_t pid = -1;
  int port = 0;
};

// `command`: the strata binary and extra `serve` flags, separated by spaces.
Server StartServer(const std::string& command, const std::string& dir) {
  std::vector<std::string> words;
  for (size_t at = 0; at < command.size();) {
    const size_t end = std::min(command.find(' ', at), command.size());
    if (end > at) words.push_back(command.substr(at, end - at));
    at = end + 1;
  }
  int out[2];
  if (pipe(out) != 0) std::exit(1);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    const std::string log = dir + "/server.log";
    FILE* err = std::fopen(log.c_str(), "w");
    if (err != nullptr) dup2(fileno(err), 2);
    std::vector<std::string> args = {words[0],
                                     "serve",
                                     "--data",
                                     dir,
                                     "--port",
                                     "0",
                                     "--max-memtable-age-ms",
                                     "3600000",
                                     "--no-background-compaction"};
    args.insert(args.end(), words.begin() + 1, words.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  FILE* f = fdopen(out[0], "r");
  char line[512];
  Server s;
  s.pid = pid;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    const char* p = std::strstr(line, "listening on http://");
    if (p != nullptr) {
      const char* colon = std::strrchr(p, ':');
      s.port = std::atoi(colon + 1);
      break;
    }
  }
  if (s.port == 0) {
    std::fprintf(stderr, "request_cost_bench: the server did not start (see %s/server.log)\n",
                 dir.c_str());
    std::exit(1);
  }
  return s;
}

// Waits until every index the server reports has indexed every row of its source (after a
// restart the server rebuilds what its checkpoints do not cover, and scans exactly meanwhile).
void WaitForIndexes(const Server& s) {
  httplib::Client c("127.0.0.1", s.port);
  const auto t0 = Clock::now();
  for (;;) {
    auto r = c.Post("/v1/table/fashion/mem_wal/describe/", "{}", "application/json");
    bool ready = r && r->status == 200;
    if (ready) {
      const auto j = nlohmann::json::parse(r->body);
      for (const auto& i : j["base"]["indexes"]) {
        ready = ready && i["rows_indexed"] == j["base"]["rows"];
      }
      for (const auto& i : j["shards"][0]["indexes"]) {
        ready = ready && i["rows_indexed"] == j["shards"][0]["active"]["rows"];
      }
    }
    if (ready) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::printf("  (indexes ready %.1f s after the server started)\n",
              std::chrono::duration<double>(Clock::now() - t0).count());
}

void StopServer(const Server& s) {
  kill(s.pid, SIGTERM);
  int status = 0;
  waitpid(s.pid, &status, 0);
}

double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close_paren = all.rfind(')');
  std::vector<std::string> fields;
  std::string cur;
  for (size_t i = close_paren + 2; i < all.size(); ++i) {
    if (all[i] == ' ') {
      fields.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(all[i]);
    }
  }
  // Fields after "(comm)": state is index 0; utime and stime are 11 and 12.
  const double ticks = std::atof(fields.at(11).c_str()) + std::atof(fields.at(12).c_str());
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Writes a wrk script at `path` that POSTs `bodies` (JSON) to the query route in turn.
std::string WriteQueryScript(const std::string& path, const std::vector<std::string>& bodies) {
  std::ofstream out(path);
  out << "local bodies = {\n";
  for (const std::string& b : bodies) out << "'" << b << "',\n";
  out << "}\nlocal i = 0\n"
         "local headers = {[\"Content-Type\"] = \"application/json\"}\n"
         "request = function()\n"
         "  i = i % #bodies + 1\n"
         "  return wrk.format(\"POST\", \"/v1/table/fashion/query/\", headers, bodies[i])\n"
         "end\n";
  return path;
}

std::vector<std::string> QueryBodies(const Data& d) {
  std::vector<std::string> bodies;
  for (int q = 0; q < kWrkQueries; ++q) {
    std::string b = "{\"vector\":[";
    for (int64_t i = 0; i < d.dim; ++i) {
      b += (i ? "," : "") + std::to_string(int{d.query(q)[i]});
    }
    b += "],\"k\":" + std::to_string(kK) + ",\"ef\":" + std::to_string(kEf) +
         ",\"columns\":[\"id\"]}";
    bodies.push_back(std::move(b));
  }
  return bodies;
}

// Point queries by primary key (ids spread over the table's rows).
std::vector<std::string> KeyLookupBodies() {
  std::vector<std::string> bodies;
  for (int q = 0; q < kWrkQueries; ++q) {
    bodies.push_back("{\"filter\":\"id = " + std::to_string((q * 599 + 7) % kRows) +
                     "\",\"k\":1,\"columns\":[\"id\"]}");
  }
  return bodies;
}

struct WrkRun {
  double qps = 0, mean_us = 0, cpu_us_per_query = 0;
};

std::optional<WrkRun> RunWrk(const Server& s, const std::string& script, int conns, int seconds) {
  const std::string cmd = "wrk -t" + std::to_string(std::min(conns, 2)) + " -c" +
                          std::to_string(conns) + " -d" + std::to_string(seconds) +
                          "s --latency -s " + script +
                          " http://127.0.0.1:" + std::to_string(s.port) + "/ 2>&1";
  const double cpu0 = CpuSeconds(s.pid);
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return std::nullopt;
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  if (pclose(p) != 0) {
    std::fprintf(stderr, "request_cost_bench: wrk failed:\n%s\n", out.c_str());
    return std::nullopt;
  }
  const double cpu = CpuSeconds(s.pid) - cpu0;
  if (out.find("Non-2xx") != std::string::npos || out.find("Socket errors") != std::string::npos) {
    std::fprintf(stderr, "request_cost_bench: errors in the wrk run:\n%s\n", out.c_str());
    std::exit(1);
  }
  WrkRun r;
  const size_t rps = out.find("Requests/sec:");
  const size_t reqs = out.find(" requests in ");
  if (rps == std::string::npos || reqs == std::string::npos) return std::nullopt;
  r.qps = std::atof(out.c_str() + rps + 13);
  size_t start = out.rfind('\n', reqs);
  const double requests = std::atof(out.c_str() + (start == std::string::npos ? 0 : start + 1));
  const size_t lat = out.find("Latency");
  if (lat != std::string::npos) {
    char* end = nullptr;
    double v = std::strtod(out.c_str() + lat + 7, &end);
    if (end != nullptr && std::strncmp(end, "ms", 2) == 0) v *= 1000;
    if (end != nullptr && end[0] == 's') v *= 1e6;
    r.mean_us = v;
  }
  r.cpu_us_per_query = requests > 0 ? cpu * 1e6 / requests : 0;
  return r;
}

// The busy-polling client (spin_client.h) at 1 connection: median q/s, mean latency and
// server CPU per query of `rounds` runs.
std::optional<WrkRun> RunSpin(const Server& s, const std::vector<std::string>& bodies, int seconds,
                              int rounds) {
  std::vector<double> qps, mean, cpu;
  for (int r = 0; r < rounds; ++r) {
    const double cpu0 = CpuSeconds(s.pid);
    auto run = bench::RunSpinClient(s.port, "/v1/table/fashion/query/", bodies, seconds);
    if (!run) return std::nullopt;
    qps.push_back(run->qps);
    mean.push_back(run->mean_us);
    cpu.push_back((CpuSeconds(s.pid) - cpu0) * 1e6 / static_cast<double>(run->requests));
  }
  return WrkRun{Median(qps), Median(mean), Median(cpu)};
}

struct RawFigures {
  double qps = 0, recall = 0;
};

RawFigures RawHnswlib(const Data& d, const bench::KnnGroundTruth& gt, int rounds) {
  hnswlib::L2Space space(static_cast<size_t>(d.dim));
  hnswlib::HierarchicalNSW<float> g(&space, kRows, 16, 100, 100);
  for (int64_t i = 0; i < kRows; ++i) {
    const auto v = Floats(d.row(i), d.dim);
    g.addPoint(v.data(), static_cast<hnswlib::labeltype>(i));
  }
  g.setEf(kEf);
  std::vector<std::vector<float>> queries;
  for (int q = 0; q < kRecallQueries; ++q) queries.push_back(Floats(d.query(q), d.dim));
  RawFigures f;
  std::vector<std::vector<int64_t>> got(queries.size());
  std::vector<double> qps;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = Clock::now();
    for (size_t q = 0; q < queries.size(); ++q) {
      auto res = g.searchKnn(queries[q].data(), kK);
      if (r == 0) {
        while (!res.empty()) {
          got[q].push_back(static_cast<int64_t>(res.top().second));
          res.pop();
        }
      }
    }
    qps.push_back(static_cast<double>(queries.size()) /
                  std::chrono::duration<double>(Clock::now() - t0).count());
  }
  f.qps = Median(qps);
  f.recall = RecallOf(got, gt);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: request_cost_bench 'STRATA_BINARY [serve flags...]' [...]\n"
                 "  each argument is one server to measure (side by side on the same data)\n");
    return 2;
  }
  const std::vector<std::string> servers(argv + 1, argv + argc);
  if (std::system("wrk -v >/dev/null 2>&1") == 127 * 256) {
    std::fprintf(stderr, "request_cost_bench: wrk not found (scripts/install-deps installs it)\n");
    return 1;
  }
  if (!testing::FashionMnistAvailable()) {
    std::printf("Fashion-MNIST not found under %s: nothing measured\n",
                testing::FashionMnistDir().c_str());
    return 0;
  }
  const int seconds = EnvInt("STRATA_REQUEST_BENCH_SECONDS", 5, 1);
  const int rounds = EnvInt("STRATA_REQUEST_BENCH_ROUNDS", 3, 1);
  Data d;
  {
    testing::IdxBytes train, test;
    std::string err;
    if (!testing::ReadIdxUbyte(testing::FashionMnistTrainPath(), 3, kRows, &train, &err) ||
        !testing::ReadIdxUbyte(testing::FashionMnistTestPath(), 3, kRecallQueries, &test, &err)) {
      std::fprintf(stderr, "request_cost_bench: %s\n", err.c_str());
      return 1;
    }
    d.dim = train.item_size;
    d.train = std::move(train.bytes);
    d.test = std::move(test.bytes);
  }
  std::vector<int32_t> all(kRows);
  for (int64_t i = 0; i < kRows; ++i) all[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  const bench::KnnGroundTruth gt =
      bench::ExactKnnL2U8(d.train.data(), all, d.test.data(), kRecallQueries, d.dim, kK, 2);

  const std::string root = (std::filesystem::temp_directory_path() /
                            ("strata-request-bench-" + std::to_string(getpid())))
                               .string();
  std::printf(
      "request_cost_bench: Fashion-MNIST %lld x %lld-d, k %d, ef %d, columns [id]; wrk %d s x "
      "%d rounds (median)\n",
      static_cast<long long>(kRows), static_cast<long long>(d.dim), kK, kEf, seconds, rounds);
  const RawFigures raw = RawHnswlib(d, gt, rounds);
  std::printf(
      "[figures] raw hnswlib (in-process, 1 thread): %.0f q/s, %.1f us/query, recall@10 "
      "%.4f\n",
      raw.qps, 1e6 / raw.qps, raw.recall);
  std::fflush(stdout);

  const std::pair<const char*, bool> layouts[] = {{"base+mem", true}, {"4 tiers", false}};
  for (const auto& [name, compact] : layouts) {
    const std::string dir = root + "/" + (compact ? "base" : "tiers");
    const EngineFigures engine = BuildLayout(dir, d, compact, gt, rounds);
    std::printf(
        "[figures] %-8s engine in-process (1 thread): %.0f q/s (%.2fx raw hnswlib), "
        "%.1f us/query, recall@10 %.4f\n",
        name, engine.qps, engine.qps / raw.qps, 1e6 / engine.qps, engine.recall);
    const std::vector<std::string> bodies = QueryBodies(d);
    const std::string script = WriteQueryScript(dir + "/query.lua", bodies);
    for (const std::string& command : servers) {
      const Server s = StartServer(command, dir);
      WaitForIndexes(s);
      if (servers.size() > 1) std::printf("  server: %s\n", command.c_str());
      for (int conns : {1, 8}) {
        std::vector<double> qps, mean, cpu;
        for (int r = 0; r < rounds; ++r) {
          auto w = RunWrk(s, script, conns, seconds);
          if (!w) {
            StopServer(s);
            return 1;
          }
          qps.push_back(w->qps);
          mean.push_back(w->mean_us);
          cpu.push_back(w->cpu_us_per_query);
        }
        std::printf(
            "[figures] %-8s %d conn: %6.0f q/s (%.2fx raw hnswlib), mean %.0f us, server CPU "
            "%.0f us/query\n",
            name, conns, Median(qps), Median(qps) / raw.qps, Median(mean), Median(cpu));
        std::fflush(stdout);
      }
      {
        std::vector<double> qps, cpu;
        const std::string lookup = WriteQueryScript(dir + "/lookup.lua", KeyLookupBodies());
        for (int r = 0; r < rounds; ++r) {
          auto w = RunWrk(s, lookup, 1, seconds);
          if (!w) {
            StopServer(s);
            return 1;
          }
          qps.push_back(w->qps);
          cpu.push_back(w->cpu_us_per_query);
        }
        std::printf("[figures] %-8s key lookup 1 conn: %6.0f q/s, server CPU %.0f us/query\n", name,
                    Median(qps), Median(cpu));
        std::fflush(stdout);
      }
      // The same queries from a client that polls instead of sleeping (spin_client.h): the
      // round trip without the client's own wake-up.
      for (const auto& [what, b] :
           {std::pair<const char*, std::vector<std::string>>{"vector", bodies},
            {"key lookup", KeyLookupBodies()}}) {
        auto w = RunSpin(s, b, seconds, rounds);
        if (!w) {
          StopServer(s);
          return 1;
        }
        const std::string ratio =
            std::strcmp(what, "vector") == 0
                ? " (" + std::to_string(w->qps / raw.qps).substr(0, 4) + "x raw hnswlib)"
                : "";
        std::printf(
            "[figures] %-8s %s 1 conn, busy-polling client: %6.0f q/s%s, mean %.0f us, server "
            "CPU %.0f us/query\n",
            name, what, w->qps, ratio.c_str(), w->mean_us, w->cpu_us_per_query);
        std::fflush(stdout);
      }
      StopServer(s);
    }
  }
  if (std::getenv("STRATA_REQUEST_BENCH_KEEP") == nullptr) std::filesystem::remove_all(root);
  return 0;
}
