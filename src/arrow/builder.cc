#include "arrow/builder.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace strata::arrow {
namespace {

bool UsesInt32Offsets(TypeId id) {
  return id == TypeId::kUtf8 || id == TypeId::kBinary || id == TypeId::kList;
}
bool UsesInt64Offsets(TypeId id) {
  return id == TypeId::kLargeUtf8 || id == TypeId::kLargeBinary || id == TypeId::kLargeList;
}

// Integer range of the integer-backed types, as [lo, hi] in 128 bits.
bool IntegerRange(TypeId id, __int128* lo, __int128* hi) {
  switch (id) {
    case TypeId::kInt8:
      *lo = INT8_MIN;
      *hi = INT8_MAX;
      return true;
    case TypeId::kInt16:
      *lo = INT16_MIN;
      *hi = INT16_MAX;
      return true;
    case TypeId::kInt32:
    case TypeId::kDate32:
    case TypeId::kTime32:
      *lo = INT32_MIN;
      *hi = INT32_MAX;
      return true;
    case TypeId::kInt64:
    case TypeId::kDate64:
    case TypeId::kTime64:
    case TypeId::kTimestamp:
    case TypeId::kDuration:
      *lo = INT64_MIN;
      *hi = INT64_MAX;
      return true;
    case TypeId::kUInt8:
      *lo = 0;
      *hi = UINT8_MAX;
      return true;
    case TypeId::kUInt16:
      *lo = 0;
      *hi = UINT16_MAX;
      return true;
    case TypeId::kUInt32:
      *lo = 0;
      *hi = UINT32_MAX;
      return true;
    case TypeId::kUInt64:
      *lo = 0;
      *hi = UINT64_MAX;
      return true;
    default:
      return false;
  }
}

std::string Int128ToString(__int128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u =
      neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u > 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

}  // namespace

uint16_t FloatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mant = x & 0x7fffffu;
  const int exp = static_cast<int>((x >> 23) & 0xffu);
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = exp - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into infinity
  return static_cast<uint16_t>(sign | half);
}

float HalfBitsToFloat(uint16_t h) {
  const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -24);
  if (exp == 31) {
    return mant ? std::numeric_limits<float>::quiet_NaN()
                : sign * std::numeric_limits<float>::infinity();
  }
  return sign * std::ldexp(static_cast<float>(1024 + mant), exp - 25);
}

ArrayBuilder::ArrayBuilder(DataTypePtr type) : type_(std::move(type)) {
  for (const auto& f : type_->children()) {
    children_.push_back(std::make_unique<ArrayBuilder>(f->type));
  }
  ResetOffsets();
}

ArrayBuilder::~ArrayBuilder() = default;

void ArrayBuilder::ResetOffsets() {
  const TypeId id = type_->id();
  if (UsesInt32Offsets(id)) offsets_.AppendValue<int32_t>(0);
  if (UsesInt64Offsets(id)) offsets_.AppendValue<int64_t>(0);
}

Status ArrayBuilder::WrongKind(const char* what) const {
  return Status::Invalid(std::string("cannot append ") + what + " to an array of type " +
                         type_->ToString());
}

void ArrayBuilder::Reserve(int64_t additional_rows) {
  const TypeId id = type_->id();
  if (null_count_ > 0)
    validity_.Reserve(BytesForBits(length_ + additional_rows) - validity_.size());
  if (id == TypeId::kBool) {
    values_.Reserve(BytesForBits(length_ + additional_rows) - values_.size());
  } else if (type_->is_fixed_width() && id != TypeId::kNull) {
    values_.Reserve(additional_rows * (type_->bit_width() / 8));
  } else if (UsesInt32Offsets(id)) {
    offsets_.Reserve(additional_rows * 4);
  } else if (UsesInt64Offsets(id)) {
    offsets_.Reserve(additional_rows * 8);
  } else if (id == TypeId::kFixedSizeList) {
    children_[0]->Reserve(additional_rows * type_->list_size());
  } else if (id == TypeId::kStruct) {
    for (auto& c : children_) c->Reserve(additional_rows);
  }
}

void ArrayBuilder::AppendValidity(bool valid) {
  // Called before length_ is incremented; the bitmap exists only once a null was appended.
  if (valid) {
    if (null_count_ > 0) {
      validity_.Resize(BytesForBits(length_ + 1));
      SetBit(validity_.mutable_data(), length_);
    }
    return;
  }
  if (null_count_ == 0) {
    validity_.Resize(BytesForBits(length_ + 1));
    uint8_t* bits = validity_.mutable_data();
    const int64_t full = length_ / 8;
    if (full > 0) std::memset(bits, 0xff, static_cast<size_t>(full));
    for (int64_t i = full * 8; i < length_; ++i) SetBit(bits, i);
  } else {
    validity_.Resize(BytesForBits(length_ + 1));
  }
  ClearBit(validity_.mutable_data(), length_);
  ++null_count_;
}

