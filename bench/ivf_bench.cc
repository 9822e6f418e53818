// IVF benchmark (a main() printing figures) for index/vector/ivf_index.h next to HnswIndex, on
// seeded synthetic clustered data: N vectors (default 200,000) of 128 dimensions drawn around
// 1,000 Gaussian centres (centres uniform in [-1, 1]^128, spread 0.2 per dimension), l2, k = 10,
// and Q queries (default 200) from the same distribution. For each index: train time, add time
// (one AddColumn over all rows; FAISS uses its OpenMP threads for both), memory_bytes(), search
// queries/s on one thread (the median of 3 passes over the queries) and recall@10 against the
// exact answer (ExactSearcher + TopK). Configurations: IVF_PQ (num_sub_vectors 16, nbits 8,
// nprobes 20, refine 0 and 10), IVF_FLAT (nprobes 20), IVF_HNSW_SQ (nprobes 20, ef default),
// and HnswIndex (m 16, ef_construction 100, ef 64). num_partitions is the default
// (round(sqrt(N)) = 447 at 200,000).
//
// Figures (2026-12-02, the shared 2-core VM at load average 13-20 while 4 other builders ran, so
// absolute times are several times what an idle machine gives; OPENBLAS_CORETYPE=Haswell;
// FAISS on one OpenMP thread; q/s median of 3 passes, 200 queries, one run each):
//   index                       train s  add s  memory MB  q/s   recall@10
//   IVF_PQ m 16 refine 0          383.2   25.8      13.8    517   0.199
//   IVF_PQ m 16 refine 10         383.2   25.8      13.8    453   0.839
//   IVF_FLAT                       56.1    3.6     139.6     77   1.000
//   IVF_HNSW_SQ                    87.0   24.5      37.9     13   0.973
//   HnswIndex m 16 ef 64              -  209.2     141.6   1498   1.000
// and a second run of the SQ types alone (100 queries): IVF_SQ 68.4 / 3.5 / 36.7 MB / 52 q/s /
// 0.969, IVF_HNSW_SQ 80.4 / 17.8 / 37.9 MB / 38 q/s / 0.974, IVF_FLAT 58.5 / 2.6 / 139.6 MB /
// 144 q/s / 1.000 (the q/s of one configuration varies 2-3x between runs at this load).
// PQ's low recall here: the residuals are isotropic Gaussian noise (the data's clusters are
// well separated and every neighbour lies in the query's own cluster), the worst case for
// 8-dimension sub-vectors with 256 centroids each.
// Usage: ivf_bench [rows=200000] [queries=200] [all | TYPE,TYPE...] ("all" adds IVF_SQ and
// IVF_HNSW_PQ; a list of IVF types runs just those, without HnswIndex).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "arrow/builder.h"
#include "index/vector/exact_search.h"
#include "index/vector/hnsw_index.h"
#include "index/vector/ivf_index.h"

namespace {

using namespace strata;         // NOLINT
using namespace strata::index;  // NOLINT
using Clock = std::chrono::steady_clock;

constexpr int kDim = 128;
constexpr int64_t kK = 10;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::vector<float> Clustered(int64_t n, uint32_t seed) {
  std::mt19937 crng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> centres(1000 * kDim);
  for (auto& c : centres) c = u(crng);
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 0.2f);
  std::uniform_int_distribution<int> pick(0, 999);
  std::vector<float> rows(static_cast<size_t>(n) * kDim);
  for (int64_t i = 0; i < n; ++i) {
    const int c = pick(rng);
    for (int d = 0; d < kDim; ++d) {
      rows[static_cast<size_t>(i) * kDim + d] = centres[static_cast<size_t>(c) * kDim + d] + g(rng);
    }
  }
  return rows;
}

arrow::Array MakeColumn(const std::vector<float>& rows, int64_t n) {
  arrow::ArrayBuilder b(arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim));
  for (int64_t i = 0; i < n; ++i) {
    if (!b.child(0)->AppendFloats(rows.data() + i * kDim, kDim).ok() || !b.AppendValid().ok()) {
      std::abort();
    }
  }
  return arrow::Array(b.Finish().value());
}

using Answer = std::vector<Neighbor>;

struct Measured {
  double qps = 0;
  double recall = 0;
};

// Runs `search` over all queries 3 times; median q/s and the recall of the last pass.
Measured Measure(const std::vector<float>& queries, int64_t nq, const std::vector<Answer>& truth,
                 const std::function<Answer(const float*)>& search) {
  std::vector<double> qps;
  double recall = 0;
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<Answer> got(static_cast<size_t>(nq));
    const auto t0 = Clock::now();
    for (int64_t q = 0; q < nq; ++q) got[q] = search(&queries[static_cast<size_t>(q) * kDim]);
    const auto t1 = Clock::now();
    qps.push_back(static_cast<double>(nq) / Seconds(t0, t1));
    int64_t hits = 0;
    for (int64_t q = 0; q < nq; ++q) {
      std::set<int64_t> want;
      for (const auto& nb : truth[q]) want.insert(nb.label);
      for (const auto& nb : got[q]) hits += want.count(nb.label) > 0 ? 1 : 0;
    }
    recall = static_cast<double>(hits) / static_cast<double>(nq * kK);
  }
  std::sort(qps.begin(), qps.end());
  return {qps[1], recall};
}

