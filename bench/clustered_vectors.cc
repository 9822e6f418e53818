// clustered_vectors: writes the seeded clustered 128-d vectors of bench/clustered_rows.h (the
// compaction benchmark's rows, row i = the i-th vector drawn) as .fvecs files, with the exact
// top-K squared-L2 neighbours of the queries, so another system (LanceDB, through
// `strata import` or its own SDK) can be measured on exactly the rows and queries of
// `make bench-compaction` (issue 15: IVF_PQ recall at 500k-2M rows).
//
// The queries are the first Q vectors of the same sequence, as the compaction benchmark's
// restart child draws them (each query is also row i of the base: its own nearest neighbour).
// Outputs, in DIR: base.fvecs (N x 128), queries.fvecs (Q x 128), truth.json
//   {"rows":N,"queries":Q,"k":K,"ids":[[id,...] per query],"dist":[[squared l2,...]]}
// Neighbours are nearest first, ties by the smaller id. Exit status 0, or 1 with a message
// naming the bad argument or the file that could not be written.
// Usage: clustered_vectors --rows N --queries Q --k K --out DIR
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "clustered_rows.h"
#include "index/vector/exact_search.h"

namespace {

bool WriteFvecs(const std::string& path, const std::vector<float>& v, int64_t n) {
  std::ofstream out(path, std::ios::binary);
  const int32_t dim = strata::bench::kDim;
  for (int64_t i = 0; i < n; ++i) {
    out.write(reinterpret_cast<const char*>(&dim), sizeof(dim));
    out.write(reinterpret_cast<const char*>(&v[static_cast<size_t>(i * dim)]), dim * 4);
  }
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 0, queries = 0, k = 10;
  std::string out;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--rows")
      rows = std::atoll(argv[i + 1]);
    else if (a == "--queries")
      queries = std::atoll(argv[i + 1]);
    else if (a == "--k")
      k = std::atoll(argv[i + 1]);
    else if (a == "--out")
      out = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 1;
    }
  }
  if (rows < 1 || rows > (int64_t{1} << 28) || queries < 1 || queries > rows || k < 1 || k > 1000 ||
      out.empty()) {
    std::fprintf(stderr,
                 "usage: clustered_vectors --rows N (1..2^28) --queries Q (1..N) --k K (1..1000) "
                 "--out DIR\n");
    return 1;
  }
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  const int64_t dim = strata::bench::kDim;
  strata::bench::Vectors gen;
  std::vector<float> base(static_cast<size_t>(rows * dim));
  for (int64_t i = 0; i < rows; ++i) {
    const std::vector<float> v = gen.Next();
    std::copy(v.begin(), v.end(), base.begin() + i * dim);
  }
  const std::vector<float> qs(base.begin(), base.begin() + queries * dim);
  if (!WriteFvecs(out + "/base.fvecs", base, rows) ||
      !WriteFvecs(out + "/queries.fvecs", qs, queries)) {
    std::fprintf(stderr, "cannot write the .fvecs files in %s\n", out.c_str());
    return 1;
  }
  std::string ids = "[", dists = "[";
  for (int64_t q = 0; q < queries; ++q) {
    auto searcher = strata::index::ExactSearcher::Make(&qs[static_cast<size_t>(q * dim)], dim,
                                                       strata::index::DistanceType::kL2);
    if (!searcher.ok()) return 1;
    strata::index::TopK top(k);
    for (int64_t i = 0; i < rows; ++i) {
      top.Push(i, searcher->Distance(&base[static_cast<size_t>(i * dim)]));
    }
    ids += q == 0 ? "[" : ",[";
    dists += q == 0 ? "[" : ",[";
    bool first = true;
    for (const auto& n : top.Sorted()) {
      ids += (first ? "" : ",") + std::to_string(n.label);
      char d[32];
      std::snprintf(d, sizeof(d), "%s%.6g", first ? "" : ",", n.distance);
      dists += d;
      first = false;
    }
    ids += "]";
    dists += "]";
  }
  std::ofstream truth(out + "/truth.json");
  truth << "{\"rows\":" << rows << ",\"queries\":" << queries << ",\"k\":" << k
        << ",\"ids\":" << ids << "],\"dist\":" << dists << "]}\n";
  if (!truth) {
    std::fprintf(stderr, "cannot write %s/truth.json\n", out.c_str());
    return 1;
  }
  std::printf("wrote %lld rows and %lld queries (k %lld) to %s\n", static_cast<long long>(rows),
              static_cast<long long>(queries), static_cast<long long>(k), out.c_str());
  return 0;
}
