// Exact (brute-force) k-nearest-neighbour search over fixed_size_list<float32> columns, the
// fallback when a source has no HNSW for the column or a filter passes few rows. Distances and
// conventions are those of index/vector/distance.h (LanceDB `_distance`); the kernel is the
// faster of hnswlib's SIMD spaces and distance.h's, measured in bench/hnsw_bench.cc.
// Results are sorted by distance ascending, ties broken by the lower label (older row first).
// Thread-safety: an ExactSearcher is immutable after construction and may scan from many
// threads; a TopK is not internally locked (one per thread, then Merge).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "arrow/array.h"
#include "common/status.h"
#include "index/vector/distance.h"
#include "index/vector/hnsw_index.h"

namespace strata::index {

/// Keeps the k best (smallest distance, then smallest label) of the pushed neighbours.
class TopK {
 public:
  explicit TopK(int64_t k);
  void Push(int64_t label, float distance);
  /// Pushes every neighbour of `other`.
  void Merge(const TopK& other);
  int64_t k() const { return k_; }
  int64_t size() const { return static_cast<int64_t>(heap_.size()); }
  /// Worst kept distance (+inf while fewer than k are kept).
  float threshold() const;
  /// The kept neighbours, best first.
  std::vector<Neighbor> Sorted() const;

 private:
  int64_t k_;
  std::vector<Neighbor> heap_;  // max-heap by (distance, label)
};

class ExactSearcher {
 public:
  /// A searcher for `query` (`dim` floats). Errors: Invalid for dim < 1, a non-finite element
  /// (naming its index), or a zero query under cosine.
  static Result<ExactSearcher> Make(const float* query, int64_t dim, DistanceType distance);

  /// Scores rows [0, column.length) of `column` (fixed_size_list<float32> of size dim) as labels
  /// first_label + i and pushes them into `top`; rows with a null vector, a null element, or a
  /// NaN distance are skipped, and so are labels `accept` rejects (when set) and, under cosine,
  /// zero vectors (no direction; HnswIndex does not index them either, so both paths agree).
  /// Errors: Invalid for a column of another type or list size.
  Status Scan(const arrow::Array& column, int64_t first_label, TopK* top,
              const std::function<bool(int64_t)>& accept = {}) const;
  /// Distance from the query to one vector of dim() floats.
  float Distance(const float* vector) const;

  int64_t dim() const { return static_cast<int64_t>(query_.size()); }

 private:
  ExactSearcher() = default;
  std::vector<float> query_;
  float query_norm_ = 0.0f;
  DistanceType distance_ = DistanceType::kL2;
};

}  // namespace strata::index
