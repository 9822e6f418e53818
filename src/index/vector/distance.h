// Vector distances over float32, with the conventions LanceDB reports in `_distance`.
// Sources: lance-linalg (lance-format/lance, rust/lance-linalg/src/distance/{l2,cosine,dot}.rs):
//   l2     = squared Euclidean distance  sum((a_i - b_i)^2)       (no square root)
//   cosine = 1 - dot(a, b) / (|a| * |b|)
//   dot    = 1 - dot(a, b)
// Kernels use GCC/Clang vector extensions (8 x float32, several independent accumulators), so
// the compiler emits AVX2/FMA code with -march=x86-64-v3 without -ffast-math; results may
// differ from a sequential sum in the last bits. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace strata::index {

enum class DistanceType { kL2, kCosine, kDot };

/// "l2", "cosine", "dot".
const char* DistanceTypeName(DistanceType type);

/// Parses "l2" | "cosine" | "dot" (case-insensitive; "euclidean" is an alias of l2 as in
/// LanceDB). Errors: NotSupported for "hamming", Invalid for anything else, naming the value.
Result<DistanceType> ParseDistanceType(std::string_view name);

/// sum(a_i * b_i) over `dim` elements.
float Dot(const float* a, const float* b, int64_t dim);
/// sum(a_i * a_i).
float SquaredNorm(const float* a, int64_t dim);
/// Squared L2 distance sum((a_i - b_i)^2).
float L2Squared(const float* a, const float* b, int64_t dim);
/// 1 - dot(a,b) / (|a| |b|); 1 when either vector has zero norm (treated as orthogonal).
/// `a_norm` is |a| (precomputed for the query vector).
float CosineDistance(const float* a, float a_norm, const float* b, int64_t dim);
/// 1 - dot(a, b).
float DotDistance(const float* a, const float* b, int64_t dim);

/// Distance of `type` between query `q` (with norm `q_norm`, used by cosine only) and `v`.
inline float Distance(DistanceType type, const float* q, float q_norm, const float* v,
                      int64_t dim) {
  switch (type) {
    case DistanceType::kL2:
      return L2Squared(q, v, dim);
    case DistanceType::kCosine:
      return CosineDistance(q, q_norm, v, dim);
    case DistanceType::kDot:
      return DotDistance(q, v, dim);
  }
  return 0.0f;
}

}  // namespace strata::index
