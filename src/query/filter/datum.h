// Internal to the filter evaluator: Datum (an evaluated value: a whole column of a batch, or a
// scalar standing for every row) and the bitmap / array helpers the kernels share.
// Arrays built here always have offset 0 and 64-byte-aligned buffers (arrow/buffer.h).
// Thread-safety: pure functions over immutable arrays.
#pragma once

#include <cstdint>
#include <string_view>

#include "arrow/array.h"
#include "arrow/buffer.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::query::filter::internal {

/// An evaluated value: `data` has the batch's row count, or length 1 when `scalar` (the one
/// value stands for every row).
struct Datum {
  arrow::ArrayDataPtr data;
  bool scalar = false;
  /// Row index into `data` for logical row i.
  int64_t Index(int64_t i) const { return scalar ? 0 : i; }
  bool IsValid(int64_t i) const;
};

/// A writable, zero-filled, 64-byte-aligned buffer of `size` bytes, finished into a Buffer.
class OutBuffer {
 public:
  explicit OutBuffer(int64_t size) {
    b_.Reserve(size > 0 ? size : 1);  // data() is never null, even for 0 bytes
    b_.Resize(size);
  }
  uint8_t* data() { return b_.mutable_data(); }
  template <typename T>
  T* data_as() {
    return reinterpret_cast<T*>(b_.mutable_data());
  }
  arrow::BufferPtr Finish() { return b_.Finish(); }

 private:
  arrow::BufferBuilder b_;
};

/// `n` bits of `bits` starting at bit `offset`, re-based to bit 0 (zero-copy when the offset is
/// a multiple of 8). `bits` must not be null.
arrow::BufferPtr RebaseBits(const arrow::BufferPtr& bits, int64_t offset, int64_t n);

/// Validity of `a` re-based to bit 0 (a.length bits), or nullptr when every value is valid.
/// A null-typed array gives an all-zero bitmap.
arrow::BufferPtr ValidityOf(const arrow::ArrayData& a);

/// Validity of `d` for `n` logical rows: a scalar expands to all-valid (nullptr) or all-null.
arrow::BufferPtr ValidityFor(const Datum& d, int64_t n);

/// Bitwise AND of two validity bitmaps of `n` bits (nullptr = all valid).
arrow::BufferPtr AndValidity(const arrow::BufferPtr& a, const arrow::BufferPtr& b, int64_t n);

/// An array of `type` with `n` rows, offset 0, from its buffers (validity first); null_count is
/// counted from the validity.
arrow::ArrayDataPtr MakeArray(const arrow::DataTypePtr& type, int64_t n,
                              std::vector<arrow::BufferPtr> buffers,
                              std::vector<arrow::ArrayDataPtr> children = {});

/// `n` rows all null of `type`: null, bool, fixed-width, utf8 / binary (and large), list,
/// large_list, fixed_size_list (list_size null child values per row) and struct.
arrow::ArrayDataPtr MakeNullArray(const arrow::DataTypePtr& type, int64_t n);

/// Expands a scalar datum to `n` rows (arrays are returned as they are).
arrow::ArrayDataPtr Broadcast(const Datum& d, int64_t n);

/// Reads the strings of a utf8 / large_utf8 array: view(i) of physical row i (offset applied).
struct StringReader {
  const uint8_t* offsets = nullptr;
  const char* bytes = nullptr;
  int64_t offset = 0;
  bool large = false;
  explicit StringReader(const arrow::ArrayData& a);
  std::string_view operator()(int64_t i) const {
    const int64_t j = offset + i;
    if (large) {
      const int64_t* o = reinterpret_cast<const int64_t*>(offsets);
      return {bytes + o[j], static_cast<size_t>(o[j + 1] - o[j])};
    }
    const int32_t* o = reinterpret_cast<const int32_t*>(offsets);
    return {bytes + o[j], static_cast<size_t>(o[j + 1] - o[j])};
  }
};

/// Appends strings into a utf8 (int32 offsets) or large_utf8 array.
class StringWriter {
 public:
  StringWriter(bool large, int64_t n);
  void Append(std::string_view s);
  void AppendEmpty() { Append({}); }
  /// Total bytes appended so far.
  int64_t bytes() const { return data_.size(); }
  /// Invalid when a utf8 result passes 2 GiB of bytes (int32 offsets).
  Result<arrow::ArrayDataPtr> Finish(const arrow::DataTypePtr& type, arrow::BufferPtr validity);

 private:
  bool large_;
  int64_t n_;
  arrow::BufferBuilder offsets_;
  arrow::BufferBuilder data_;
};

/// True for utf8 / large_utf8.
inline bool IsString(const arrow::DataType& t) {
  return t.id() == arrow::TypeId::kUtf8 || t.id() == arrow::TypeId::kLargeUtf8;
}
/// True for date32, date64 and timestamp.
inline bool IsTemporal(const arrow::DataType& t) {
  return t.id() == arrow::TypeId::kDate32 || t.id() == arrow::TypeId::kDate64 ||
         t.id() == arrow::TypeId::kTimestamp;
}

}  // namespace strata::query::filter::internal
