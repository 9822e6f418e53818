// Settings of bench/compaction_bench.cc from the environment (README "Benchmarks"):
// STRATA_COMPACTION_BENCH_ROWS, _FRESH, _PACED_SECONDS, _PACED_FRACTION, _PACED_COMPACTIONS,
// _PACED_MAX_SECONDS, _INDEX, _REFINE, _REWRITE_MIN_DEAD_ROWS, _REWRITE_FRACTION, _NICE, _UNIT,
// _DRAIN, _CACHE_BYTES, _KEEP
// (_PACED_RATE is read where the rate is chosen). Defaults give the issue's 1M-row run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "base/base_table.h"
#include "index/index_spec.h"

namespace strata::bench {

inline constexpr int64_t kCompactionBenchDefaultRows = 1000000;

inline int64_t NumRows() {
  const char* s = std::getenv("STRATA_COMPACTION_BENCH_ROWS");
  return s ? std::max<int64_t>(10000, std::atoll(s)) : kCompactionBenchDefaultRows;
}

// STRATA_COMPACTION_BENCH_FRESH=0 skips the fresh-table comparison of step 3 (disk bytes).
inline bool FreshCompare() {
  const char* s = std::getenv("STRATA_COMPACTION_BENCH_FRESH");
  return s == nullptr || std::string(s) != "0";
}

// The paced writer's offered rate as a fraction of the sustainable write rate measured during
// the load, S = 1 / (1 / load rows/s + 1 / compaction rows/s)
// (STRATA_COMPACTION_BENCH_PACED_FRACTION, default 0.5).
inline double PacedFraction() {
  const char* s = std::getenv("STRATA_COMPACTION_BENCH_PACED_FRACTION");
  return s != nullptr && std::atof(s) > 0 ? std::atof(s) : 0.5;
}

// The server's compaction defaults, but for the base rewrite trigger:
// STRATA_COMPACTION_BENCH_REWRITE_MIN_DEAD_ROWS (default 65,536) and
// STRATA_COMPACTION_BENCH_REWRITE_FRACTION (default 0.5; 0 disables), e.g. a low minimum for a
// 10,000-row smoke run.
inline base::CompactionOptions BenchCompaction() {
  base::CompactionOptions o;
  if (const char* s = std::getenv("STRATA_COMPACTION_BENCH_REWRITE_MIN_DEAD_ROWS")) {
    o.rewrite_min_dead_rows = std::max<int64_t>(1, std::atoll(s));
  }
  if (const char* s = std::getenv("STRATA_COMPACTION_BENCH_REWRITE_FRACTION")) {
    o.rewrite_dead_fraction = std::max(0.0, std::atof(s));
  }
  // STRATA_COMPACTION_BENCH_NICE: the background threads' nice value (default 10; 0 = the
  // process's). STRATA_COMPACTION_BENCH_UNIT=all: background compactions take every waiting
  // SSTable even while writes run (CompactionOptions::adaptive_unit false), for comparison.
  if (const char* s = std::getenv("STRATA_COMPACTION_BENCH_NICE")) {
    o.background_nice = std::clamp(std::atoi(s), 0, 19);
  }
  if (const char* s = std::getenv("STRATA_COMPACTION_BENCH_UNIT")) {
    o.adaptive_unit = std::string(s) != "all";
  }
  // STRATA_COMPACTION_BENCH_DRAIN=0: background compaction stops once L0 is under the
  // trigger (CompactionOptions::drain_after_trigger false), for comparison.
  if (const char* s = std::getenv("STRATA_COMPACTION_BENCH_DRAIN")) {
    o.drain_after_trigger = std::string(s) != "0";
  }
  return o;
}

// Length of the paced-writer step (STRATA_COMPACTION_BENCH_PACED_SECONDS, default 120; 0 skips).
inline double PacedSeconds() {
  const char* s = std::getenv("STRATA_COMPACTION_BENCH_PACED_SECONDS");
  return s ? std::max(0.0, std::atof(s)) : 120.0;
}

// The paced step goes on past PacedSeconds until this many compactions ended during it
// (STRATA_COMPACTION_BENCH_PACED_COMPACTIONS, default 2)...
inline uint64_t PacedCompactions() {
  const char* s = std::getenv("STRATA_COMPACTION_BENCH_PACED_COMPACTIONS");
  return s ? static_cast<uint64_t>(std::max(0, std::atoi(s))) : 2;
}

// ... for at most this long in all (STRATA_COMPACTION_BENCH_PACED_MAX_SECONDS, default 900;
// the warm-up until a first compaction ends has the same limit).
inline double PacedMaxSeconds() {
  const char* s = std::getenv("STRATA_COMPACTION_BENCH_PACED_MAX_SECONDS");
  return s ? std::max(0.0, std::atof(s)) : 900.0;
}

// STRATA_COMPACTION_BENCH_INDEX: the requested vector index type (default HNSW, the float
// graph on every tier; IVF_PQ / IVF_FLAT / IVF_SQ build that FAISS index on the base,
// docs/INDEXES.md; IVF_PQ with num_sub_vectors 16). STRATA_COMPACTION_BENCH_REFINE: the
// queries' refine_factor (default none).
inline std::string IndexType() {
  const char* s = std::getenv("STRATA_COMPACTION_BENCH_INDEX");
  return s != nullptr && *s != 0 ? s : "HNSW";
}
inline std::optional<int64_t> Refine() {
  const char* s = std::getenv("STRATA_COMPACTION_BENCH_REFINE");
  if (s == nullptr || std::atoll(s) <= 0) return std::nullopt;
  return std::atoll(s);
}

// STRATA_COMPACTION_BENCH_CACHE_BYTES: the --cache-bytes bound of the second restart child
// (default 128 MiB; the first runs without a bound). STRATA_COMPACTION_BENCH_KEEP=1 keeps the
// table directory at the end, so the restart step can be rerun alone.
inline int64_t CacheBytes() {
  const char* s = std::getenv("STRATA_COMPACTION_BENCH_CACHE_BYTES");
  return s != nullptr && std::atoll(s) > 0 ? std::atoll(s) : int64_t{128} << 20;
}
inline bool KeepTable() {
  const char* s = std::getenv("STRATA_COMPACTION_BENCH_KEEP");
  return s != nullptr && std::string(s) == "1";
}

inline index::IndexSpec Hnsw() {
  index::IndexSpec s;
  s.kind = index::IndexKind::kHnsw;
  s.column = "vec";
  s.name = "vec_idx";
  s.requested_type = IndexType();
  s.base_ivf = s.requested_type != "HNSW";
  if (s.requested_type == "IVF_PQ") s.params_json = R"({"num_sub_vectors":16})";
  s.hnsw.distance = index::DistanceType::kL2;
  return s;
}

}  // namespace strata::bench