void ArrayBuilder::AppendEmptySlots(int64_t n) {
  const TypeId id = type_->id();
  switch (id) {
    case TypeId::kNull:
      return;
    case TypeId::kBool:
      values_.Resize(BytesForBits(length_ + n));
      return;
    case TypeId::kUtf8:
    case TypeId::kBinary:
    case TypeId::kList: {
      int32_t last;
      std::memcpy(&last, offsets_.data() + offsets_.size() - 4, 4);
      for (int64_t i = 0; i < n; ++i) offsets_.AppendValue<int32_t>(last);
      return;
    }
    case TypeId::kLargeUtf8:
    case TypeId::kLargeBinary:
    case TypeId::kLargeList: {
      int64_t last;
      std::memcpy(&last, offsets_.data() + offsets_.size() - 8, 8);
      for (int64_t i = 0; i < n; ++i) offsets_.AppendValue<int64_t>(last);
      return;
    }
    case TypeId::kFixedSizeList:
      (void)children_[0]->AppendNulls(n * type_->list_size());
      return;
    case TypeId::kStruct:
      for (auto& c : children_) (void)c->AppendNulls(n);
      return;
    default:
      values_.AppendZeros(n * (type_->bit_width() / 8));
      return;
  }
}

Status ArrayBuilder::AppendNull() { return AppendNulls(1); }

Status ArrayBuilder::AppendNulls(int64_t n) {
  if (n < 0) return Status::Invalid("AppendNulls: negative count " + std::to_string(n));
  if (n == 0) return Status::OK();
  if (type_->id() == TypeId::kNull) {
    length_ += n;
    null_count_ += n;
    return Status::OK();
  }
  AppendEmptySlots(n);
  validity_.Reserve(BytesForBits(length_ + n) - validity_.size());
  for (int64_t i = 0; i < n; ++i) {
    AppendValidity(false);
    ++length_;
  }
  return Status::OK();
}

Status ArrayBuilder::AppendBool(bool v) {
  if (type_->id() != TypeId::kBool) return WrongKind("a bool");
  values_.Resize(BytesForBits(length_ + 1));
  if (v) SetBit(values_.mutable_data(), length_);
  AppendValidity(true);
  ++length_;
  return Status::OK();
}

Status ArrayBuilder::StoreInteger(int64_t v, bool is_unsigned, uint64_t uv) {
  const __int128 x = is_unsigned ? static_cast<__int128>(uv) : static_cast<__int128>(v);
  __int128 lo, hi;
  if (!IntegerRange(type_->id(), &lo, &hi)) return WrongKind("an integer");
  if (x < lo || x > hi) {
    return Status::Invalid("value " + Int128ToString(x) + " is out of range for " +
                           type_->ToString() + " [" + Int128ToString(lo) + ", " +
                           Int128ToString(hi) + "]");
  }
  switch (type_->bit_width()) {
    case 8:
      values_.AppendValue(static_cast<uint8_t>(x));
      break;
    case 16:
      values_.AppendValue(static_cast<uint16_t>(x));
      break;
    case 32:
      values_.AppendValue(static_cast<uint32_t>(x));
      break;
    default:
      values_.AppendValue(static_cast<uint64_t>(x));
      break;
  }
  AppendValidity(true);
  ++length_;
  return Status::OK();
}

Status ArrayBuilder::AppendInt(int64_t v) { return StoreInteger(v, false, 0); }

Status ArrayBuilder::AppendUInt(uint64_t v) { return StoreInteger(0, true, v); }

Status ArrayBuilder::AppendDouble(double v) {
  switch (type_->id()) {
    case TypeId::kFloat32:
      values_.AppendValue(static_cast<float>(v));
      break;
    case TypeId::kFloat64:
      values_.AppendValue(v);
      break;
    case TypeId::kFloat16:
      values_.AppendValue(FloatToHalfBits(static_cast<float>(v)));
      break;
    default:
      return WrongKind("a floating-point value");
  }
  AppendValidity(true);
  ++length_;
  return Status::OK();
}

Status ArrayBuilder::AppendHalfBits(uint16_t bits) {
  if (type_->id() != TypeId::kFloat16) return WrongKind("float16 bits");
  values_.AppendValue(bits);
  AppendValidity(true);
  ++length_;
  return Status::OK();
}

