// knn_ground_truth: exact top-K squared-L2 neighbours of Fashion-MNIST test images [0, Q) among
// training images [0, N) (optionally only those with one class label), in integer arithmetic
// (bench/knn_ground_truth.h), written as JSON for `make bench-compare` (issue 7):
//   {"dataset":"fashion-mnist","train":N,"queries":Q,"k":K,"label":L or null,
//    "ids":[[id,...] per query],"dist":[[squared l2,...] per query]}
// Neighbours are nearest first, ties broken by the smaller training id. The file is written
// atomically (FILE.tmp, then rename). Exit status 0 on success, 1 on bad arguments or I/O errors
// (with a message on stderr naming the argument and its limit).
// Usage: knn_ground_truth [--dataset DIR] --train N --queries Q --k K [--label L]
//                         [--threads T] --out FILE
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "../tests/index/fashion_mnist.h"
#include "knn_ground_truth.h"
#include "write_file_atomically.h"

namespace {

constexpr int64_t kMaxTrain = 60000;
constexpr int64_t kMaxQueries = 10000;

int Fail(const std::string& message) {
  std::cerr << "knn_ground_truth: " << message << "\n";
  return 1;
}

// The JSON answer (format in knn_ground_truth.h's tool docs), written atomically to `path`.
bool WriteJson(const std::string& path, int64_t train, int64_t label,
               const strata::bench::KnnGroundTruth& gt, std::string* error) {
  std::string s;
  s.reserve(static_cast<size_t>(gt.queries * gt.k * 14 + 256));
  s += "{\"dataset\":\"fashion-mnist\",\"train\":" + std::to_string(train) +
       ",\"queries\":" + std::to_string(gt.queries) + ",\"k\":" + std::to_string(gt.k) +
       ",\"label\":" + (label < 0 ? std::string("null") : std::to_string(label));
  auto rows = [&](const char* name, auto const& values) {
    s += ",\"";
    s += name;
    s += "\":[";
    for (int64_t q = 0; q < gt.queries; ++q) {
      s += q == 0 ? "[" : ",[";
      for (int64_t j = 0; j < gt.k; ++j) {
        if (j > 0) s += ',';
        s += std::to_string(values[static_cast<size_t>(q * gt.k + j)]);
      }
      s += ']';
    }
    s += ']';
  };
  rows("ids", gt.ids);
  rows("dist", gt.dist);
  s += "}\n";
  return strata::bench::WriteFileAtomically(path, s, error);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Exact top-K squared-L2 ground truth on Fashion-MNIST (integer arithmetic)"};
  std::string dataset = strata::testing::FashionMnistDir();
  int64_t train = -1, queries = -1, k = -1, label = -1;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string out;
  app.add_option("--dataset", dataset,
                 "Fashion-MNIST folder (default $STRATA_FASHION_MNIST_DIR or "
                 "/usr/share/datasets/fashion-mnist)");
  app.add_option("--train", train, "training images [0, N) searched, N in [1, 60000]")->required();
  app.add_option("--queries", queries, "test images [0, Q) used as queries, Q in [1, 10000]")
      ->required();
  app.add_option("--k", k, "neighbours per query, K in [1, N]")->required();
  app.add_option("--label", label, "only training images of this class, 0..9");
  app.add_option("--threads", threads, "worker threads (default: hardware concurrency)");
  app.add_option("--out", out, "output JSON file (written atomically)")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (train < 1 || train > kMaxTrain) {
    return Fail("--train must be in [1, 60000], got " + std::to_string(train));
  }
  if (queries < 1 || queries > kMaxQueries) {
    return Fail("--queries must be in [1, 10000], got " + std::to_string(queries));
  }
  if (k < 1 || k > train) {
    return Fail("--k must be in [1, --train = " + std::to_string(train) + "], got " +
                std::to_string(k));
  }
  const bool has_label = app.count("--label") > 0;
  if (has_label && (label < 0 || label > 9)) {
    return Fail("--label must be in [0, 9], got " + std::to_string(label));
  }
  if (threads < 1 || threads > 1024) {
    return Fail("--threads must be in [1, 1024], got " + std::to_string(threads));
  }

  const auto t0 = std::chrono::steady_clock::now();
  strata::testing::IdxBytes train_img, test_img, train_labels;
  std::string error;
  if (!strata::testing::ReadFashionMnistBytes(dataset, train, queries, &train_img, &test_img,
                                              &error)) {
    return Fail("dataset: " + error);
  }
  std::vector<int32_t> candidates;
  if (has_label) {
    if (!strata::testing::ReadIdxUbyte(dataset + "/train-labels-idx1-ubyte.gz", 1, train,
                                       &train_labels, &error)) {
      return Fail("dataset: " + error);
    }
    if (train_labels.count < train) return Fail("dataset: fewer training labels than --train");
    for (int64_t i = 0; i < train; ++i) {
      if (train_labels.bytes[static_cast<size_t>(i)] == label) {
        candidates.push_back(static_cast<int32_t>(i));
      }
    }
    if (static_cast<int64_t>(candidates.size()) < k) {
      return Fail("--k " + std::to_string(k) + " exceeds the " + std::to_string(candidates.size()) +
                  " training images [0, " + std::to_string(train) + ") with label " +
                  std::to_string(label));
    }
  } else {
    candidates.resize(static_cast<size_t>(train));
    for (int64_t i = 0; i < train; ++i)
      candidates[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  }
  const auto t1 = std::chrono::steady_clock::now();
  const auto gt =
      strata::bench::ExactKnnL2U8(train_img.bytes.data(), candidates, test_img.bytes.data(),
                                  queries, train_img.item_size, k, threads);
  const auto t2 = std::chrono::steady_clock::now();
  if (!WriteJson(out, train, has_label ? label : -1, gt, &error)) return Fail(error);
  const auto t3 = std::chrono::steady_clock::now();
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::fprintf(stderr,
               "knn_ground_truth: %lld queries x %zu candidates, k %lld, %d threads: "
               "load %.2f s, search %.2f s, write %.2f s -> %s\n",
               static_cast<long long>(queries), candidates.size(), static_cast<long long>(k),
               threads, secs(t0, t1), secs(t1, t2), secs(t2, t3), out.c_str());
  return 0;
}
