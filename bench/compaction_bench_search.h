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

// The IVF settings sweep of the restarted table (issue 15: which nprobes / refine_factor reach
// recall@10 0.95, and at what q/s): the exact top 10 of n queries once (bypass_vector_index),
// then per point recall@10 and single-thread q/s over the same n queries.
inline void IvfSweep(const table::TableSnapshot& snap, int n = 200) {
  Vectors probe;
  std::vector<std::vector<float>> qs;
  std::vector<std::vector<int64_t>> truth;
  auto ids_of = [](const query::QueryResult& r) {
    std::vector<int64_t> ids;
    for (const auto& b : r.batches) {
      arrow::Array col = b->column(0);
      for (int64_t i = 0; i < b->num_rows(); ++i) ids.push_back(col.Value<int64_t>(i));
    }
    return ids;
  };
  for (int i = 0; i < n; ++i) {
    query::VectorSearchOptions o;
    o.query = probe.Next();
    o.k = 10;
    o.columns = {{"id", ""}};
    o.bypass_vector_index = true;
    auto exact = query::VectorSearch(snap, o);
    if (!exact.ok()) return;
    qs.push_back(o.query);
    truth.push_back(ids_of(*exact));
  }
  const std::vector<std::pair<int64_t, int64_t>> points = {
      {20, 0}, {20, 10}, {20, 20}, {20, 50}, {20, 100}, {50, 10}, {50, 50}, {100, 100}};
  for (const auto& [nprobes, refine] : points) {
    int64_t hits = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      query::VectorSearchOptions o;
      o.query = qs[static_cast<size_t>(i)];
      o.k = 10;
      o.columns = {{"id", ""}};
      o.nprobes = nprobes;
      if (refine > 0) o.refine_factor = refine;
      auto r = query::VectorSearch(snap, o);
      if (!r.ok()) return;
      for (int64_t id : ids_of(*r)) {
        hits += std::count(truth[static_cast<size_t>(i)].begin(),
                           truth[static_cast<size_t>(i)].end(), id);
      }
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "[figures] sweep nprobes %lld refine_factor %lld: recall@10 %.3f, %.0f q/s (%d "
        "queries)\n",
        static_cast<long long>(nprobes), static_cast<long long>(refine),
        static_cast<double>(hits) / (10.0 * n), n / secs, n);
  }
}

}  // namespace strata::bench
