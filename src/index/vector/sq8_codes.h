// 8-bit scalar-quantised copies of a batch of float32 vectors, and bounded distances over them,
// so an exact search can read a quarter of the bytes and still return exact results.
//
// Codes (per batch of rows, per dimension j): lo_j = min, step_j = (max - min) / 255,
// code = round((x - lo_j) / step_j) in [0, 255], decoded x^ = lo_j + step_j * code (the
// scalar quantiser of FAISS's ScalarQuantizer QT_8bit, with rounding to the nearest level).
// Each row also keeps its exact residual r = |x - x^| (rounded up) and norm |x|.
//
// Bounds (triangle and Cauchy-Schwarz inequalities, for a float query q):
//   l2      |q - x| lies in [|q - x^| - r, |q - x^| + r]; squared for LanceDB's l2 distance
//   dot     1 - q.x lies in 1 - q.x^ -/+ |q| r
//   cosine  1 - q.x / (|q| |x|) lies in that -/+ r / |x|
// widened by a relative 1e-4 of the terms for float rounding in the sums. A top-k over the
// upper bounds gives a threshold T no true k-th distance exceeds; only rows whose lower bound
// is <= T can be in the true top k and are rescored with the float vectors (query/
// filtered_source_search.cc), so results equal the float exact search's.
//
// Units: distances as index/vector/distance.h. Memory: dim + 8 bytes per row plus 8 bytes per
// dimension per batch (a quarter of the float vectors and a little). Why our own kernel rather
// than FAISS's ScalarQuantizer: the rescoring needs the per-row residual, and the kernel is
// AVX2 (-march=x86-64-v3) with a scalar fallback, two loads and two FMAs per 8 dimensions.
// Thread-safety: Sq8Codes is immutable after Build and may be read from many threads; a
// Sq8Query is per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "arrow/array.h"
#include "index/vector/distance.h"

namespace strata::index {

class Sq8Codes {
 public:
  /// Codes of rows [0, list.length) of `list` (fixed_size_list<float32> of size `dim`).
  /// Rows with a null vector, a null element or a non-finite element get no usable code
  /// (IsCoded false): callers score them from the floats (which skip them as exact search
  /// does). Returns nullptr for a column of another type or size.
  static std::shared_ptr<const Sq8Codes> Build(const arrow::Array& list, int64_t dim);

  int64_t dim() const { return dim_; }
  int64_t rows() const { return rows_; }
  /// Bytes held (codes, per-row and per-dimension arrays).
  int64_t bytes() const { return BytesFor(rows_, dim_); }
  /// Bytes the codes of `rows` vectors of `dim` floats hold.
  static int64_t BytesFor(int64_t rows, int64_t dim) { return rows * (dim + 8) + dim * 8; }
  bool IsCoded(int64_t row) const { return residual_[static_cast<size_t>(row)] >= 0.0f; }
  const uint8_t* code(int64_t row) const { return codes_.data() + row * dim_; }
  float residual(int64_t row) const { return residual_[static_cast<size_t>(row)]; }
  float norm(int64_t row) const { return norm_[static_cast<size_t>(row)]; }
  const std::vector<float>& lo() const { return lo_; }
  const std::vector<float>& step() const { return step_; }

 private:
  int64_t dim_ = 0;
  int64_t rows_ = 0;
  std::vector<float> lo_, step_;  // per dimension
  std::vector<uint8_t> codes_;    // rows x dim
  std::vector<float> residual_;   // per row; -1 = not coded
  std::vector<float> norm_;       // per row, |x|
};

/// Distance bounds of one query against the rows of Sq8Codes batches.
class Sq8Query {
 public:
  /// `q` has `dim` floats (finite), `q_norm` = |q| (used by dot and cosine).
  Sq8Query(DistanceType type, const float* q, float q_norm, int64_t dim);

  /// Prepares the per-dimension terms of `codes` (once per batch, O(dim)).
  void Bind(const Sq8Codes& codes);
  /// [lo, hi] containing the exact distance of coded row `row` of the bound batch. Under
  /// cosine a zero-norm row gets [+inf, +inf] (exact search skips it).
  void Bounds(int64_t row, float* lo, float* hi) const;

 private:
  DistanceType type_;
  const float* q_;
  float q_norm_;
  int64_t dim_;
  const Sq8Codes* codes_ = nullptr;
  std::vector<float> a_, b_;  // l2: q - lo and step; dot/cosine: q * step, unused
  float dot_lo_ = 0;          // dot/cosine: q . lo
  float slack_ = 0;           // absolute rounding slack of the kernel's sum
};

}  // namespace strata::index
