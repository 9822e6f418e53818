// HNSW benchmark (a main() printing figures; one thread throughout except HnswIndex::AddColumn), on
// Fashion-MNIST (first N training vectors, default 20,000, 784-d, l2, raw pixels; queries from
// t10k):
//  1. distance kernels: hnswlib's SIMD space functions vs index/vector/distance.h, ns per
//     784-d vector, over the whole set (memory-bound) and over 1,000 vectors (cache-resident);
//  2. insert rate of HnswIndex (Add row by row, and AddColumn on 1,000-row batches, which
//     inserts with up to 4 threads) vs hnswlib's HierarchicalNSW used directly (M 16,
//     ef_construction 100, same insertion order, one thread);
//  2b. checkpoint bytes: save and load time of the graph through hnswlib's file API against
//     index/vector/hnswlib_graph_io.h's in-memory writer and reader (same bytes);
//  3. search QPS at the smallest ef reaching recall@10 >= 0.95 (exact ground truth), both at the
//     same ef, and the ratio;
//  4. filtered search: exact search over the accepted rows vs HNSW with over-fetch at the
//     smallest ef reaching recall@10 >= 0.95, for filter fractions 0.5% .. 50% (the source of
//     kExactSearchMaxFraction).
// Usage: hnsw_bench [rows=20000] [queries=500] [insert] ("insert": stop after the insert
// figures). Exits 0 with a note when the dataset is absent.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "index/vector/hnswlib_graph_io.h"
#include "index/vector/hnswlib_internal.h"

#include "../tests/index/fashion_mnist.h"
#include "arrow/builder.h"
#include "index/vector/distance.h"
#include "index/vector/exact_search.h"
#include "index/vector/hnsw_index.h"

