// Internal to the IVF index: the state of an IvfIndex (ivf_index.h) and the limits shared by
// the files that implement it (ivf_index.cc: training, adding, searching; ivf_index_io.cc:
// serialisation and clones; ivf_params.cc: type names and parameter validation). Not a public
// interface: include only from those files.
// Locks: Impl::mu guards `ivf` (Search, Serialize, Clone, memory_bytes and AddColumn's
// assignment and encoding hold it shared; appending codes to the inverted lists holds it
// exclusively).
#pragma once

#include <faiss/IndexIVF.h>
#include <faiss/MetricType.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "index/vector/distance.h"
#include "index/vector/fair_rw_lock.h"
#include "index/vector/ivf_index.h"

namespace strata::index {

namespace ivf_internal {

inline constexpr int64_t kMaxDim = 65536;
inline constexpr int64_t kMaxPartitions = 65536;
inline constexpr int64_t kMaxSampleRate = int64_t{1} << 20;

// Cosine runs under L2 over unit vectors (see the header: |q - x|^2 = 2 - 2 cos for unit q, x).
inline faiss::MetricType MetricOf(DistanceType d) {
  return d == DistanceType::kDot ? faiss::METRIC_INNER_PRODUCT : faiss::METRIC_L2;
}

}  // namespace ivf_internal

struct IvfIndex::Impl {
  int64_t dim = 0;
  IvfParams params;
  // Guarded by `mu`: Search, Serialize, Clone, memory_bytes and AddColumn's assignment and
  // encoding hold it shared; appending codes to the inverted lists holds it exclusively.
  std::unique_ptr<faiss::IndexIVF> ivf;
  mutable FairRwLock mu;
  std::atomic<int64_t> size{0};
};

}  // namespace strata::index
