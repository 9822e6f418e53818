// Arrow logical types, fields and schemas (Arrow columnar format specification,
// https://arrow.apache.org/docs/format/Columnar.html). Types are immutable and shared through
// shared_ptr<const ...>; every object here is safe to read from many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace strata::arrow {

/// The physical/logical kinds Strata carries. Decimal128 is carried (stored, sent) but not
/// computed on.
enum class TypeId : uint8_t {
  kNull,
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kFloat32,
  kFloat64,
  kUtf8,
  kLargeUtf8,
  kBinary,
  kLargeBinary,
  kFixedSizeBinary,
  kDate32,  // days since the UNIX epoch, int32
  kDate64,  // milliseconds since the UNIX epoch, int64
  kTime32,  // unit s or ms, int32
  kTime64,  // unit us or ns, int64
  kTimestamp,
  kDuration,
  kDecimal128,
  kList,
  kLargeList,
  kFixedSizeList,
  kStruct,
};

enum class TimeUnit : uint8_t { kSecond, kMilli, kMicro, kNano };

/// "s", "ms", "us", "ns".
const char* TimeUnitName(TimeUnit unit);

/// Ordered string key/value pairs (field or schema custom metadata). Keys are unique.
class KeyValueMetadata {
 public:
  KeyValueMetadata() = default;
  explicit KeyValueMetadata(std::vector<std::pair<std::string, std::string>> kv)
      : kv_(std::move(kv)) {}
  const std::vector<std::pair<std::string, std::string>>& pairs() const { return kv_; }
  bool empty() const { return kv_.empty(); }
  size_t size() const { return kv_.size(); }
  /// Value of `key`, or nullptr.
  const std::string* Get(const std::string& key) const;
  /// Inserts or replaces `key`.
  void Set(std::string key, std::string value);
  bool operator==(const KeyValueMetadata& o) const { return kv_ == o.kv_; }

 private:
  std::vector<std::pair<std::string, std::string>> kv_;
};

class DataType;
struct Field;
using DataTypePtr = std::shared_ptr<const DataType>;
using FieldPtr = std::shared_ptr<const Field>;

/// One Arrow data type. Parameters are meaningful only for the ids that use them:
/// byte_width (fixed_size_binary), list_size (fixed_size_list), unit (time/timestamp/duration),
/// timezone (timestamp; empty = none), precision/scale (decimal128), children (lists: one child
/// field; struct: its fields).
class DataType {
 public:
  TypeId id() const { return id_; }
  int32_t byte_width() const { return byte_width_; }
  int32_t list_size() const { return list_size_; }
  TimeUnit unit() const { return unit_; }
  const std::string& timezone() const { return timezone_; }
  int32_t precision() const { return precision_; }
  int32_t scale() const { return scale_; }
  const std::vector<FieldPtr>& children() const { return children_; }
  /// The child field of list, large_list and fixed_size_list.
  const FieldPtr& value_field() const { return children_.at(0); }
  const DataTypePtr& value_type() const;

  /// Bits per value of the fixed-width layouts (bool 1, int32 32, fixed_size_binary 8*width,
  /// decimal128 128, ...); 0 for variable-width, nested and null types.
  int bit_width() const;
  /// True for null, bool, ints, floats, dates, times, timestamp, duration, decimal128 and
  /// fixed_size_binary: one validity + one values buffer with no children.
  bool is_fixed_width() const;
  bool is_integer() const;
  bool is_signed_integer() const;
  bool is_floating() const;
  bool is_numeric() const { return is_integer() || is_floating(); }
  /// utf8 / large_utf8 / binary / large_binary.
  bool is_binary_like() const;
  bool is_list_like() const;  // list, large_list, fixed_size_list
  /// Number of buffers in the Arrow layout, validity included (null type: 0).
  int num_buffers() const;

  /// Human form like "fixed_size_list<item: float32>[784]" for error messages.
  std::string ToString() const;
  /// Structural equality (field names, nullability and metadata of children included).
  bool Equals(const DataType& other) const;

  // Factories. Prefer the free functions below.
  static DataTypePtr Make(TypeId id);
  static DataTypePtr MakeFixedSizeBinary(int32_t byte_width);
  static DataTypePtr MakeTemporal(TypeId id, TimeUnit unit, std::string timezone = "");
  static DataTypePtr MakeDecimal128(int32_t precision, int32_t scale);
  static DataTypePtr MakeList(TypeId id, FieldPtr value_field, int32_t list_size = 0);
  static DataTypePtr MakeStruct(std::vector<FieldPtr> fields);

 private:
  TypeId id_ = TypeId::kNull;
  int32_t byte_width_ = 0;
  int32_t list_size_ = 0;
  TimeUnit unit_ = TimeUnit::kSecond;
  std::string timezone_;
  int32_t precision_ = 0;
  int32_t scale_ = 0;
  std::vector<FieldPtr> children_;
};

/// A named column: type, nullability, metadata.
struct Field {
  std::string name;
  DataTypePtr type;
  bool nullable = true;
  KeyValueMetadata metadata;

  std::string ToString() const;
  bool Equals(const Field& other) const;
};

FieldPtr field(std::string name, DataTypePtr type, bool nullable = true,
               KeyValueMetadata metadata = {});

DataTypePtr null();
DataTypePtr boolean();
DataTypePtr int8();
DataTypePtr int16();
DataTypePtr int32();
DataTypePtr int64();
DataTypePtr uint8();
DataTypePtr uint16();
DataTypePtr uint32();
DataTypePtr uint64();
DataTypePtr float16();
DataTypePtr float32();
DataTypePtr float64();
DataTypePtr utf8();
DataTypePtr large_utf8();
DataTypePtr binary();
DataTypePtr large_binary();
DataTypePtr fixed_size_binary(int32_t byte_width);
DataTypePtr date32();
DataTypePtr date64();
DataTypePtr time32(TimeUnit unit);  // kSecond or kMilli
DataTypePtr time64(TimeUnit unit);  // kMicro or kNano
DataTypePtr timestamp(TimeUnit unit, std::string timezone = "");
DataTypePtr duration(TimeUnit unit);
DataTypePtr decimal128(int32_t precision, int32_t scale);
DataTypePtr list(FieldPtr value_field);
DataTypePtr large_list(FieldPtr value_field);
DataTypePtr fixed_size_list(FieldPtr value_field, int32_t list_size);
DataTypePtr struct_(std::vector<FieldPtr> fields);

/// An ordered list of fields plus schema-level metadata.
class Schema {
 public:
  Schema() = default;
  explicit Schema(std::vector<FieldPtr> fields, KeyValueMetadata metadata = {})
      : fields_(std::move(fields)), metadata_(std::move(metadata)) {}

  const std::vector<FieldPtr>& fields() const { return fields_; }
  int num_fields() const { return static_cast<int>(fields_.size()); }
  const FieldPtr& field(int i) const { return fields_.at(static_cast<size_t>(i)); }
  /// Index of the first field named `name` (exact, case-sensitive), or -1.
  int GetFieldIndex(const std::string& name) const;
  const KeyValueMetadata& metadata() const { return metadata_; }

  std::string ToString() const;
  /// Equality of fields; schema metadata compared only when `check_metadata`.
  bool Equals(const Schema& other, bool check_metadata = false) const;

 private:
  std::vector<FieldPtr> fields_;
  KeyValueMetadata metadata_;
};

using SchemaPtr = std::shared_ptr<const Schema>;

}  // namespace strata::arrow
