#include "index/vector/sq8_codes.h"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace strata::index {

namespace {

// Relative widening of every bound for float rounding: the sums here and the float kernels
// of distance.h that rescore (about dim x 2^-24 relative in the worst case, 5e-5 at 784-d).
constexpr double kSlack = 1e-4;

#if defined(__AVX2__) && defined(__FMA__)
// Codes c[0, 16) widened to two vectors of 8 floats.
inline void Load16(const uint8_t* c, __m256* lo, __m256* hi) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c));
  *lo = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(raw));
  *hi = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(raw, 8)));
}

inline float Sum(__m256 v) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  float s = 0.0f;
  for (float l : lanes) s += l;
  return s;
}
#endif

// sum_j (a_j - b_j c_j)^2
float L2Kernel(const float* a, const float* b, const uint8_t* c, int64_t dim) {
  int64_t j = 0;
  float s = 0.0f;
#if defined(__AVX2__) && defined(__FMA__)
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  for (; j + 16 <= dim; j += 16) {
    __m256 c0, c1;
    Load16(c + j, &c0, &c1);
    const __m256 t0 = _mm256_fnmadd_ps(_mm256_loadu_ps(b + j), c0, _mm256_loadu_ps(a + j));
    const __m256 t1 = _mm256_fnmadd_ps(_mm256_loadu_ps(b + j + 8), c1, _mm256_loadu_ps(a + j + 8));
    acc0 = _mm256_fmadd_ps(t0, t0, acc0);
    acc1 = _mm256_fmadd_ps(t1, t1, acc1);
  }
  s = Sum(_mm256_add_ps(acc0, acc1));
#endif
  for (; j < dim; ++j) {
    const float t = a[j] - b[j] * static_cast<float>(c[j]);
    s += t * t;
  }
  return s;
}

// sum_j b_j c_j
float DotKernel(const float* b, const uint8_t* c, int64_t dim) {
  int64_t j = 0;
  float s = 0.0f;
#if defined(__AVX2__) && defined(__FMA__)
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  for (; j + 16 <= dim; j += 16) {
    __m256 c0, c1;
    Load16(c + j, &c0, &c1);
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(b + j), c0, acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(b + j + 8), c1, acc1);
  }
  s = Sum(_mm256_add_ps(acc0, acc1));
#endif
  for (; j < dim; ++j) s += b[j] * static_cast<float>(c[j]);
  return s;
}

}  // namespace

std::shared_ptr<const Sq8Codes> Sq8Codes::Build(const arrow::Array& list, int64_t dim) {
  const auto& type = list.type();
  if (dim < 1 || type->id() != arrow::TypeId::kFixedSizeList ||
      type->value_type()->id() != arrow::TypeId::kFloat32 || type->list_size() != dim) {
    return nullptr;
  }
  auto out = std::make_shared<Sq8Codes>();
  const int64_t n = list.length();
  out->dim_ = dim;
  out->rows_ = n;
  const arrow::Array values = list.child(0);
  const float* base = values.raw_values<float>() + list.offset() * dim;
  const bool row_nulls = list.null_count() > 0;
  const bool element_nulls = values.null_count() > 0;
  auto usable = [&](int64_t i) {
    if (row_nulls && list.IsNull(i)) return false;
    const float* v = base + i * dim;
    for (int64_t j = 0; j < dim; ++j) {
      if (!std::isfinite(v[j])) return false;
      if (element_nulls && values.IsNull((list.offset() + i) * dim + j)) return false;
    }
    return true;
  };
  std::vector<uint8_t> ok(static_cast<size_t>(n));
  std::vector<float> mn(static_cast<size_t>(dim), std::numeric_limits<float>::infinity());
  std::vector<float> mx(static_cast<size_t>(dim), -std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < n; ++i) {
    ok[static_cast<size_t>(i)] = usable(i);
    if (!ok[static_cast<size_t>(i)]) continue;
    const float* v = base + i * dim;
    for (int64_t j = 0; j < dim; ++j) {
      mn[static_cast<size_t>(j)] = std::min(mn[static_cast<size_t>(j)], v[j]);
      mx[static_cast<size_t>(j)] = std::max(mx[static_cast<size_t>(j)], v[j]);
    }
  }
  out->lo_.assign(static_cast<size_t>(dim), 0.0f);
  out->step_.assign(static_cast<size_t>(dim), 0.0f);
  for (int64_t j = 0; j < dim; ++j) {
    const size_t u = static_cast<size_t>(j);
    if (!(mn[u] <= mx[u])) continue;  // no usable row
    out->lo_[u] = mn[u];
    // The range in double: max - min of finite floats may overflow a float.
    const double range = static_cast<double>(mx[u]) - static_cast<double>(mn[u]);
    const double step = range / 255.0;
    out->step_[u] = std::isfinite(static_cast<float>(step)) ? static_cast<float>(step) : 0.0f;
  }
  out->codes_.assign(static_cast<size_t>(n * dim), 0);
  out->residual_.assign(static_cast<size_t>(n), -1.0f);
  out->norm_.assign(static_cast<size_t>(n), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    if (!ok[static_cast<size_t>(i)]) continue;
    const float* v = base + i * dim;
    uint8_t* c = out->codes_.data() + i * dim;
    double r2 = 0, n2 = 0;
    for (int64_t j = 0; j < dim; ++j) {
      const size_t u = static_cast<size_t>(j);
      const double lo = out->lo_[u], step = out->step_[u];
      double code = step > 0 ? std::nearbyint((v[j] - lo) / step) : 0.0;
      code = std::clamp(code, 0.0, 255.0);
      c[j] = static_cast<uint8_t>(code);
      const double e = static_cast<double>(v[j]) - (lo + step * code);
      r2 += e * e;
      n2 += static_cast<double>(v[j]) * v[j];
    }
    const float rf = static_cast<float>(std::sqrt(r2) * (1 + kSlack));
    // The float kernels' own view of the norm: a vector whose squared norm underflows is a
    // zero vector to exact cosine search (skipped), one that overflows gives it inf or NaN
    // distances; neither is coded, so the floats decide them as before.
    const float float_n2 = SquaredNorm(v, dim);
    // Below about 1e-30 (float's subnormal range for the products) the float kernels lose
    // far more than kSlack of a cosine: such rows stay with the floats too (a break test
    // found cosine misses with components of 1e-24).
    if (!std::isfinite(rf) || !std::isfinite(float_n2) || n2 > 1e30 || (n2 > 0 && n2 < 1e-30)) {
      continue;
    }
    out->residual_[static_cast<size_t>(i)] = rf;
    out->norm_[static_cast<size_t>(i)] = float_n2 > 0.0f ? static_cast<float>(std::sqrt(n2)) : 0.0f;
  }
  return out;
}