void Row(const std::string& name, double train_s, double add_s, int64_t bytes, const Measured& m) {
  std::printf("%-28s %9.1f %9.1f %10.1f %10.0f %8.3f\n", name.c_str(), train_s, add_s,
              static_cast<double>(bytes) / (1 << 20), m.qps, m.recall);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 200000;
  const int64_t nq = argc > 2 ? std::atoll(argv[2]) : 200;
  const std::string which = argc > 3 ? argv[3] : "";
  const bool all = which == "all";
  const std::vector<float> rows = Clustered(n, 1);
  const std::vector<float> queries = Clustered(nq, 2);
  const arrow::Array col = MakeColumn(rows, n);
  std::printf("%lld x %d-d clustered (1,000 centres), %lld queries, k = %lld, l2\n",
              static_cast<long long>(n), kDim, static_cast<long long>(nq),
              static_cast<long long>(kK));

  std::vector<Answer> truth;
  {
    const auto t0 = Clock::now();
    for (int64_t q = 0; q < nq; ++q) {
      auto ex =
          ExactSearcher::Make(&queries[static_cast<size_t>(q) * kDim], kDim, DistanceType::kL2)
              .value();
      TopK top(kK);
      if (!ex.Scan(col, 0, &top).ok()) std::abort();
      truth.push_back(top.Sorted());
    }
    std::printf("exact search: %.1f q/s\n\n", static_cast<double>(nq) / Seconds(t0, Clock::now()));
  }
  std::printf("%-28s %9s %9s %10s %10s %8s\n", "index", "train s", "add s", "memory MB",
              "q/s (1 th)", "recall");
  const std::function<const float*(int64_t)> vector_of = [&](int64_t label) -> const float* {
    return label >= 0 && label < n ? &rows[static_cast<size_t>(label) * kDim] : nullptr;
  };

  struct Config {
    IvfType type;
    std::vector<int64_t> refines;
  };
  std::vector<Config> configs = {
      {IvfType::kIvfPq, {0, 10}}, {IvfType::kIvfFlat, {0}}, {IvfType::kIvfHnswSq, {0}}};
  if (all) {
    configs.push_back({IvfType::kIvfSq, {0}});
    configs.push_back({IvfType::kIvfHnswPq, {0, 10}});
  } else if (!which.empty()) {  // a comma-separated list of IVF types, without HnswIndex
    configs.clear();
    for (size_t start = 0; start <= which.size();) {
      const size_t comma = std::min(which.find(',', start), which.size());
      auto t = ParseIvfType(which.substr(start, comma - start));
      if (!t.ok()) {
        std::fprintf(stderr, "%s\n", t.status().ToString().c_str());
        return 2;
      }
      configs.push_back(
          {*t, IvfTypeUsesPq(*t) ? std::vector<int64_t>{0, 10} : std::vector<int64_t>{0}});
      start = comma + 1;
    }
  }
  for (const Config& c : configs) {
    IvfParams p;
    p.type = c.type;
    if (IvfTypeUsesPq(c.type)) p.num_sub_vectors = 16;
    const auto t0 = Clock::now();
    auto trained = IvfIndex::Train(kDim, p, rows.data(), n);
    const auto t1 = Clock::now();
    if (!trained.ok()) {
      std::fprintf(stderr, "%s: %s\n", IvfTypeName(c.type), trained.status().ToString().c_str());
      return 1;
    }
    auto idx = std::move(trained).value();
    if (!idx->AddColumn(col, 0).ok()) std::abort();
    const auto t2 = Clock::now();
    for (int64_t refine : c.refines) {
      IvfIndex::SearchOptions o;
      o.k = kK;
      o.nprobes = 20;
      o.refine_factor = refine;
      const Measured m = Measure(queries, nq, truth, [&](const float* q) {
        return idx->Search(q, o, {}, refine > 0 ? vector_of : nullptr).value();
      });
      Row(std::string(IvfTypeName(c.type)) + " nprobes 20 refine " + std::to_string(refine),
          Seconds(t0, t1), Seconds(t1, t2), idx->memory_bytes(), m);
    }
    if (c.type == IvfType::kIvfPq) {
      std::printf("  (IVF_PQ: %lld partitions, %lld sub-vectors)\n",
                  static_cast<long long>(idx->params().num_partitions),
                  static_cast<long long>(idx->params().num_sub_vectors));
    }
  }

  if (which.empty() || all) {
    HnswParams hp;
    auto h = HnswIndex::Make(kDim, hp, n).value();
    const auto t0 = Clock::now();
    if (!h->AddColumn(col, 0).ok()) std::abort();
    const auto t1 = Clock::now();
    const Measured m =
        Measure(queries, nq, truth, [&](const float* q) { return h->Search(q, kK, 64).value(); });
    Row("HNSW m 16 ef 64", 0.0, Seconds(t0, t1), h->memory_bytes(), m);
  }
  return 0;
}
