// Deletion vector: the set of deleted row positions of one data file (SSTable deletions.bin,
// base-table _deletions/*.bin; DESIGN.md §3), a 32-bit Roaring bitmap (CRoaring C API,
// Debian libroaring-dev) stored in the portable Roaring serialization format
// (github.com/RoaringBitmap/RoaringFormatSpec), readable by every Roaring implementation.
// Thread-safety: const methods may run concurrently on one object; mutation needs exclusive
// access (callers build a vector, then share it read-only).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

struct roaring_bitmap_s;

namespace strata::format {

class DeletionVector {
 public:
  DeletionVector();
  ~DeletionVector();
  DeletionVector(const DeletionVector& other);
  DeletionVector& operator=(const DeletionVector& other);
  DeletionVector(DeletionVector&& other) noexcept;
  DeletionVector& operator=(DeletionVector&& other) noexcept;

  /// Marks row `row` deleted.
  void Add(uint32_t row);
  /// Marks rows [begin, end) deleted.
  void AddRange(uint64_t begin, uint64_t end);
  /// Adds every row of `other`.
  void Union(const DeletionVector& other);
  bool Contains(uint32_t row) const;
  /// Number of deleted rows.
  uint64_t cardinality() const;
  bool empty() const { return cardinality() == 0; }
  /// Deleted rows ascending.
  std::vector<uint32_t> ToVector() const;
  bool operator==(const DeletionVector& other) const;

  /// Portable format bytes (run containers used where smaller).
  std::string Serialize() const;
  /// Errors: Corruption when `bytes` is not exactly one valid portable bitmap.
  static Result<DeletionVector> Deserialize(std::string_view bytes);

 private:
  roaring_bitmap_s* bitmap_;  // never null
};

}  // namespace strata::format