Sq8Query::Sq8Query(DistanceType type, const float* q, float q_norm, int64_t dim)
    : type_(type), q_(q), q_norm_(q_norm), dim_(dim) {
  a_.resize(static_cast<size_t>(dim));
  b_.resize(static_cast<size_t>(dim));
}

void Sq8Query::Bind(const Sq8Codes& codes) {
  codes_ = &codes;
  const std::vector<float>& lo = codes.lo();
  const std::vector<float>& step = codes.step();
  double mag = 0, mag_a = 0, mag_b = 0, dot_lo = 0;
  for (int64_t j = 0; j < dim_; ++j) {
    const size_t u = static_cast<size_t>(j);
    if (type_ == DistanceType::kL2) {
      a_[u] = q_[j] - lo[u];
      b_[u] = step[u];
      mag_a += static_cast<double>(a_[u]) * a_[u];
      mag_b += 255.0 * 255.0 * static_cast<double>(b_[u]) * b_[u];
    } else {
      b_[u] = q_[j] * step[u];
      dot_lo += static_cast<double>(q_[j]) * lo[u];
      mag += std::fabs(static_cast<double>(q_[j]) * lo[u]) + 255.0 * std::fabs(b_[u]);
    }
  }
  dot_lo_ = static_cast<float>(dot_lo);
  // Absolute slack of the kernel's sum: for l2 on |q - x^| (rounding of q - lo and of each
  // term, relative to the magnitudes involved), for dot on q . x^.
  slack_ = type_ == DistanceType::kL2
               ? static_cast<float>(kSlack * (std::sqrt(mag_a) + std::sqrt(mag_b)))
               : static_cast<float>(kSlack * mag);
}

void Sq8Query::Bounds(int64_t row, float* lo, float* hi) const {
  const float r = codes_->residual(row);
  const uint8_t* c = codes_->code(row);
  if (type_ == DistanceType::kL2) {
    const float d = std::sqrt(L2Kernel(a_.data(), b_.data(), c, dim_));
    const float e = r + slack_ + static_cast<float>(kSlack) * d;
    const float low = std::max(0.0f, d - e), high = d + e;
    *lo = low * low * static_cast<float>(1 - kSlack);
    *hi = high * high * static_cast<float>(1 + kSlack);
    return;
  }
  const float dot = dot_lo_ + DotKernel(b_.data(), c, dim_);
  const float x_norm = codes_->norm(row);
  // |q . x - q . x^| <= |q| r, plus the kernel's rounding and the float rescoring's.
  const float e = q_norm_ * r + slack_ + static_cast<float>(kSlack) * q_norm_ * x_norm;
  if (type_ == DistanceType::kDot) {
    *lo = 1.0f - dot - e;
    *hi = 1.0f - dot + e;
    return;
  }
  if (!(x_norm > 0.0f)) {
    *lo = *hi = std::numeric_limits<float>::infinity();
    return;
  }
  const float denom = q_norm_ * x_norm;
  *lo = 1.0f - (dot + e) / denom - static_cast<float>(kSlack);
  *hi = 1.0f - (dot - e) / denom + static_cast<float>(kSlack);
}

}  // namespace strata::index
