// The IVF parameters: type names, validation and the size of the training sample.
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "index/vector/ivf_index.h"
#include "index/vector/ivf_index_impl.h"

namespace strata::index {

namespace {

using ivf_internal::kMaxDim;
using ivf_internal::kMaxPartitions;
using ivf_internal::kMaxSampleRate;

}  // namespace

const char* IvfTypeName(IvfType t) {
  switch (t) {
    case IvfType::kIvfFlat:
      return "IVF_FLAT";
    case IvfType::kIvfPq:
      return "IVF_PQ";
    case IvfType::kIvfSq:
      return "IVF_SQ";
    case IvfType::kIvfHnswSq:
      return "IVF_HNSW_SQ";
    case IvfType::kIvfHnswPq:
      return "IVF_HNSW_PQ";
  }
  return "?";
}

Result<IvfType> ParseIvfType(std::string_view s) {
  std::string upper(s);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (IvfType t : {IvfType::kIvfFlat, IvfType::kIvfPq, IvfType::kIvfSq, IvfType::kIvfHnswSq,
                    IvfType::kIvfHnswPq}) {
    if (upper == IvfTypeName(t)) return t;
  }
  return Status::Invalid("IVF index type '" + std::string(s) +
                         "' is unknown (IVF_FLAT, IVF_PQ, IVF_SQ, IVF_HNSW_SQ, IVF_HNSW_PQ)");
}

bool IvfTypeUsesPq(IvfType t) { return t == IvfType::kIvfPq || t == IvfType::kIvfHnswPq; }
bool IvfTypeUsesHnsw(IvfType t) { return t == IvfType::kIvfHnswSq || t == IvfType::kIvfHnswPq; }

Status ValidateIvfParams(int64_t dim, const IvfParams& p) {
  auto range = [](const std::string& field, int64_t v, int64_t lo, int64_t hi) {
    return Status::Invalid("IVF " + field + " " + std::to_string(v) + " is out of range [" +
                           std::to_string(lo) + ", " + std::to_string(hi) + "]");
  };
  if (dim < 1 || dim > kMaxDim) return range("dim", dim, 1, kMaxDim);
  if (static_cast<int>(p.type) < 0 || static_cast<int>(p.type) > 4) {
    return Status::Invalid("IVF index type " + std::to_string(static_cast<int>(p.type)) +
                           " is unknown");
  }
  if (static_cast<int>(p.distance) < 0 ||
      static_cast<int>(p.distance) > static_cast<int>(DistanceType::kDot)) {
    return Status::Invalid("IVF distance type " + std::to_string(static_cast<int>(p.distance)) +
                           " is unknown");
  }
  if (p.num_partitions < 0 || p.num_partitions > kMaxPartitions) {
    return range("num_partitions", p.num_partitions, 0, kMaxPartitions);
  }
  if (IvfTypeUsesPq(p.type)) {
    if (p.num_sub_vectors < 0 || p.num_sub_vectors > dim) {
      return range("num_sub_vectors", p.num_sub_vectors, 0, dim);
    }
    if (p.num_sub_vectors > 0 && dim % p.num_sub_vectors != 0) {
      return Status::Invalid("IVF num_sub_vectors " + std::to_string(p.num_sub_vectors) +
                             " must divide dim " + std::to_string(dim));
    }
    if (p.nbits < 1 || p.nbits > 16) return range("nbits", p.nbits, 1, 16);
  } else if (p.num_sub_vectors < 0) {
    return range("num_sub_vectors", p.num_sub_vectors, 0, dim);
  }
  if (p.max_iterations < 1 || p.max_iterations > 1000) {
    return range("max_iterations", p.max_iterations, 1, 1000);
  }
  if (p.sample_rate < 1 || p.sample_rate > kMaxSampleRate) {
    return range("sample_rate", p.sample_rate, 1, kMaxSampleRate);
  }
  if (IvfTypeUsesHnsw(p.type)) {
    if (p.hnsw_m < 2 || p.hnsw_m > 128) return range("hnsw_m", p.hnsw_m, 2, 128);
    if (p.ef_construction < p.hnsw_m || p.ef_construction > 4096) {
      return range("ef_construction", p.ef_construction, p.hnsw_m, 4096);
    }
  }
  return Status::OK();
}

int64_t IvfTrainingRows(const IvfParams& p, int64_t rows) {
  const int64_t needed = IvfTypeUsesPq(p.type) ? int64_t{1} << p.nbits : 1;
  int64_t sample = std::max(p.sample_rate * std::max<int64_t>(p.num_partitions, 1), needed);
  if (IvfTypeUsesPq(p.type)) sample = std::max(sample, p.sample_rate * needed);
  return std::min(rows, sample);
}

}  // namespace strata::index
