// Arrow arrays and record batches (Arrow columnar format specification, "Physical memory
// layout"). An ArrayData is the generic layout: type, length, logical offset, null count,
// buffers in the order the format gives them, and child arrays. Array adds typed read access.
// Thread-safety: arrays are immutable once built; share them freely between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "arrow/buffer.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::arrow {

/// Buffers per type, index 0 always the validity bitmap (nullptr = all valid):
///   null: none (buffers is empty)           bool: [validity, bits]
///   fixed-width: [validity, values]         utf8/binary: [validity, int32 offsets, bytes]
///   large_utf8/large_binary: [validity, int64 offsets, bytes]
///   list: [validity, int32 offsets] + 1 child   large_list: int64 offsets + 1 child
///   fixed_size_list: [validity] + 1 child (child length >= (offset+length) * list_size)
///   struct: [validity] + one child per field
/// `offset` is the logical start (in elements) inside the buffers; slices share buffers.
struct ArrayData {
  DataTypePtr type;
  int64_t length = 0;
  int64_t null_count = 0;
  int64_t offset = 0;
  std::vector<BufferPtr> buffers;
  std::vector<std::shared_ptr<ArrayData>> children;
};

using ArrayDataPtr = std::shared_ptr<ArrayData>;

/// Read access to one array. Accessors take a logical index in [0, length()).
class Array {
 public:
  explicit Array(ArrayDataPtr data) : data_(std::move(data)) {}

  const ArrayDataPtr& data() const { return data_; }
  const DataTypePtr& type() const { return data_->type; }
  TypeId type_id() const { return data_->type->id(); }
  int64_t length() const { return data_->length; }
  int64_t offset() const { return data_->offset; }
  int64_t null_count() const { return data_->null_count; }

  bool IsNull(int64_t i) const {
    if (type_id() == TypeId::kNull) return true;
    const auto& v = data_->buffers.empty() ? nullptr : data_->buffers[0];
    return v != nullptr && !GetBit(v->data(), data_->offset + i);
  }
  bool IsValid(int64_t i) const { return !IsNull(i); }

  /// Value i of a fixed-width array whose C type is T (int32_t for date32, int64_t for
  /// timestamps, uint16_t for float16 bits, ...).
  template <typename T>
  T Value(int64_t i) const {
    return data_->buffers[1]->data_as<T>()[data_->offset + i];
  }
  /// Pointer to element 0 (offset applied) of a fixed-width values buffer.
  template <typename T>
  const T* raw_values() const {
    return data_->buffers[1]->data_as<T>() + data_->offset;
  }
  bool BoolValue(int64_t i) const { return GetBit(data_->buffers[1]->data(), data_->offset + i); }
  /// Bytes of element i of utf8/binary (32- or 64-bit offsets) or fixed_size_binary.
  std::string_view GetView(int64_t i) const;

  /// Start and end positions in the child array of list element i (list, large_list,
  /// fixed_size_list).
  int64_t ListStart(int64_t i) const;
  int64_t ListEnd(int64_t i) const;
  /// Child array j (list values or struct field), not sliced by this array's offset.
  Array child(int j) const { return Array(data_->children.at(static_cast<size_t>(j))); }

  /// Zero-copy slice [offset, offset + length); caller guarantees the bounds.
  Array Slice(int64_t offset, int64_t length) const;

 private:
  ArrayDataPtr data_;
};

/// Recomputes a null count from the validity bitmap (0 when there is none).
int64_t ComputeNullCount(const ArrayData& data);

/// Checks the layout invariants of `data` and its children: buffer count, buffer sizes against
/// length + offset, offsets monotonic and inside the data buffer, null_count consistent,
/// utf8 not checked for encoding. Used on every array decoded from untrusted input.
Status ValidateArray(const ArrayData& data);

/// A set of equal-length columns under a schema.
class RecordBatch {
 public:
  RecordBatch(SchemaPtr schema, int64_t num_rows, std::vector<ArrayDataPtr> columns)
      : schema_(std::move(schema)), num_rows_(num_rows), columns_(std::move(columns)) {}

  const SchemaPtr& schema() const { return schema_; }
  int64_t num_rows() const { return num_rows_; }
  int num_columns() const { return static_cast<int>(columns_.size()); }
  const std::vector<ArrayDataPtr>& columns() const { return columns_; }
  const ArrayDataPtr& column_data(int i) const { return columns_.at(static_cast<size_t>(i)); }
  Array column(int i) const { return Array(column_data(i)); }
  /// Column named `name`, or nullptr.
  ArrayDataPtr GetColumnByName(const std::string& name) const;

  /// Zero-copy row slice.
  std::shared_ptr<RecordBatch> Slice(int64_t offset, int64_t length) const;
  /// Validates every column (ValidateArray) and that lengths equal num_rows.
  Status Validate() const;

 private:
  SchemaPtr schema_;
  int64_t num_rows_;
  std::vector<ArrayDataPtr> columns_;
};

using RecordBatchPtr = std::shared_ptr<RecordBatch>;

}  // namespace strata::arrow
