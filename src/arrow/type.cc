#include "arrow/type.h"

#include <stdexcept>

namespace strata::arrow {

const char* TimeUnitName(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond:
      return "s";
    case TimeUnit::kMilli:
      return "ms";
    case TimeUnit::kMicro:
      return "us";
    case TimeUnit::kNano:
      return "ns";
  }
  return "?";
}

const std::string* KeyValueMetadata::Get(const std::string& key) const {
  for (const auto& [k, v] : kv_) {
    if (k == key) return &v;
  }
  return nullptr;
}

void KeyValueMetadata::Set(std::string key, std::string value) {
  for (auto& [k, v] : kv_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  kv_.emplace_back(std::move(key), std::move(value));
}

const DataTypePtr& DataType::value_type() const { return children_.at(0)->type; }

int DataType::bit_width() const {
  switch (id_) {
    case TypeId::kBool:
      return 1;
    case TypeId::kInt8:
    case TypeId::kUInt8:
      return 8;
    case TypeId::kInt16:
    case TypeId::kUInt16:
    case TypeId::kFloat16:
      return 16;
    case TypeId::kInt32:
    case TypeId::kUInt32:
    case TypeId::kFloat32:
    case TypeId::kDate32:
    case TypeId::kTime32:
      return 32;
    case TypeId::kInt64:
    case TypeId::kUInt64:
    case TypeId::kFloat64:
    case TypeId::kDate64:
    case TypeId::kTime64:
    case TypeId::kTimestamp:
    case TypeId::kDuration:
      return 64;
    case TypeId::kDecimal128:
      return 128;
    case TypeId::kFixedSizeBinary:
      return 8 * byte_width_;
    default:
      return 0;
  }
}

bool DataType::is_fixed_width() const {
  return id_ == TypeId::kNull || bit_width() > 0 || id_ == TypeId::kFixedSizeBinary;
}

bool DataType::is_integer() const {
  switch (id_) {
    case TypeId::kInt8:
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64:
    case TypeId::kUInt8:
    case TypeId::kUInt16:
    case TypeId::kUInt32:
    case TypeId::kUInt64:
      return true;
    default:
      return false;
  }
}

bool DataType::is_signed_integer() const {
  return id_ == TypeId::kInt8 || id_ == TypeId::kInt16 || id_ == TypeId::kInt32 ||
         id_ == TypeId::kInt64;
}

bool DataType::is_floating() const {
  return id_ == TypeId::kFloat16 || id_ == TypeId::kFloat32 || id_ == TypeId::kFloat64;
}

bool DataType::is_binary_like() const {
  return id_ == TypeId::kUtf8 || id_ == TypeId::kLargeUtf8 || id_ == TypeId::kBinary ||
         id_ == TypeId::kLargeBinary;
}

bool DataType::is_list_like() const {
  return id_ == TypeId::kList || id_ == TypeId::kLargeList || id_ == TypeId::kFixedSizeList;
}

int DataType::num_buffers() const {
  switch (id_) {
    case TypeId::kNull:
      return 0;
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
    case TypeId::kBinary:
    case TypeId::kLargeBinary:
      return 3;
    case TypeId::kList:
    case TypeId::kLargeList:
      return 2;
    case TypeId::kFixedSizeList:
    case TypeId::kStruct:
      return 1;
    default:
      return 2;
  }
}

std::string DataType::ToString() const {
  switch (id_) {
    case TypeId::kNull:
      return "null";
    case TypeId::kBool:
      return "bool";
    case TypeId::kInt8:
      return "int8";
    case TypeId::kInt16:
      return "int16";
    case TypeId::kInt32:
      return "int32";
    case TypeId::kInt64:
      return "int64";
    case TypeId::kUInt8:
      return "uint8";
    case TypeId::kUInt16:
      return "uint16";
    case TypeId::kUInt32:
      return "uint32";
    case TypeId::kUInt64:
      return "uint64";
    case TypeId::kFloat16:
      return "float16";
    case TypeId::kFloat32:
      return "float32";
    case TypeId::kFloat64:
      return "float64";
    case TypeId::kUtf8:
      return "utf8";
    case TypeId::kLargeUtf8:
      return "large_utf8";
    case TypeId::kBinary:
      return "binary";
    case TypeId::kLargeBinary:
      return "large_binary";
    case TypeId::kFixedSizeBinary:
      return "fixed_size_binary[" + std::to_string(byte_width_) + "]";
    case TypeId::kDate32:
      return "date32";
    case TypeId::kDate64:
      return "date64";
    case TypeId::kTime32:
      return std::string("time32[") + TimeUnitName(unit_) + "]";
    case TypeId::kTime64:
      return std::string("time64[") + TimeUnitName(unit_) + "]";
    case TypeId::kTimestamp:
      return std::string("timestamp[") + TimeUnitName(unit_) +
             (timezone_.empty() ? "" : ", " + timezone_) + "]";
    case TypeId::kDuration:
      return std::string("duration[") + TimeUnitName(unit_) + "]";
    case TypeId::kDecimal128:
      return "decimal128(" + std::to_string(precision_) + ", " + std::to_string(scale_) + ")";
    case TypeId::kList:
      return "list<" + children_[0]->ToString() + ">";
    case TypeId::kLargeList:
      return "large_list<" + children_[0]->ToString() + ">";
    case TypeId::kFixedSizeList:
      return "fixed_size_list<" + children_[0]->ToString() + ">[" + std::to_string(list_size_) +
             "]";
    case TypeId::kStruct: {
      std::string s = "struct<";
      for (size_t i = 0; i < children_.size(); ++i) {
        if (i) s += ", ";
        s += children_[i]->ToString();
      }
      return s + ">";
    }
  }
  return "?";
}

bool DataType::Equals(const DataType& o) const {
  if (id_ != o.id_ || byte_width_ != o.byte_width_ || list_size_ != o.list_size_ ||
      unit_ != o.unit_ || timezone_ != o.timezone_ || precision_ != o.precision_ ||
      scale_ != o.scale_ || children_.size() != o.children_.size()) {
    return false;
  }
  for (size_t i = 0; i < children_.size(); ++i) {
    if (!children_[i]->Equals(*o.children_[i])) return false;
  }
  return true;
}

DataTypePtr DataType::Make(TypeId id) {
  auto t = std::make_shared<DataType>();
  t->id_ = id;
  return t;
}

DataTypePtr DataType::MakeFixedSizeBinary(int32_t byte_width) {
  auto t = std::make_shared<DataType>();
  t->id_ = TypeId::kFixedSizeBinary;
  t->byte_width_ = byte_width;
  return t;
}

DataTypePtr DataType::MakeTemporal(TypeId id, TimeUnit unit, std::string timezone) {
  auto t = std::make_shared<DataType>();
  t->id_ = id;
  t->unit_ = unit;
  t->timezone_ = std::move(timezone);
  return t;
}

DataTypePtr DataType::MakeDecimal128(int32_t precision, int32_t scale) {
  auto t = std::make_shared<DataType>();
  t->id_ = TypeId::kDecimal128;
  t->precision_ = precision;
  t->scale_ = scale;
  return t;
}

DataTypePtr DataType::MakeList(TypeId id, FieldPtr value_field, int32_t list_size) {
  auto t = std::make_shared<DataType>();
  t->id_ = id;
  t->list_size_ = list_size;
  t->children_.push_back(std::move(value_field));
  return t;
}

DataTypePtr DataType::MakeStruct(std::vector<FieldPtr> fields) {
  auto t = std::make_shared<DataType>();
  t->id_ = TypeId::kStruct;
  t->children_ = std::move(fields);
  return t;
}

std::string Field::ToString() const {
  return name + ": " + type->ToString() + (nullable ? "" : " not null");
}

bool Field::Equals(const Field& o) const {
  return name == o.name && nullable == o.nullable && type->Equals(*o.type) &&
         metadata == o.metadata;
}

FieldPtr field(std::string name, DataTypePtr type, bool nullable, KeyValueMetadata metadata) {
  return std::make_shared<Field>(
      Field{std::move(name), std::move(type), nullable, std::move(metadata)});
}

#define STRATA_SIMPLE_TYPE(fn, id)                           \
  DataTypePtr fn() {                                         \
    static const DataTypePtr t = DataType::Make(TypeId::id); \
    return t;                                                \
  }
STRATA_SIMPLE_TYPE(null, kNull)
STRATA_SIMPLE_TYPE(boolean, kBool)
STRATA_SIMPLE_TYPE(int8, kInt8)
STRATA_SIMPLE_TYPE(int16, kInt16)
STRATA_SIMPLE_TYPE(int32, kInt32)
STRATA_SIMPLE_TYPE(int64, kInt64)
STRATA_SIMPLE_TYPE(uint8, kUInt8)
STRATA_SIMPLE_TYPE(uint16, kUInt16)
STRATA_SIMPLE_TYPE(uint32, kUInt32)
STRATA_SIMPLE_TYPE(uint64, kUInt64)
STRATA_SIMPLE_TYPE(float16, kFloat16)
STRATA_SIMPLE_TYPE(float32, kFloat32)
STRATA_SIMPLE_TYPE(float64, kFloat64)
STRATA_SIMPLE_TYPE(utf8, kUtf8)
STRATA_SIMPLE_TYPE(large_utf8, kLargeUtf8)
STRATA_SIMPLE_TYPE(binary, kBinary)
STRATA_SIMPLE_TYPE(large_binary, kLargeBinary)
STRATA_SIMPLE_TYPE(date32, kDate32)
STRATA_SIMPLE_TYPE(date64, kDate64)
#undef STRATA_SIMPLE_TYPE

DataTypePtr fixed_size_binary(int32_t w) { return DataType::MakeFixedSizeBinary(w); }
DataTypePtr time32(TimeUnit u) { return DataType::MakeTemporal(TypeId::kTime32, u); }
DataTypePtr time64(TimeUnit u) { return DataType::MakeTemporal(TypeId::kTime64, u); }
DataTypePtr timestamp(TimeUnit u, std::string tz) {
  return DataType::MakeTemporal(TypeId::kTimestamp, u, std::move(tz));
}
DataTypePtr duration(TimeUnit u) { return DataType::MakeTemporal(TypeId::kDuration, u); }
DataTypePtr decimal128(int32_t p, int32_t s) { return DataType::MakeDecimal128(p, s); }
DataTypePtr list(FieldPtr f) { return DataType::MakeList(TypeId::kList, std::move(f)); }
DataTypePtr large_list(FieldPtr f) { return DataType::MakeList(TypeId::kLargeList, std::move(f)); }
DataTypePtr fixed_size_list(FieldPtr f, int32_t n) {
  return DataType::MakeList(TypeId::kFixedSizeList, std::move(f), n);
}
DataTypePtr struct_(std::vector<FieldPtr> fields) {
  return DataType::MakeStruct(std::move(fields));
}

int Schema::GetFieldIndex(const std::string& name) const {
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i]->name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string Schema::ToString() const {
  std::string s;
  for (const auto& f : fields_) {
    if (!s.empty()) s += "\n";
    s += f->ToString();
  }
  return s;
}

bool Schema::Equals(const Schema& o, bool check_metadata) const {
  if (fields_.size() != o.fields_.size()) return false;
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (!fields_[i]->Equals(*o.fields_[i])) return false;
  }
  return !check_metadata || metadata_ == o.metadata_;
}

}  // namespace strata::arrow
