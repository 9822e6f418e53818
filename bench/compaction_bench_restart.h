// The restart step of bench/compaction_bench.cc (`compaction_bench --restart DIR CACHE_BYTES`,
// run in a child process so its RSS is its own): reopen the kept table, first answer and index
// ready times, 1,000 queries with RSS after and at peak under a --cache-bytes bound, and on an
// IVF base the nprobes x refine_factor sweep (IvfSweep). Issue 15's figures.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "clustered_rows.h"
#include "compaction_bench_env.h"
#include "compaction_bench_search.h"
#include "io/mapped_file_cache.h"
#include "query/vector_search.h"
#include "table/catalog.h"
#include "usage.h"

namespace strata::bench {

// --restart DIR CACHE_BYTES: open, answer one search (waiting for the index checkpoints to
// load, as the server does), print time and RSS; then 1,000 queries under a --cache-bytes bound
// of CACHE_BYTES (0 = none; io/mapped_file_cache.h), and the RSS after them and at its peak.
inline int RestartChild(const std::string& dir, int64_t cache_bytes) {
  io::MappedFileCache::Global().SetLimit(cache_bytes);
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto catalog = table::Catalog::Open(dir, {}, BenchCompaction());
  if (!catalog.ok()) return 2;
  auto t = (*catalog)->GetTable("default", "bench");
  if (!t.ok()) return 3;
  Vectors probe;
  query::VectorSearchOptions o;
  o.query = probe.Next();
  o.k = 10;
  o.refine_factor = Refine();
  (*t)->AwaitIndexLoads("");  // as the server's query/ does (--index-load-wait-ms)
  auto r = query::VectorSearch((*t)->Snapshot(), o);
  if (!r.ok() || r->num_rows != 10) return 4;
  const double first = std::chrono::duration<double>(Clock::now() - t0).count();
  // Then wait until the base index is loaded, and report the QPS and RSS of a warm server.
  double ready = -1;
  for (int i = 0; i < 600; ++i) {
    auto b = (*t)->DescribeBase();
    bool all = b.has_value();
    if (b) {
      for (const auto& idx : b->indexes) all &= idx.rows_indexed >= b->rows;
    }
    if (all) {
      ready = std::chrono::duration<double>(Clock::now() - t0).count();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::printf("restart first_answer_s %.3f index_ready_s %.3f rss_mb %.1f\n", first, ready,
              static_cast<double>(ResidentBytes()) / 1e6);
  // 1,000 queries (issue 15: RSS after restart and 1,000 queries against the raw vectors).
  const auto q0 = Clock::now();
  int answered = 0;
  const table::TableSnapshot snap = (*t)->Snapshot();
  int64_t peak = 0;
  for (int i = 0; i < 1000; ++i) {
    o.query = probe.Next();
    auto a = query::VectorSearch(snap, o);
    answered += a.ok() && a->num_rows == 10;
    if (i % 10 == 0) peak = std::max(peak, ResidentBytes());
  }
  const double qs = std::chrono::duration<double>(Clock::now() - q0).count();
  const double raw = static_cast<double>(snap.num_rows) * kDim * sizeof(float);
  std::printf(
      "[figures] restart + 1,000 queries (%d answered, %.0f q/s, refine %lld): RSS %.1f MB = "
      "%.3f x the raw vectors of the %lld live rows (%.1f MB)\n",
      answered, 1000.0 / qs, static_cast<long long>(Refine().value_or(0)),
      static_cast<double>(ResidentBytes()) / 1e6, static_cast<double>(ResidentBytes()) / raw,
      static_cast<long long>(snap.num_rows), raw / 1e6);
  const ResidentSplit split = ResidentBytesByKind();
  std::printf(
      "[figures] restart + 1,000 queries, RSS by kind: anonymous %.1f MB = %.3f x raw vectors "
      "(what the process needs), mapped files %.1f MB (evictable page cache of the base data)\n",
      static_cast<double>(split.anon) / 1e6, static_cast<double>(split.anon) / raw,
      static_cast<double>(split.file) / 1e6);
  const io::MappedFileCache::Stats cache = io::MappedFileCache::Global().stats();
  if (cache_bytes == 0 && IndexType() != "HNSW") IvfSweep(snap);
  std::printf(
      "[figures] --cache-bytes %.1f MB: peak RSS during the queries %.1f MB = %.3f x raw vectors "
      "(every 10th query); %lld trims advised %.1f MB of mappings in %.3f s\n",
      static_cast<double>(cache_bytes) / 1e6, static_cast<double>(peak) / 1e6,
      static_cast<double>(peak) / raw, static_cast<long long>(cache.trims),
      static_cast<double>(cache.advised_bytes) / 1e6, cache.trim_seconds);
  return 0;
}

}  // namespace strata::bench
