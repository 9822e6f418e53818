// Order-preserving primary-key encoding (DESIGN.md §1 "composite keys"): the values of one or
// more key columns of one row become one byte string whose memcmp order equals the row order
// of the key tuple (column by column, nulls first). Keys are compared, hashed (bloom filters)
// and stored (pk_index.bin) in this form.
//
// Each component is one tag byte, 0x00 = null (nothing follows) or 0x01 = value, then:
//   signed ints, date32/64, time32/64, timestamp, duration: big-endian of the value with the
//     sign bit flipped, in the type's byte width;
//   unsigned ints: big-endian, byte width;  bool: one byte 0/1;
//   float16/32/64: IEEE bits, big-endian, with all bits inverted for negatives and only the
//     sign bit flipped for positives (total order); -0.0 is encoded as +0.0 and every NaN as
//     the canonical positive quiet NaN (after +inf), so equal SQL values share one key;
//   decimal128: the 128-bit two's complement value big-endian with the sign bit flipped;
//   utf8/binary (32/64-bit offsets): bytes with each 0x00 written as 0x00 0x01, terminated by
//     0x00 0x00 (prefix-free, so components concatenate in order);
//   fixed_size_binary: the raw bytes (fixed length);  null type: the null tag only.
// Nested types (list, struct, ...) cannot be key columns (NotSupported).
// Thread-safety: pure functions; a KeyEncoder is immutable and shareable.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::format {

/// OK when `type` can be a key column. Errors: NotSupported naming `field_name` and the type.
Status ValidateKeyType(const arrow::DataType& type, const std::string& field_name);

/// Encodes key tuples of rows of batches under one schema.
class KeyEncoder {
 public:
  /// An encoder for columns `key_columns` (indexes into `schema`, key order, non-empty).
  /// Errors: Invalid for an empty list or an index out of range; NotSupported for a column
  /// whose type cannot be a key.
  static Result<KeyEncoder> Make(const arrow::Schema& schema, std::vector<int> key_columns);

  const std::vector<int>& key_columns() const { return key_columns_; }

  /// Appends the key of row `row` of `batch` to `*out`. The batch must have the schema's
  /// column types at the key indexes (not re-checked) and 0 <= row < num_rows.
  void AppendKey(const arrow::RecordBatch& batch, int64_t row, std::string* out) const;
  /// The key of row `row` of `batch`.
  std::string Encode(const arrow::RecordBatch& batch, int64_t row) const;
  /// Keys of every row of `batch`, in row order.
  std::vector<std::string> EncodeAll(const arrow::RecordBatch& batch) const;

 private:
  KeyEncoder(std::vector<int> key_columns) : key_columns_(std::move(key_columns)) {}
  std::vector<int> key_columns_;
};

/// One-shot: the key of row `row` of `batch` over `key_columns`.
/// Errors: as KeyEncoder::Make, and Invalid when `row` is out of range.
Result<std::string> EncodeKey(const arrow::RecordBatch& batch, const std::vector<int>& key_columns,
                              int64_t row);

// --- Components, for keys built from literals (e.g. `id = 7` of a delete predicate) ---------
// Append one component in the encoding above; `byte_width` is the column type's width (1, 2,
// 4, 8). A literal must be encoded with the key column's type to match stored keys.
void AppendNullComponent(std::string* out);
void AppendBoolComponent(bool v, std::string* out);
void AppendSignedComponent(int64_t v, int byte_width, std::string* out);
void AppendUnsignedComponent(uint64_t v, int byte_width, std::string* out);
void AppendFloat16Component(uint16_t bits, std::string* out);
void AppendFloat32Component(float v, std::string* out);
void AppendFloat64Component(double v, std::string* out);
void AppendBytesComponent(std::string_view v, std::string* out);       // utf8/binary
void AppendFixedBytesComponent(std::string_view v, std::string* out);  // fixed_size_binary
/// `le_bytes`: the 16 little-endian bytes of a decimal128 value.
void AppendDecimal128Component(const uint8_t* le_bytes, std::string* out);
/// Appends the component of `column[row]` (null or value) for any key type.
/// Errors: NotSupported for a type that cannot be a key.
Status AppendValueComponent(const arrow::Array& column, int64_t row, std::string* out);

/// Readable form of an encoded key for logs and errors: hex, at most `max_bytes` bytes shown.
std::string KeyToDebugString(std::string_view key, size_t max_bytes = 64);

}  // namespace strata::format
