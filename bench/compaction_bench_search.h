// Search measurements of bench/compaction_bench.cc on a table's current snapshot, with the
// queries' refine_factor from STRATA_COMPACTION_BENCH_REFINE: recall@10 against exact search,
// and single-thread q/s. Run on the calling thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "clustered_rows.h"
#include "compaction_bench_env.h"
#include "query/vector_search.h"
#include "table/table.h"

namespace strata::bench {

// recall@10 of the indexed search against exact search (bypass_vector_index), n queries.
inline double Recall(table::Table& t, Vectors& probe, int n = 100) {
  const table::TableSnapshot snap = t.Snapshot();
  int64_t hits = 0, total = 0;
  for (int i = 0; i < n; ++i) {
    query::VectorSearchOptions o;
    o.query = probe.Next();
    o.k = 10;
    o.refine_factor = Refine();
    o.columns = {{"id", ""}};
    auto approx = query::VectorSearch(snap, o);
    o.bypass_vector_index = true;
    auto exact = query::VectorSearch(snap, o);
    if (!approx.ok() || !exact.ok()) return -1;
    std::vector<int64_t> truth;
    for (const auto& b : exact->batches) {
      arrow::Array ids = b->column(0);
      for (int64_t r = 0; r < b->num_rows(); ++r) truth.push_back(ids.Value<int64_t>(r));
    }
    for (const auto& b : approx->batches) {
      arrow::Array ids = b->column(0);
      for (int64_t r = 0; r < b->num_rows(); ++r) {
        hits += std::count(truth.begin(), truth.end(), ids.Value<int64_t>(r));
      }
    }
    total += static_cast<int64_t>(truth.size());
  }
  return total > 0 ? static_cast<double>(hits) / static_cast<double>(total) : -1;
}

inline double SearchQps(table::Table& t, Vectors& probe, int n = 300) {
  const table::TableSnapshot snap = t.Snapshot();
  std::vector<std::vector<float>> qs;
  for (int i = 0; i < n; ++i) qs.push_back(probe.Next());
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& q : qs) {
    query::VectorSearchOptions o;
    o.query = q;
    o.k = 10;
    o.refine_factor = Refine();
    auto r = query::VectorSearch(snap, o);
    if (!r.ok()) {
      std::fprintf(stderr, "search: %s\n", r.status().ToString().c_str());
      std::exit(1);
    }
  }
  return n / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace strata::bench
