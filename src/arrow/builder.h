// Array builders: append values row by row, then Finish() into an immutable ArrayData with
// 64-byte-aligned buffers. One builder class covers every type of type.h; nested types own
// child builders. Thread-safety: a builder is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/array.h"
#include "arrow/buffer.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::arrow {

/// Builds one array of `type`. Appends must match the type's physical kind:
///   bool: AppendBool; signed ints, date32/64, time32/64, timestamp, duration: AppendInt;
///   unsigned ints: AppendUInt; float16 (IEEE half bits): AppendHalfBits; float32/64: AppendDouble;
///   utf8/binary (large too), fixed_size_binary, decimal128 (16 little-endian bytes): AppendBytes;
///   list/large_list: child(0) values, then AppendListEnd (or BeginList + child appends + nothing);
///   fixed_size_list: list_size child appends, then AppendValid();
///   struct: one append to every child builder, then AppendValid().
/// Any type: AppendNull() (for fixed_size_list and struct it also appends a null / default to
/// each child so child lengths stay aligned).
/// Also accepted (range-checked): AppendInt into unsigned ints, AppendUInt into signed ints and
/// temporal types, AppendDouble into float16 (rounded to nearest even), AppendFloats into
/// float32 / float64 and into fixed_size_list<float32> (n must be a multiple of the list size;
/// appends n / list_size valid rows).
/// Errors: Invalid when the append does not fit the type (wrong kind, value out of range for the
/// integer width, wrong fixed byte width, list offsets past int32), naming the value and type.
/// A failed append changes nothing.
/// Buffers: 64-byte aligned (BufferBuilder); the validity bitmap is materialized only once a
/// null is appended, else buffers[0] is nullptr.
class ArrayBuilder {
 public:
  explicit ArrayBuilder(DataTypePtr type);
  ~ArrayBuilder();
  ArrayBuilder(const ArrayBuilder&) = delete;
  ArrayBuilder& operator=(const ArrayBuilder&) = delete;

  const DataTypePtr& type() const { return type_; }
  int64_t length() const { return length_; }
  int64_t null_count() const { return null_count_; }

  void Reserve(int64_t additional_rows);

  Status AppendNull();
  Status AppendNulls(int64_t n);
  Status AppendBool(bool v);
  Status AppendInt(int64_t v);
  Status AppendUInt(uint64_t v);
  Status AppendDouble(double v);
  Status AppendHalfBits(uint16_t bits);
  Status AppendBytes(std::string_view v);
  /// Closes a list element whose values were appended to child(0) since the last element.
  Status AppendListEnd();
  /// Marks a valid fixed_size_list / struct element whose children were appended.
  Status AppendValid();
  /// Bulk append of `n` float32 values (fast path for vector columns: the child of a
  /// fixed_size_list<float32>).
  Status AppendFloats(const float* v, int64_t n);

  /// Child builder j (list-likes: 0; struct: one per field).
  ArrayBuilder* child(int j) { return children_.at(static_cast<size_t>(j)).get(); }
  int num_children() const { return static_cast<int>(children_.size()); }

  /// Hands over the built array and resets the builder to empty. Invalid when a
  /// fixed_size_list / struct child length does not match the rows appended (the builder is
  /// reset anyway).
  Result<ArrayDataPtr> Finish();

 private:
  void AppendValidity(bool valid);
  void ResetOffsets();
  Status WrongKind(const char* what) const;
  Status StoreInteger(int64_t v, bool is_unsigned, uint64_t uv);
  void AppendEmptySlots(int64_t n);

  DataTypePtr type_;
  int64_t length_ = 0;
  int64_t null_count_ = 0;
  BufferBuilder validity_;
  BufferBuilder values_;   // fixed-width values, or the data bytes of utf8/binary
  BufferBuilder offsets_;  // utf8/binary/list offsets
  std::vector<std::unique_ptr<ArrayBuilder>> children_;
};

/// Builds a record batch column by column: `column(i)` is the builder of field i.
class RecordBatchBuilder {
 public:
  explicit RecordBatchBuilder(SchemaPtr schema);
  ArrayBuilder* column(int i) { return columns_.at(static_cast<size_t>(i)).get(); }
  const SchemaPtr& schema() const { return schema_; }
  /// Finishes every column; Invalid when column lengths differ (naming the column).
  Result<std::shared_ptr<RecordBatch>> Finish();

 private:
  SchemaPtr schema_;
  std::vector<std::unique_ptr<ArrayBuilder>> columns_;
};

/// IEEE 754 binary16 conversions: float -> half bits (round to nearest even, overflow to
/// infinity, NaN kept) and half bits -> float (exact).
uint16_t FloatToHalfBits(float v);
float HalfBitsToFloat(uint16_t bits);

/// Convenience: array of int64 / float32 / utf8 values with optional nulls (nullopt = null).
ArrayDataPtr MakeInt64Array(const std::vector<std::optional<int64_t>>& values);
ArrayDataPtr MakeFloat32Array(const std::vector<std::optional<float>>& values);
ArrayDataPtr MakeUtf8Array(const std::vector<std::optional<std::string>>& values);
/// fixed_size_list<item: float32, nullable item>[dim] from row-major values (rows x dim).
ArrayDataPtr MakeVectorArray(const std::vector<float>& values, int32_t dim);

}  // namespace strata::arrow
