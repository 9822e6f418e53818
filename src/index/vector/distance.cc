#include "index/vector/distance.h"

#include <cctype>
#include <cmath>
#include <cstring>

namespace strata::index {

namespace {
// GCC/Clang vector extensions: 8 floats = one AVX2 register with -march=x86-64-v3. Four
// independent accumulators (32 floats per step) hide the add/FMA latency; the compiler emits
// the vector instructions (no intrinsics, no -ffast-math).
typedef float V8 __attribute__((vector_size(32)));

inline V8 Load(const float* p) {
  V8 v;
  std::memcpy(&v, p, sizeof(v));  // unaligned load
  return v;
}

inline float Sum(V8 v) {
  float s = 0.0f;
  for (int l = 0; l < 8; ++l) s += v[l];
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
  V8 s0 = {}, s1 = {}, s2 = {}, s3 = {};
  int64_t i = 0;
  for (; i + 32 <= dim; i += 32) {
    s0 += Load(a + i) * Load(b + i);
    s1 += Load(a + i + 8) * Load(b + i + 8);
    s2 += Load(a + i + 16) * Load(b + i + 16);
    s3 += Load(a + i + 24) * Load(b + i + 24);
  }
  for (; i + 8 <= dim; i += 8) s0 += Load(a + i) * Load(b + i);
  float s = Sum((s0 + s1) + (s2 + s3));
  for (; i < dim; ++i) s += a[i] * b[i];
  return s;
}

float SquaredNorm(const float* a, int64_t dim) { return Dot(a, a, dim); }

float L2Squared(const float* a, const float* b, int64_t dim) {
  V8 s0 = {}, s1 = {}, s2 = {}, s3 = {};
  int64_t i = 0;
  for (; i + 32 <= dim; i += 32) {
    const V8 d0 = Load(a + i) - Load(b + i);
    const V8 d1 = Load(a + i + 8) - Load(b + i + 8);
    const V8 d2 = Load(a + i + 16) - Load(b + i + 16);
    const V8 d3 = Load(a + i + 24) - Load(b + i + 24);
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  for (; i + 8 <= dim; i += 8) {
    const V8 d = Load(a + i) - Load(b + i);
    s0 += d * d;
  }
  float s = Sum((s0 + s1) + (s2 + s3));
  for (; i < dim; ++i) {
    const float d = a[i] - b[i];
    s += d * d;
  }
  return s;
}

float CosineDistance(const float* a, float a_norm, const float* b, int64_t dim) {
  V8 d0 = {}, d1 = {}, n0 = {}, n1 = {};
  int64_t i = 0;
  for (; i + 16 <= dim; i += 16) {
    const V8 b0 = Load(b + i), b1 = Load(b + i + 8);
    d0 += Load(a + i) * b0;
    d1 += Load(a + i + 8) * b1;
    n0 += b0 * b0;
    n1 += b1 * b1;
  }
  for (; i + 8 <= dim; i += 8) {
    const V8 b0 = Load(b + i);
    d0 += Load(a + i) * b0;
    n0 += b0 * b0;
  }
  float dot = Sum(d0 + d1);
  float bb = Sum(n0 + n1);
  for (; i < dim; ++i) {
    dot += a[i] * b[i];
    bb += b[i] * b[i];
  }
  const float denom = a_norm * std::sqrt(bb);
  if (!(denom > 0.0f) || !std::isfinite(denom)) return 1.0f;
  return 1.0f - dot / denom;
}

float DotDistance(const float* a, const float* b, int64_t dim) { return 1.0f - Dot(a, b, dim); }

}  // namespace strata::index
