#include "query/distance.h"

#include <cctype>
#include <cmath>

namespace strata::query {

namespace {
// 16 lanes = two 8-float AVX2 registers; independent accumulators let GCC vectorize the
// reduction without reassociation flags.
constexpr int kLanes = 16;

inline float SumLanes(const float* acc) {
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += acc[l];
  return s;
}
}  // namespace

const char* DistanceTypeName(DistanceType type) {
  switch (type) {
    case DistanceType::kL2:
      return "l2";
    case DistanceType::kCosine:
      return "cosine";
    case DistanceType::kDot:
      return "dot";
  }
  return "?";
}

Result<DistanceType> ParseDistanceType(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "l2" || lower == "euclidean") return DistanceType::kL2;
  if (lower == "cosine") return DistanceType::kCosine;
  if (lower == "dot") return DistanceType::kDot;
  if (lower == "hamming") {
    return Status::NotSupported(
        "distance_type 'hamming' is not supported yet (supported: l2, cosine, dot)");
  }
  return Status::Invalid("distance_type '" + std::string(name) +
                         "' is unknown (supported: l2, cosine, dot)");
}

float Dot(const float* a, const float* b, int64_t dim) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= dim; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += a[i + l] * b[i + l];
  }
  float s = SumLanes(acc);
  for (; i < dim; ++i) s += a[i] * b[i];
  return s;
}

float SquaredNorm(const float* a, int64_t dim) { return Dot(a, a, dim); }

float L2Squared(const float* a, const float* b, int64_t dim) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= dim; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const float d = a[i + l] - b[i + l];
      acc[l] += d * d;
    }
  }
  float s = SumLanes(acc);
  for (; i < dim; ++i) {
    const float d = a[i] - b[i];
    s += d * d;
  }
  return s;
}

float CosineDistance(const float* a, float a_norm, const float* b, int64_t dim) {
  float dot_acc[kLanes] = {};
  float norm_acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= dim; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      dot_acc[l] += a[i + l] * b[i + l];
      norm_acc[l] += b[i + l] * b[i + l];
    }
  }
  float dot = SumLanes(dot_acc);
  float bb = SumLanes(norm_acc);
  for (; i < dim; ++i) {
    dot += a[i] * b[i];
    bb += b[i] * b[i];
  }
  const float denom = a_norm * std::sqrt(bb);
  if (!(denom > 0.0f) || !std::isfinite(denom)) return 1.0f;
  return 1.0f - dot / denom;
}

float DotDistance(const float* a, const float* b, int64_t dim) { return 1.0f - Dot(a, b, dim); }

}  // namespace strata::query
