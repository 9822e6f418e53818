#include "format/key_encoding.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace strata::format {
namespace {

constexpr char kNullTag = 0x00;
constexpr char kValueTag = 0x01;

void AppendBigEndian(uint64_t v, int byte_width, std::string* out) {
  for (int i = byte_width - 1; i >= 0; --i) {
    out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
}

/// Total-order transform of IEEE bits of `width` bits (sign bit = top bit).
uint64_t OrderFloatBits(uint64_t bits, int width) {
  const uint64_t sign = uint64_t{1} << (width - 1);
  const uint64_t mask = width == 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
  return (bits & sign) ? (~bits & mask) : (bits | sign);
}

bool IsKeyType(arrow::TypeId id) {
  using arrow::TypeId;
  switch (id) {
    case TypeId::kNull:
    case TypeId::kBool:
    case TypeId::kInt8:
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64:
    case TypeId::kUInt8:
    case TypeId::kUInt16:
    case TypeId::kUInt32:
    case TypeId::kUInt64:
    case TypeId::kFloat16:
    case TypeId::kFloat32:
    case TypeId::kFloat64:
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
    case TypeId::kBinary:
    case TypeId::kLargeBinary:
    case TypeId::kFixedSizeBinary:
    case TypeId::kDate32:
    case TypeId::kDate64:
    case TypeId::kTime32:
    case TypeId::kTime64:
    case TypeId::kTimestamp:
    case TypeId::kDuration:
    case TypeId::kDecimal128:
      return true;
    default:
      return false;
  }
}

}  // namespace

void AppendNullComponent(std::string* out) { out->push_back(kNullTag); }

void AppendBoolComponent(bool v, std::string* out) {
  out->push_back(kValueTag);
  out->push_back(v ? 1 : 0);
}

void AppendSignedComponent(int64_t v, int byte_width, std::string* out) {
  out->push_back(kValueTag);
  const uint64_t u = static_cast<uint64_t>(v) ^ (uint64_t{1} << (8 * byte_width - 1));
  AppendBigEndian(u, byte_width, out);
}

void AppendUnsignedComponent(uint64_t v, int byte_width, std::string* out) {
  out->push_back(kValueTag);
  AppendBigEndian(v, byte_width, out);
}

void AppendFloat16Component(uint16_t bits, std::string* out) {
  const bool is_nan = (bits & 0x7C00) == 0x7C00 && (bits & 0x03FF) != 0;
  if (is_nan) bits = 0x7E00;
  if (bits == 0x8000) bits = 0;  // -0 -> +0
  out->push_back(kValueTag);
  AppendBigEndian(OrderFloatBits(bits, 16), 2, out);
}

void AppendFloat32Component(float v, std::string* out) {
  if (std::isnan(v)) v = std::numeric_limits<float>::quiet_NaN();
  if (v == 0.0f) v = 0.0f;  // -0 -> +0
  uint32_t bits = std::bit_cast<uint32_t>(v);
  if (std::isnan(v)) bits = 0x7FC00000u;
  out->push_back(kValueTag);
  AppendBigEndian(OrderFloatBits(bits, 32), 4, out);
}

void AppendFloat64Component(double v, std::string* out) {
  if (v == 0.0) v = 0.0;  // -0 -> +0
  uint64_t bits = std::bit_cast<uint64_t>(v);
  if (std::isnan(v)) bits = 0x7FF8000000000000ull;
  out->push_back(kValueTag);
  AppendBigEndian(OrderFloatBits(bits, 64), 8, out);
}

void AppendBytesComponent(std::string_view v, std::string* out) {
  out->push_back(kValueTag);
  out->reserve(out->size() + v.size() + 2);
  for (char c : v) {
    out->push_back(c);
    if (c == 0) out->push_back(0x01);
  }
  out->push_back(0x00);
  out->push_back(0x00);
}

void AppendFixedBytesComponent(std::string_view v, std::string* out) {
  out->push_back(kValueTag);
  out->append(v);
}

void AppendDecimal128Component(const uint8_t* le_bytes, std::string* out) {
  out->push_back(kValueTag);
  for (int i = 15; i >= 0; --i) {
    uint8_t b = le_bytes[i];
    if (i == 15) b ^= 0x80;
    out->push_back(static_cast<char>(b));
  }
}

Status AppendValueComponent(const arrow::Array& column, int64_t row, std::string* out) {
  using arrow::TypeId;
  const TypeId id = column.type_id();
  if (!IsKeyType(id)) {
    return Status::NotSupported("type " + column.type()->ToString() + " cannot be a key column");
  }
  if (column.IsNull(row)) {
    AppendNullComponent(out);
    return Status::OK();
  }
  switch (id) {
    case TypeId::kBool:
      AppendBoolComponent(column.BoolValue(row), out);
      break;
    case TypeId::kInt8:
      AppendSignedComponent(column.Value<int8_t>(row), 1, out);
      break;
    case TypeId::kInt16:
      AppendSignedComponent(column.Value<int16_t>(row), 2, out);
      break;
    case TypeId::kInt32:
    case TypeId::kDate32:
    case TypeId::kTime32:
      AppendSignedComponent(column.Value<int32_t>(row), 4, out);
      break;
    case TypeId::kInt64:
    case TypeId::kDate64:
    case TypeId::kTime64:
    case TypeId::kTimestamp:
    case TypeId::kDuration:
      AppendSignedComponent(column.Value<int64_t>(row), 8, out);
      break;
    case TypeId::kUInt8:
      AppendUnsignedComponent(column.Value<uint8_t>(row), 1, out);
      break;
    case TypeId::kUInt16:
      AppendUnsignedComponent(column.Value<uint16_t>(row), 2, out);
      break;
    case TypeId::kUInt32:
      AppendUnsignedComponent(column.Value<uint32_t>(row), 4, out);
      break;
    case TypeId::kUInt64:
      AppendUnsignedComponent(column.Value<uint64_t>(row), 8, out);
      break;
    case TypeId::kFloat16:
      AppendFloat16Component(column.Value<uint16_t>(row), out);
      break;
    case TypeId::kFloat32:
      AppendFloat32Component(column.Value<float>(row), out);
      break;
    case TypeId::kFloat64:
      AppendFloat64Component(column.Value<double>(row), out);
      break;
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
    case TypeId::kBinary:
    case TypeId::kLargeBinary:
      AppendBytesComponent(column.GetView(row), out);
      break;
    case TypeId::kFixedSizeBinary:
      AppendFixedBytesComponent(column.GetView(row), out);
      break;
    case TypeId::kDecimal128: {
      const uint8_t* base = column.data()->buffers[1]->data() + (column.offset() + row) * 16;
      AppendDecimal128Component(base, out);
      break;
    }
    default:  // kNull handled by IsNull above
      AppendNullComponent(out);
      break;
  }
  return Status::OK();
}

Status ValidateKeyType(const arrow::DataType& type, const std::string& field_name) {
  if (IsKeyType(type.id())) return Status::OK();
  return Status::NotSupported("primary-key column '" + field_name + "' has type " +
                              type.ToString() +
                              "; key columns must be of a scalar type (integer, float, bool, "
                              "string, binary, date/time, decimal)");
}

Result<KeyEncoder> KeyEncoder::Make(const arrow::Schema& schema, std::vector<int> key_columns) {
  if (key_columns.empty()) return Status::Invalid("key encoder: no key columns given");
  for (int c : key_columns) {
    if (c < 0 || c >= schema.num_fields()) {
      return Status::Invalid("key encoder: key column index " + std::to_string(c) +
                             " is outside the schema's " + std::to_string(schema.num_fields()) +
                             " columns");
    }
    STRATA_RETURN_IF_ERROR(ValidateKeyType(*schema.field(c)->type, schema.field(c)->name));
  }
  return KeyEncoder(std::move(key_columns));
}

void KeyEncoder::AppendKey(const arrow::RecordBatch& batch, int64_t row, std::string* out) const {
  for (int c : key_columns_) {
    // Types were checked in Make; an error here cannot happen for a conforming batch.
    (void)AppendValueComponent(batch.column(c), row, out);
  }
}

std::string KeyEncoder::Encode(const arrow::RecordBatch& batch, int64_t row) const {
  std::string out;
  AppendKey(batch, row, &out);
  return out;
}

std::vector<std::string> KeyEncoder::EncodeAll(const arrow::RecordBatch& batch) const {
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(batch.num_rows()));
  for (int64_t r = 0; r < batch.num_rows(); ++r) keys.push_back(Encode(batch, r));
  return keys;
}

Result<std::string> EncodeKey(const arrow::RecordBatch& batch, const std::vector<int>& key_columns,
                              int64_t row) {
  STRATA_ASSIGN_OR_RETURN(KeyEncoder enc, KeyEncoder::Make(*batch.schema(), key_columns));
  if (row < 0 || row >= batch.num_rows()) {
    return Status::Invalid("key encoding: row " + std::to_string(row) + " is outside the batch's " +
                           std::to_string(batch.num_rows()) + " rows");
  }
  return enc.Encode(batch, row);
}

std::string KeyToDebugString(std::string_view key, size_t max_bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  size_t n = std::min(key.size(), max_bytes);
  out.reserve(n * 2 + 3);
  for (size_t i = 0; i < n; ++i) {
    auto b = static_cast<uint8_t>(key[i]);
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  if (n < key.size()) out += "...";
  return out;
}

}  // namespace strata::format
