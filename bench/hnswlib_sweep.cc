// hnswlib_sweep: the "physical reference" for Strata's HNSW search in `make bench-compare`
// (issue 7): hnswlib 0.6.2 used directly, in-process, with Strata's default HNSW parameters
// (index/vector/hnsw_index.h HnswParams: m 16, ef_construction 100), over Fashion-MNIST
// training images [0, N) as float32 raw pixels 0..255 (what Strata stores), L2.
//  1. Build: point 0 alone, then points 1..N-1 through addPoint from --build-threads threads
//     (hnswlib's per-node locks make concurrent inserts safe); reports seconds and rows/s.
//  2. Sweep: for each ef and each client count C, setEf(ef) (not thread-safe, so only between
//     rounds), then test images [0, Q) split into C contiguous shares, one thread each, searching
//     its share sequentially with searchKnn(q, 10) (thread-safe for concurrent searches).
//     Reports recall@10 against the exact ground truth of knn_ground_truth (--gt): a returned id
//     counts when it is in the true top 10 or its exact integer squared distance is <= the true
//     10th distance (ties at 10th place count); QPS = Q / wall seconds; per-query latency
//     p50/p99 (nearest rank) in ms.
// Output: JSON (written atomically, FILE.tmp then rename)
//   {"system":"hnswlib","version":"0.6.2","m":..,"ef_construction":..,"train":N,"queries":Q,
//    "build_seconds":..,"build_rows_per_s":..,"points":[{"ef":..,"clients":..,
//    "recall_at_10":..,"qps":..,"p50_ms":..,"p99_ms":..}]}
// and a table on stdout. Exit status 1 with a message naming the argument on bad input.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "index/vector/hnswlib_internal.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "../tests/index/fashion_mnist.h"
#include "write_file_atomically.h"