namespace {

using namespace strata;         // NOLINT
using namespace strata::index;  // NOLINT
using Clock = std::chrono::steady_clock;

// User + system CPU time of the whole process (all threads), seconds.
double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

arrow::Array MakeColumn(const testing::IdxImages& imgs, int64_t rows) {
  auto type = arrow::fixed_size_list(arrow::field("item", arrow::float32()),
                                     static_cast<int32_t>(imgs.dim));
  arrow::ArrayBuilder b(type);
  for (int64_t i = 0; i < rows; ++i) {
    (void)b.child(0)->AppendFloats(imgs.row(i), imgs.dim);
    (void)b.AppendValid();
  }
  return arrow::Array(b.Finish().value());
}

using Labels = std::vector<std::vector<int64_t>>;

Labels GroundTruth(const arrow::Array& col, const testing::IdxImages& queries, int64_t nq,
                   int64_t k, const std::function<bool(int64_t)>& accept = {}) {
  Labels out(static_cast<size_t>(nq));
  for (int64_t q = 0; q < nq; ++q) {
    auto s = ExactSearcher::Make(queries.row(q), queries.dim, DistanceType::kL2).value();
    TopK top(k);
    (void)s.Scan(col, 0, &top, accept);
    for (const auto& n : top.Sorted()) out[static_cast<size_t>(q)].push_back(n.label);
  }
  return out;
}

double Recall(const Labels& truth, const Labels& got) {
  int64_t hit = 0, total = 0;
  for (size_t q = 0; q < truth.size(); ++q) {
    total += static_cast<int64_t>(truth[q].size());
    for (int64_t l : got[q]) {
      if (std::find(truth[q].begin(), truth[q].end(), l) != truth[q].end()) ++hit;
    }
  }
  return total == 0 ? 1.0 : static_cast<double>(hit) / static_cast<double>(total);
}

volatile float g_sink = 0;

void KernelBench(const testing::IdxImages& base, int64_t rows, const float* q) {
  const size_t dim = static_cast<size_t>(base.dim);
  hnswlib::L2Space l2(dim);
  hnswlib::InnerProductSpace ip(dim);
  auto l2f = l2.get_dist_func();
  auto ipf = ip.get_dist_func();
  void* l2p = l2.get_dist_func_param();
  void* ipp = ip.get_dist_func_param();
  std::printf("\n== distance kernels (ns per %zu-d vector, best of 5 passes) ==\n", dim);
  std::printf("%-24s %12s %12s\n", "kernel", "all rows", "1000 rows");
  struct K {
    const char* name;
    std::function<float(const float*)> f;
  };
  const int64_t d = base.dim;
  std::vector<K> ks = {
      {"hnswlib L2Space", [&](const float* v) { return l2f(q, v, l2p); }},
      {"distance.h L2Squared", [&](const float* v) { return L2Squared(q, v, d); }},
      {"hnswlib InnerProduct", [&](const float* v) { return ipf(q, v, ipp); }},
      {"distance.h DotDistance", [&](const float* v) { return DotDistance(q, v, d); }},
  };
  for (const auto& k : ks) {
    double best_all = 1e30, best_small = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      float acc = 0;
      auto t0 = Clock::now();
      for (int64_t i = 0; i < rows; ++i) acc += k.f(base.row(i));
      auto t1 = Clock::now();
      for (int inner = 0; inner < 20; ++inner) {
        for (int64_t i = 0; i < 1000; ++i) acc += k.f(base.row(i));
      }
      auto t2 = Clock::now();
      g_sink = acc;
      best_all = std::min(best_all, Seconds(t0, t1) * 1e9 / static_cast<double>(rows));
      best_small = std::min(best_small, Seconds(t1, t2) * 1e9 / 20000.0);
    }
    std::printf("%-24s %12.1f %12.1f\n", k.name, best_all, best_small);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 20000;
  const int64_t nq = argc > 2 ? std::atoll(argv[2]) : 500;
  const bool insert_only = argc > 3 && std::string(argv[3]) == "insert";
  const int64_t k = 10;
  if (!testing::FashionMnistAvailable()) {
    std::printf("Fashion-MNIST not found under %s: nothing measured\n",
                testing::FashionMnistDir().c_str());
    return 0;
  }
  testing::IdxImages base, queries;
  std::string err;
  if (!testing::ReadIdxImages(testing::FashionMnistTrainPath(), rows, &base, &err) ||
      !testing::ReadIdxImages(testing::FashionMnistTestPath(), nq, &queries, &err)) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  const size_t dim = static_cast<size_t>(base.dim);
  std::printf(
      "Fashion-MNIST: %lld base x %zu-d, %lld queries, k = %lld, l2, one thread (but AddColumn)\n",
      static_cast<long long>(base.count), dim, static_cast<long long>(queries.count),
      static_cast<long long>(k));
  const arrow::Array col = MakeColumn(base, base.count);

  KernelBench(base, base.count, queries.row(0));

  // Exact ground truth (and the exact-search time over all rows).
  auto t0 = Clock::now();
  const Labels truth = GroundTruth(col, queries, nq, k);
  auto t1 = Clock::now();
  std::printf("\nexact search over all %lld rows: %.2f ms/query\n",
              static_cast<long long>(base.count), Seconds(t0, t1) * 1e3 / static_cast<double>(nq));

  // --- insert ---------------------------------------------------------------------------------
  // The machine is shared: the builds advance in alternating chunks of 1,000 rows so that load
  // from other processes hits them alike. Three builds: HnswIndex::Add row by row (one thread;
  // what AddColumn did before it inserted chunks in parallel), HnswIndex::AddColumn on
  // 1,000-row slices (chunks of 256 rows, up to 4 threads each), hnswlib's addPoint directly.
  HnswParams params;  // M 16, ef_construction 100, l2
  auto ours = HnswIndex::Make(base.dim, params, 1024).value();
  auto batched = HnswIndex::Make(base.dim, params, 1024).value();
  hnswlib::L2Space space(dim);
  // hnswlib directly, preallocated (no growth): the best case for the reference.
  hnswlib::HierarchicalNSW<float> raw(&space, static_cast<size_t>(base.count), 16, 100);
  double ours_s = 0, batched_s = 0, raw_s = 0, batched_cpu = 0, ours_cpu = 0;
  for (int64_t start = 0; start < base.count; start += 1000) {
    const int64_t end = std::min(base.count, start + 1000);
    const double cpu_a = ProcessCpuSeconds();
    auto a = Clock::now();
    for (int64_t i = start; i < end; ++i) {
      Status st = ours->Add(i, base.row(i));
      if (!st.ok()) {
        std::fprintf(stderr, "%s\n", st.ToString().c_str());
        return 1;
      }
    }
    auto b = Clock::now();
    const double cpu_b = ProcessCpuSeconds();
    auto added = batched->AddColumn(col.Slice(start, end - start), start);
    if (!added.ok() || *added != end - start) {
      std::fprintf(stderr, "AddColumn: %s\n", added.status().ToString().c_str());
      return 1;
    }
    auto c = Clock::now();
    batched_cpu += ProcessCpuSeconds() - cpu_b;
    ours_cpu += cpu_b - cpu_a;
    for (int64_t i = start; i < end; ++i) raw.addPoint(base.row(i), static_cast<size_t>(i));
    auto d = Clock::now();
    ours_s += Seconds(a, b);
    batched_s += Seconds(b, c);
    raw_s += Seconds(c, d);
  }
  const double ours_insert = static_cast<double>(base.count) / ours_s;
  const double batched_insert = static_cast<double>(base.count) / batched_s;
  const double raw_insert = static_cast<double>(base.count) / raw_s;
  std::printf("\n== insert (M 16, ef_construction 100; hardware threads %u) ==\n",
              std::thread::hardware_concurrency());
  std::printf("HnswIndex::Add %.0f vectors/s, hnswlib %.0f vectors/s, ratio %.3f\n", ours_insert,
              raw_insert, ours_insert / raw_insert);
  std::printf("CPU seconds per wall second (shared machine): Add %.2f, AddColumn %.2f\n",
              ours_cpu / ours_s, batched_cpu / batched_s);
  std::printf("HnswIndex::AddColumn (1,000-row batches) %.0f vectors/s, %.2fx Add, %.2fx hnswlib\n",
              batched_insert, batched_insert / ours_insert, batched_insert / raw_insert);
  {
    // Recall of the batched build at ef 32 (the graph differs from the row-by-row one).
    Labels got_a(static_cast<size_t>(nq)), got_b(static_cast<size_t>(nq));
    for (int64_t q = 0; q < nq; ++q) {
      const auto ra = ours->Search(queries.row(q), k, 32).value();
      const auto rb = batched->Search(queries.row(q), k, 32).value();
      for (const auto& n : ra) got_a[static_cast<size_t>(q)].push_back(n.label);
      for (const auto& n : rb) got_b[static_cast<size_t>(q)].push_back(n.label);
    }
    std::printf("recall@10 at ef 32: Add build %.4f, AddColumn build %.4f\n", Recall(truth, got_a),
                Recall(truth, got_b));
  }
  batched.reset();
  if (insert_only) return 0;

  // --- checkpoint bytes -------------------------------------------------------------------------
  // The graph's saved bytes through hnswlib's file API (saveIndex to a file read back; the
  // bytes written to a file and loadIndex from it: what a checkpoint did before
  // hnswlib_graph_io.h) against the in-memory SaveGraph / LoadSavedGraph, best of 3.
  {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("strata-hnsw-bench-" + std::to_string(::getpid()) + ".bin"))
                                 .string();
    double file_save = 1e30, file_load = 1e30, mem_save = 1e30, mem_load = 1e30;
    size_t bytes_size = 0;
    for (int rep = 0; rep < 3; ++rep) {
      auto a = Clock::now();
      raw.saveIndex(path);
      std::string bytes;
      {
        std::ifstream in(path, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      }
      auto b = Clock::now();
      {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      }
      hnswlib::HierarchicalNSW<float> loaded(&space, path, false, raw.max_elements_);
      auto c = Clock::now();
      std::string mine;
      SaveGraph(raw, &mine);
      auto d = Clock::now();
      hnswlib::HierarchicalNSW<float> mem(&space, raw.max_elements_, 16, 100);
      const Status st = LoadSavedGraph(mine, mem);
      auto e = Clock::now();
      if (!st.ok() || mine != bytes || mem.cur_element_count != loaded.cur_element_count) {
        std::printf("checkpoint bytes differ: %s\n", st.ToString().c_str());
      }
      bytes_size = bytes.size();
      file_save = std::min(file_save, Seconds(a, b));
      file_load = std::min(file_load, Seconds(b, c));
      mem_save = std::min(mem_save, Seconds(c, d));
      mem_load = std::min(mem_load, Seconds(d, e));
    }
    std::filesystem::remove(path);
    const double mb = static_cast<double>(bytes_size) / 1e6;
    std::printf(
        "\n== checkpoint bytes (%.1f MB): save / load in ms ==\nhnswlib file API %.1f / %.1f; "
        "in memory %.1f / %.1f; load %.1fx faster (%.0f MB/s)\n",
        mb, file_save * 1e3, file_load * 1e3, mem_save * 1e3, mem_load * 1e3, file_load / mem_load,
        mb / mem_load);
  }

  // --- search ---------------------------------------------------------------------------------
  std::printf("\n== search, k = 10 (QPS best of 5 passes over the queries) ==\n");
  std::printf("%6s %10s %10s %12s %12s %8s\n", "ef", "recall", "raw recall", "HnswIndex QPS",
              "hnswlib QPS", "ratio");
  bool reported = false;
  for (int64_t ef : {10, 12, 16, 20, 24, 32, 48, 64, 96, 128}) {
    Labels got(static_cast<size_t>(nq)), got_raw(static_cast<size_t>(nq));
    double best = 1e30, best_raw = 1e30;
    raw.setEf(static_cast<size_t>(ef));
    for (int rep = 0; rep < 5; ++rep) {
      double t = 0, t_raw = 0;  // alternating query by query (shared machine)
      for (int64_t q = 0; q < nq; ++q) {
        auto a = Clock::now();
        auto r = ours->Search(queries.row(q), k, ef).value();
        auto b = Clock::now();
        auto rr = raw.searchKnn(queries.row(q), static_cast<size_t>(k));
        auto c = Clock::now();
        t += Seconds(a, b);
        t_raw += Seconds(b, c);
        auto& g = got[static_cast<size_t>(q)];
        g.clear();
        for (const auto& n : r) g.push_back(n.label);
        auto& gr = got_raw[static_cast<size_t>(q)];
        gr.clear();
        while (!rr.empty()) {
          gr.push_back(static_cast<int64_t>(rr.top().second));
          rr.pop();
        }
      }
      best = std::min(best, t);
      best_raw = std::min(best_raw, t_raw);
    }
    const double rec = Recall(truth, got), rec_raw = Recall(truth, got_raw);
    const double qps = static_cast<double>(nq) / best, qps_raw = static_cast<double>(nq) / best_raw;
    std::printf("%6lld %10.4f %10.4f %12.0f %12.0f %8.3f%s\n", static_cast<long long>(ef), rec,
                rec_raw, qps, qps_raw, qps / qps_raw,
                (!reported && rec >= 0.95) ? "   <- first ef with recall >= 0.95" : "");
    if (rec >= 0.95) {
      if (reported) break;
      reported = true;
    }
  }
  std::printf("DefaultEf(10) = %lld\n", static_cast<long long>(DefaultEf(10)));

  // --- filtered search crossover --------------------------------------------------------------
  const int64_t fq = std::min<int64_t>(nq, 200);
  std::printf("\n== filtered search, k = 10, %lld queries: us/query ==\n",
              static_cast<long long>(fq));
  std::printf("%9s %8s %10s %12s %6s %8s\n", "fraction", "rows", "exact us", "hnsw us", "ef",
              "recall");
  for (double frac : {0.005, 0.01, 0.02, 0.05, 0.10, 0.12, 0.15, 0.20, 0.50}) {
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<char> keep(static_cast<size_t>(base.count));
    int64_t accepted = 0;
    for (auto& c : keep) {
      c = u(rng) < frac;
      accepted += c;
    }
    auto accept = [&keep](int64_t l) { return keep[static_cast<size_t>(l)] != 0; };
    // Exact over the accepted rows only (the plan the query layer runs below the crossover).
    std::vector<int64_t> ids;
    for (int64_t i = 0; i < base.count; ++i) {
      if (keep[static_cast<size_t>(i)]) ids.push_back(i);
    }
    // Ground truth: exact over the accepted rows.
    Labels ftruth(static_cast<size_t>(fq));
    for (int64_t q = 0; q < fq; ++q) {
      auto s = ExactSearcher::Make(queries.row(q), base.dim, DistanceType::kL2).value();
      TopK top(k);
      for (int64_t id : ids) top.Push(id, s.Distance(base.row(id)));
      for (const auto& n : top.Sorted()) ftruth[static_cast<size_t>(q)].push_back(n.label);
    }
    double hnsw_us = -1, exact_us = -1, rec = 0;
    int64_t used_ef = -1;
    for (int64_t ef : {10, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}) {
      // Exact and filtered HNSW alternate query by query (shared machine); best of 3 passes.
      double best_e = 1e30, best_h = 1e30;
      Labels got(static_cast<size_t>(fq));
      for (int rep = 0; rep < 3; ++rep) {
        double te = 0, th = 0;
        for (int64_t q = 0; q < fq; ++q) {
          auto t0 = Clock::now();
          auto s = ExactSearcher::Make(queries.row(q), base.dim, DistanceType::kL2).value();
          TopK top(k);
          for (int64_t id : ids) top.Push(id, s.Distance(base.row(id)));
          auto sorted = top.Sorted();
          auto t1 = Clock::now();
          auto r = ours->Search(queries.row(q), k, ef, accept).value();
          auto t2 = Clock::now();
          te += Seconds(t0, t1);
          th += Seconds(t1, t2);
          g_sink = sorted.empty() ? 0.0f : sorted[0].distance;
          auto& g = got[static_cast<size_t>(q)];
          g.clear();
          for (const auto& n : r) g.push_back(n.label);
        }
        best_e = std::min(best_e, te);
        best_h = std::min(best_h, th);
      }
      rec = Recall(ftruth, got);
      exact_us = best_e * 1e6 / static_cast<double>(fq);
      if (rec >= 0.95) {
        hnsw_us = best_h * 1e6 / static_cast<double>(fq);
        used_ef = ef;
        break;
      }
    }
    std::printf("%8.1f%% %8lld %10.1f %12.1f %6lld %8.4f%s\n", frac * 100,
                static_cast<long long>(accepted), exact_us, hnsw_us,
                static_cast<long long>(used_ef), rec,
                (hnsw_us >= 0 && hnsw_us < exact_us) ? "  hnsw faster" : "  exact faster");
  }
  std::printf("kExactSearchMaxFraction = %.3f\n", kExactSearchMaxFraction);
  return 0;
}