Status ArrayBuilder::AppendBytes(std::string_view v) {
  const TypeId id = type_->id();
  const auto n = static_cast<int64_t>(v.size());
  switch (id) {
    case TypeId::kUtf8:
    case TypeId::kBinary: {
      const int64_t end = values_.size() + n;
      if (end > std::numeric_limits<int32_t>::max()) {
        return Status::Invalid("data of " + type_->ToString() + " array would exceed " +
                               "2147483647 bytes (int32 offsets); use the large type");
      }
      values_.Append(v.data(), n);
      offsets_.AppendValue(static_cast<int32_t>(end));
      break;
    }
    case TypeId::kLargeUtf8:
    case TypeId::kLargeBinary:
      values_.Append(v.data(), n);
      offsets_.AppendValue(values_.size());
      break;
    case TypeId::kFixedSizeBinary:
    case TypeId::kDecimal128: {
      const int64_t w = type_->bit_width() / 8;
      if (n != w) {
        return Status::Invalid("expected " + std::to_string(w) + " bytes for " + type_->ToString() +
                               ", got " + std::to_string(n));
      }
      values_.Append(v.data(), n);
      break;
    }
    default:
      return WrongKind("bytes");
  }
  AppendValidity(true);
  ++length_;
  return Status::OK();
}

Status ArrayBuilder::AppendListEnd() {
  const TypeId id = type_->id();
  const int64_t end = children_.empty() ? 0 : children_[0]->length();
  if (id == TypeId::kList) {
    if (end > std::numeric_limits<int32_t>::max()) {
      return Status::Invalid("list child length " + std::to_string(end) +
                             " exceeds 2147483647 (int32 offsets); use large_list");
    }
    offsets_.AppendValue(static_cast<int32_t>(end));
  } else if (id == TypeId::kLargeList) {
    offsets_.AppendValue(end);
  } else {
    return WrongKind("a list end");
  }
  AppendValidity(true);
  ++length_;
  return Status::OK();
}

Status ArrayBuilder::AppendValid() {
  const TypeId id = type_->id();
  if (id == TypeId::kFixedSizeList) {
    const int64_t want = (length_ + 1) * type_->list_size();
    if (children_[0]->length() != want) {
      return Status::Invalid("fixed_size_list element " + std::to_string(length_) + " of " +
                             type_->ToString() + ": child has " +
                             std::to_string(children_[0]->length()) + " values, expected " +
                             std::to_string(want));
    }
  } else if (id == TypeId::kStruct) {
    for (size_t j = 0; j < children_.size(); ++j) {
      if (children_[j]->length() != length_ + 1) {
        return Status::Invalid("struct row " + std::to_string(length_) + ": field '" +
                               type_->children()[j]->name + "' has " +
                               std::to_string(children_[j]->length()) + " values, expected " +
                               std::to_string(length_ + 1));
      }
    }
  } else {
    return WrongKind("a valid nested element");
  }
  AppendValidity(true);
  ++length_;
  return Status::OK();
}

Status ArrayBuilder::AppendFloats(const float* v, int64_t n) {
  if (n < 0) return Status::Invalid("AppendFloats: negative count " + std::to_string(n));
  const TypeId id = type_->id();
  if (id == TypeId::kFixedSizeList && type_->value_type()->id() == TypeId::kFloat32) {
    const int64_t dim = type_->list_size();
    if (dim <= 0 || n % dim != 0) {
      return Status::Invalid("AppendFloats: " + std::to_string(n) +
                             " values is not a multiple of the list size of " + type_->ToString());
    }
    STRATA_RETURN_IF_ERROR(children_[0]->AppendFloats(v, n));
    const int64_t rows = n / dim;
    if (null_count_ > 0) {
      for (int64_t i = 0; i < rows; ++i) {
        AppendValidity(true);
        ++length_;
      }
    } else {
      length_ += rows;
    }
    return Status::OK();
  }
  if (id == TypeId::kFloat32) {
    values_.Append(v, n * 4);
  } else if (id == TypeId::kFloat64) {
    values_.Reserve(n * 8);
    for (int64_t i = 0; i < n; ++i) values_.AppendValue(static_cast<double>(v[i]));
  } else {
    return WrongKind("float32 values");
  }
  if (null_count_ > 0) {
    validity_.Resize(BytesForBits(length_ + n));
    uint8_t* bits = validity_.mutable_data();
    for (int64_t i = 0; i < n; ++i) SetBit(bits, length_ + i);
  }
  length_ += n;
  return Status::OK();
}