namespace {

namespace hnswlib = strata::index::hnswlib;
using Clock = std::chrono::steady_clock;
constexpr int64_t kRecallK = 10;

int Fail(const std::string& message) {
  std::cerr << "hnswlib_sweep: " << message << "\n";
  return 1;
}

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Exact squared L2 distance between two rows of `dim` bytes.
int64_t SquaredL2(const uint8_t* a, const uint8_t* b, int64_t dim) {
  int64_t s = 0;
  for (int64_t i = 0; i < dim; ++i) {
    const int32_t d = int32_t{a[i]} - int32_t{b[i]};
    s += d * d;
  }
  return s;
}

// Nearest-rank percentile of an ascending vector.
double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// The ground truth's first kRecallK ids and the kRecallK-th distance per query.
struct Truth {
  std::vector<std::vector<int64_t>> ids;
  std::vector<int64_t> tenth;
};

bool LoadTruth(const std::string& path, int64_t train, int64_t queries, Truth* out,
               std::string* error) {
  std::ifstream f(path);
  if (!f) {
    *error = "--gt: cannot open " + path;
    return false;
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(f);
    const int64_t gt_train = j.at("train").get<int64_t>();
    const int64_t gt_queries = j.at("queries").get<int64_t>();
    const int64_t gt_k = j.at("k").get<int64_t>();
    if (!j.at("label").is_null()) {
      *error = "--gt: " + path + " is a label-filtered ground truth; the sweep needs label null";
      return false;
    }
    if (gt_train != train) {
      *error = "--gt: " + path + " has train " + std::to_string(gt_train) + ", --train is " +
               std::to_string(train);
      return false;
    }
    if (gt_queries < queries) {
      *error = "--gt: " + path + " has " + std::to_string(gt_queries) + " queries, fewer than " +
               "--queries " + std::to_string(queries);
      return false;
    }
    if (gt_k < kRecallK) {
      *error = "--gt: " + path + " has k " + std::to_string(gt_k) + ", recall@10 needs k >= 10";
      return false;
    }
    const auto& ids = j.at("ids");
    const auto& dist = j.at("dist");
    out->ids.resize(static_cast<size_t>(queries));
    out->tenth.resize(static_cast<size_t>(queries));
    for (int64_t q = 0; q < queries; ++q) {
      const auto& row = ids.at(static_cast<size_t>(q));
      for (int64_t i = 0; i < kRecallK; ++i) {
        out->ids[static_cast<size_t>(q)].push_back(row.at(static_cast<size_t>(i)).get<int64_t>());
      }
      out->tenth[static_cast<size_t>(q)] =
          dist.at(static_cast<size_t>(q)).at(static_cast<size_t>(kRecallK - 1)).get<int64_t>();
    }
  } catch (const std::exception& e) {
    *error = "--gt: " + path + ": " + e.what();
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hnswlib 0.6.2 in-process recall/QPS sweep on Fashion-MNIST"};
  std::string dataset = strata::testing::FashionMnistDir();
  std::string gt_path, out_path;
  int64_t train = -1, queries = -1;
  int m = 16, ef_construction = 100, build_threads = 2;
  std::vector<int> efs = {10, 20, 40, 80, 160, 320};
  std::vector<int> clients = {1, 8};
  app.add_option("--dataset", dataset,
                 "Fashion-MNIST folder (default $STRATA_FASHION_MNIST_DIR or "
                 "/usr/share/datasets/fashion-mnist)");
  app.add_option("--train", train, "training images [0, N) indexed, N in [1, 60000]")->required();
  app.add_option("--queries", queries, "test images [0, Q) searched, Q in [1, 10000]")->required();
  app.add_option("--gt", gt_path, "ground truth JSON from knn_ground_truth (k >= 10)")->required();
  app.add_option("--m", m, "hnswlib M (Strata default 16)");
  app.add_option("--ef-construction", ef_construction, "hnswlib ef_construction (default 100)");
  app.add_option("--ef", efs, "comma-separated ef values")->delimiter(',');
  app.add_option("--clients", clients, "comma-separated client thread counts")->delimiter(',');
  app.add_option("--build-threads", build_threads, "insert threads (default 2)");
  app.add_option("--out", out_path, "output JSON file (written atomically)")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (train < 1 || train > 60000) {
    return Fail("--train must be in [1, 60000], got " + std::to_string(train));
  }
  if (queries < 1 || queries > 10000) {
    return Fail("--queries must be in [1, 10000], got " + std::to_string(queries));
  }
  if (train < kRecallK) return Fail("--train must be >= 10 for recall@10");
  if (m < 2 || m > 128) return Fail("--m must be in [2, 128], got " + std::to_string(m));
  if (ef_construction < m || ef_construction > 4096) {
    return Fail("--ef-construction must be in [m, 4096], got " + std::to_string(ef_construction));
  }
  if (build_threads < 1 || build_threads > 256) {
    return Fail("--build-threads must be in [1, 256], got " + std::to_string(build_threads));
  }
  if (efs.empty()) return Fail("--ef needs at least one value");
  for (int ef : efs) {
    if (ef < 1 || ef > 100000)
      return Fail("--ef values must be in [1, 100000], got " + std::to_string(ef));
  }
  if (clients.empty()) return Fail("--clients needs at least one value");
  for (int c : clients) {
    if (c < 1 || c > 1024)
      return Fail("--clients values must be in [1, 1024], got " + std::to_string(c));
  }

  std::string error;
  Truth truth;
  if (!LoadTruth(gt_path, train, queries, &truth, &error)) return Fail(error);
  strata::testing::IdxBytes train_img, test_img;
  if (!strata::testing::ReadFashionMnistBytes(dataset, train, queries, &train_img, &test_img,
                                              &error)) {
    return Fail("dataset: " + error);
  }
  const int64_t dim = train_img.item_size;
  std::vector<float> train_f(train_img.bytes.begin(), train_img.bytes.end());
  std::vector<float> test_f(test_img.bytes.begin(), test_img.bytes.end());

  // --- Build ---
  hnswlib::L2Space space(static_cast<size_t>(dim));
  hnswlib::HierarchicalNSW<float> index(&space, static_cast<size_t>(train), static_cast<size_t>(m),
                                        static_cast<size_t>(ef_construction));
  const auto b0 = Clock::now();
  try {
    index.addPoint(train_f.data(), 0);
    std::atomic<int64_t> next{1};
    auto inserter = [&] {
      for (int64_t i; (i = next.fetch_add(1)) < train;) {
        index.addPoint(train_f.data() + i * dim, static_cast<size_t>(i));
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < build_threads; ++t) pool.emplace_back(inserter);
    inserter();
    for (auto& th : pool) th.join();
  } catch (const std::exception& e) {
    return Fail(std::string("hnswlib addPoint: ") + e.what());
  }
  const double build_seconds = Seconds(b0, Clock::now());
  const double build_rate = static_cast<double>(train) / build_seconds;
  std::printf(
      "hnswlib 0.6.2: M %d, ef_construction %d, %lld x %lld-d, build %.2f s (%.0f rows/s, "
      "%d threads)\n",
      m, ef_construction, static_cast<long long>(train), static_cast<long long>(dim), build_seconds,
      build_rate, build_threads);
  std::printf("%6s %8s %12s %10s %9s %9s\n", "ef", "clients", "recall@10", "QPS", "p50 ms",
              "p99 ms");

  // --- Sweep ---
  nlohmann::json points = nlohmann::json::array();
  std::vector<std::vector<int64_t>> got(static_cast<size_t>(queries));
  std::vector<double> latency_ms(static_cast<size_t>(queries));
  for (int ef : efs) {
    index.setEf(static_cast<size_t>(ef));
    for (int c : clients) {
      auto client = [&](int64_t begin, int64_t end) {
        for (int64_t q = begin; q < end; ++q) {
          const auto t0 = Clock::now();
          auto pq = index.searchKnn(test_f.data() + q * dim, static_cast<size_t>(kRecallK));
          const auto t1 = Clock::now();
          latency_ms[static_cast<size_t>(q)] = Seconds(t0, t1) * 1e3;
          auto& row = got[static_cast<size_t>(q)];
          row.clear();
          while (!pq.empty()) {
            row.push_back(static_cast<int64_t>(pq.top().second));
            pq.pop();
          }
        }
      };
      const auto w0 = Clock::now();
      std::vector<std::thread> pool;
      for (int t = 0; t < c; ++t) {
        pool.emplace_back(client, queries * t / c, queries * (t + 1) / c);
      }
      for (auto& th : pool) th.join();
      const double wall = Seconds(w0, Clock::now());
      int64_t hits = 0;
      for (int64_t q = 0; q < queries; ++q) {
        const auto& want = truth.ids[static_cast<size_t>(q)];
        for (int64_t id : got[static_cast<size_t>(q)]) {
          if (std::find(want.begin(), want.end(), id) != want.end() ||
              SquaredL2(train_img.row(id), test_img.row(q), dim) <=
                  truth.tenth[static_cast<size_t>(q)]) {
            ++hits;
          }
        }
      }
      const double recall = static_cast<double>(hits) / static_cast<double>(queries * kRecallK);
      std::vector<double> sorted = latency_ms;
      std::sort(sorted.begin(), sorted.end());
      const double qps = static_cast<double>(queries) / wall;
      const double p50 = Percentile(sorted, 0.50), p99 = Percentile(sorted, 0.99);
      std::printf("%6d %8d %12.4f %10.0f %9.3f %9.3f\n", ef, c, recall, qps, p50, p99);
      std::fflush(stdout);
      points.push_back({{"ef", ef},
                        {"clients", c},
                        {"recall_at_10", recall},
                        {"qps", qps},
                        {"p50_ms", p50},
                        {"p99_ms", p99}});
    }
  }

  const nlohmann::json out = {{"system", "hnswlib"},
                              {"version", "0.6.2"},
                              {"m", m},
                              {"ef_construction", ef_construction},
                              {"train", train},
                              {"queries", queries},
                              {"build_seconds", build_seconds},
                              {"build_rows_per_s", build_rate},
                              {"points", points}};
  if (!strata::bench::WriteFileAtomically(out_path, out.dump(2) + "\n", &error)) return Fail(error);
  return 0;
}