Result<ArrayDataPtr> ArrayBuilder::Finish() {
  auto out = std::make_shared<ArrayData>();
  out->type = type_;
  out->length = length_;
  out->null_count = null_count_;
  const TypeId id = type_->id();
  Status st;
  std::vector<ArrayDataPtr> kids;
  for (auto& c : children_) {
    auto r = c->Finish();
    if (!r.ok()) {
      if (st.ok()) st = r.status();
      continue;
    }
    kids.push_back(std::move(r).value());
  }
  if (st.ok()) {
    if (id == TypeId::kFixedSizeList && kids[0]->length != length_ * type_->list_size()) {
      st = Status::Invalid("fixed_size_list " + type_->ToString() + " has " +
                           std::to_string(length_) + " rows but its child has " +
                           std::to_string(kids[0]->length) + " values");
    } else if (id == TypeId::kStruct) {
      for (size_t j = 0; j < kids.size(); ++j) {
        if (kids[j]->length != length_) {
          st = Status::Invalid("struct has " + std::to_string(length_) + " rows but field '" +
                               type_->children()[j]->name + "' has " +
                               std::to_string(kids[j]->length));
          break;
        }
      }
    }
  }
  if (id != TypeId::kNull) {
    BufferPtr validity = null_count_ > 0 ? validity_.Finish() : nullptr;
    out->buffers.push_back(std::move(validity));
    if (id == TypeId::kBool) {
      values_.Resize(BytesForBits(length_));
      out->buffers.push_back(values_.Finish());
    } else if (type_->is_fixed_width()) {
      out->buffers.push_back(values_.Finish());
    } else if (UsesInt32Offsets(id) || UsesInt64Offsets(id)) {
      out->buffers.push_back(offsets_.Finish());
      if (type_->is_binary_like()) out->buffers.push_back(values_.Finish());
    }
  }
  out->children = std::move(kids);
  // Reset to empty.
  validity_ = BufferBuilder();
  values_ = BufferBuilder();
  offsets_ = BufferBuilder();
  length_ = 0;
  null_count_ = 0;
  ResetOffsets();
  if (!st.ok()) return st;
  return out;
}

RecordBatchBuilder::RecordBatchBuilder(SchemaPtr schema) : schema_(std::move(schema)) {
  for (const auto& f : schema_->fields())
    columns_.push_back(std::make_unique<ArrayBuilder>(f->type));
}

Result<std::shared_ptr<RecordBatch>> RecordBatchBuilder::Finish() {
  std::vector<ArrayDataPtr> cols;
  cols.reserve(columns_.size());
  Status st;
  for (size_t i = 0; i < columns_.size(); ++i) {
    auto r = columns_[i]->Finish();
    if (!r.ok()) {
      if (st.ok()) st = r.status().WithContext("column '" + schema_->fields()[i]->name + "'");
      continue;
    }
    cols.push_back(std::move(r).value());
  }
  if (!st.ok()) return st;
  const int64_t rows = cols.empty() ? 0 : cols[0]->length;
  for (size_t i = 0; i < cols.size(); ++i) {
    if (cols[i]->length != rows) {
      return Status::Invalid("column '" + schema_->fields()[i]->name + "' has " +
                             std::to_string(cols[i]->length) + " rows but column '" +
                             schema_->fields()[0]->name + "' has " + std::to_string(rows));
    }
  }
  return std::make_shared<RecordBatch>(schema_, rows, std::move(cols));
}

namespace {
template <typename T, typename AppendFn>
ArrayDataPtr MakeSimple(DataTypePtr type, const std::vector<std::optional<T>>& values,
                        AppendFn append) {
  ArrayBuilder b(std::move(type));
  b.Reserve(static_cast<int64_t>(values.size()));
  for (const auto& v : values) {
    if (v.has_value()) {
      (void)append(b, *v);
    } else {
      (void)b.AppendNull();
    }
  }
  return std::move(b.Finish()).value();
}
}  // namespace

ArrayDataPtr MakeInt64Array(const std::vector<std::optional<int64_t>>& values) {
  return MakeSimple(int64(), values, [](ArrayBuilder& b, int64_t v) { return b.AppendInt(v); });
}

ArrayDataPtr MakeFloat32Array(const std::vector<std::optional<float>>& values) {
  return MakeSimple(float32(), values, [](ArrayBuilder& b, float v) { return b.AppendDouble(v); });
}

ArrayDataPtr MakeUtf8Array(const std::vector<std::optional<std::string>>& values) {
  return MakeSimple(utf8(), values,
                    [](ArrayBuilder& b, const std::string& v) { return b.AppendBytes(v); });
}

ArrayDataPtr MakeVectorArray(const std::vector<float>& values, int32_t dim) {
  ArrayBuilder b(fixed_size_list(field("item", float32(), true), dim));
  const auto n = static_cast<int64_t>(values.size());
  const int64_t usable = dim > 0 ? n - n % dim : 0;
  (void)b.AppendFloats(values.data(), usable);
  return std::move(b.Finish()).value();
}

}  // namespace strata::arrow
