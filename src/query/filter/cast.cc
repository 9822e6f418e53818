// CastArray: CAST semantics between the scalar types filter expressions compute on
// (evaluator.h). One pass per array; null rows stay null and are never converted.
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "arrow/builder.h"
#include "query/filter/bound_expr_internal.h"
#include "query/filter/evaluator.h"

namespace strata::query::filter {

using arrow::ArrayData;
using arrow::ArrayDataPtr;
using arrow::BufferPtr;
using arrow::DataType;
using arrow::TypeId;

namespace internal {

namespace {

bool IsNumberOrBool(const DataType& t) { return t.is_numeric() || t.id() == TypeId::kBool; }

}  // namespace

bool CanCast(const DataType& from, const DataType& to) {
  if (from.Equals(to) || from.id() == TypeId::kNull) return true;
  const bool to_scalar = IsNumberOrBool(to) || IsString(to) || IsTemporal(to);
  if (!to_scalar) return false;
  if (IsNumberOrBool(from) || IsString(from)) return true;
  if (IsTemporal(from)) return !to.is_floating() && to.id() != TypeId::kBool;
  return false;
}

}  // namespace internal

namespace {

using internal::OutBuffer;

// One source value, read as the widest C type of its family.
struct Value {
  enum class Tag { kInt, kUInt, kFloat, kString } tag = Tag::kInt;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  std::string_view s;
  static Value Int(int64_t x) {
    Value v;
    v.i = x;
    return v;
  }
  static Value UInt(uint64_t x) {
    Value v;
    v.tag = Tag::kUInt;
    v.u = x;
    return v;
  }
  static Value Float(double x) {
    Value v;
    v.tag = Tag::kFloat;
    v.f = x;
    return v;
  }
  std::string Repr() const {
    switch (tag) {
      case Tag::kInt:
        return std::to_string(i);
      case Tag::kUInt:
        return std::to_string(u);
      case Tag::kFloat: {
        char buf[64];
        auto r = std::to_chars(buf, buf + sizeof(buf), f);
        return std::string(buf, r.ptr);
      }
      case Tag::kString: {
        // Appends, not operator+ chains: GCC 12 -O3 reports a false -Wrestrict on those.
        std::string out;
        out.reserve(70);
        out.push_back('\'');
        out.append(s.substr(0, 64));
        out.append(s.size() > 64 ? "...'" : "'");
        return out;
      }
    }
    return {};
  }
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

Status OutOfRange(const std::string& what, const Value& v, const DataType& target) {
  return Status::Invalid("cannot cast " + what + " value " + v.Repr() + " to " + target.ToString() +
                         ": out of range");
}

Status NotConvertible(const std::string& what, const Value& v, const DataType& target) {
  return Status::Invalid("cannot cast " + what + " value " + v.Repr() + " to " + target.ToString());
}

template <typename T>
bool FitInt(const Value& v, T* out) {
  switch (v.tag) {
    case Value::Tag::kInt:
      if (!std::in_range<T>(v.i)) return false;
      *out = static_cast<T>(v.i);
      return true;
    case Value::Tag::kUInt:
      if (!std::in_range<T>(v.u)) return false;
      *out = static_cast<T>(v.u);
      return true;
    case Value::Tag::kFloat: {
      if (std::isnan(v.f)) return false;
      const double t = std::trunc(v.f);
      // Bounds as doubles: [min, max + 1) is exact for every width.
      const double lo = static_cast<double>(std::numeric_limits<T>::min());
      const double hi = std::ldexp(1.0, std::numeric_limits<T>::digits);
      if (t < lo || t >= hi) return false;
      *out = static_cast<T>(t);
      return true;
    }
    default:
      return false;
  }
}

// Parses a string source into a numeric / bool Value for `target`.
bool ParseNumber(std::string_view s, const DataType& target, Value* out) {
  s = Trim(s);
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (target.id() == TypeId::kBool) {
    std::string low;
    for (char c : s) low.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    if (low == "true" || low == "t" || low == "1" || low == "yes") {
      *out = Value::Int(1);
      return true;
    }
    if (low == "false" || low == "f" || low == "0" || low == "no") {
      *out = Value::Int(0);
      return true;
    }
    return false;
  }
  if (target.is_integer()) {
    if (!s.empty() && s[0] == '+') ++b;
    int64_t i;
    auto r = std::from_chars(b, e, i);
    if (r.ec == std::errc() && r.ptr == e) {
      *out = Value::Int(i);
      return true;
    }
    uint64_t u;
    r = std::from_chars(b, e, u);
    if (r.ec == std::errc() && r.ptr == e) {
      *out = Value::UInt(u);
      return true;
    }
    if (r.ec == std::errc::result_out_of_range) {
      *out = Value::Float(std::numeric_limits<double>::infinity());
      return true;
    }
    return false;
  }
  if (!s.empty() && s[0] == '+') ++b;
  double f;
  auto r = std::from_chars(b, e, f);
  if (r.ec != std::errc() || r.ptr != e || b == e) return false;
  *out = Value::Float(f);
  return true;
}

// Reader of row i of the source as a Value (numbers, bool, temporal raw values, strings).
class Reader {
 public:
  explicit Reader(const ArrayDataPtr& a) : a_(a), arr_(a) {
    if (internal::IsString(*a->type)) str_.emplace(*a);
  }
  Value Get(int64_t i) const {
    Value v;
    switch (a_->type->id()) {
      case TypeId::kBool:
        v.i = arr_.BoolValue(i);
        break;
      case TypeId::kInt8:
        v.i = arr_.Value<int8_t>(i);
        break;
      case TypeId::kInt16:
        v.i = arr_.Value<int16_t>(i);
        break;
      case TypeId::kInt32:
      case TypeId::kDate32:
        v.i = arr_.Value<int32_t>(i);
        break;
      case TypeId::kInt64:
      case TypeId::kDate64:
      case TypeId::kTimestamp:
        v.i = arr_.Value<int64_t>(i);
        break;
      case TypeId::kUInt8:
        v.i = arr_.Value<uint8_t>(i);
        break;
      case TypeId::kUInt16:
        v.i = arr_.Value<uint16_t>(i);
        break;
      case TypeId::kUInt32:
        v.i = arr_.Value<uint32_t>(i);
        break;
      case TypeId::kUInt64:
        v.tag = Value::Tag::kUInt;
        v.u = arr_.Value<uint64_t>(i);
        break;
      case TypeId::kFloat16:
        v.tag = Value::Tag::kFloat;
        v.f = arrow::HalfBitsToFloat(arr_.Value<uint16_t>(i));
        break;
      case TypeId::kFloat32:
        v.tag = Value::Tag::kFloat;
        v.f = arr_.Value<float>(i);
        break;
      case TypeId::kFloat64:
        v.tag = Value::Tag::kFloat;
        v.f = arr_.Value<double>(i);
        break;
      default:
        v.tag = Value::Tag::kString;
        v.s = (*str_)(i);
        break;
    }
    return v;
  }

 private:
  ArrayDataPtr a_;
  arrow::Array arr_;
  std::optional<internal::StringReader> str_;
};

std::string ToText(const DataType& from, const Value& v) {
  switch (from.id()) {
    case TypeId::kBool:
      return v.i ? "true" : "false";
    case TypeId::kDate32:
      return internal::FormatDate(v.i);
    case TypeId::kDate64:
      return internal::FormatTimestamp(v.i, arrow::TimeUnit::kMilli).substr(0, 10);
    case TypeId::kTimestamp:
      return internal::FormatTimestamp(v.i, from.unit());
    case TypeId::kFloat32:
    case TypeId::kFloat16: {
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v.f));
      return std::string(buf, r.ptr);
    }
    default:
      return v.Repr();
  }
}

Result<ArrayDataPtr> CastToString(const ArrayDataPtr& values, const arrow::DataTypePtr& target) {
  const int64_t n = values->length;
  internal::StringWriter w(target->id() == TypeId::kLargeUtf8, n);
  arrow::Array arr(values);
  Reader r(values);
  for (int64_t i = 0; i < n; ++i) {
    if (arr.IsNull(i)) {
      w.AppendEmpty();
      continue;
    }
    const Value v = r.Get(i);
    if (v.tag == Value::Tag::kString) {
      w.Append(v.s);
    } else {
      w.Append(ToText(*values->type, v));
    }
  }
  return w.Finish(target, internal::ValidityOf(*values));
}

template <typename T>
Status PutInt(const Value& v, T* out, const std::string& what, const DataType& target) {
  if (!FitInt<T>(v, out)) return OutOfRange(what, v, target);
  return Status::OK();
}

}  // namespace

Result<ArrayDataPtr> CastArray(const ArrayDataPtr& values, const arrow::DataTypePtr& target,
                               const std::string& what) {
  const DataType& from = *values->type;
  if (from.Equals(*target)) return values;
  if (!internal::CanCast(from, *target)) {
    return Status::NotSupported("cannot cast " + what + " from " + from.ToString() + " to " +
                                target->ToString());
  }
  const int64_t n = values->length;
  if (from.id() == TypeId::kNull) return internal::MakeNullArray(target, n);
  if (internal::IsString(*target)) return CastToString(values, target);
  if (internal::IsString(from) && internal::IsString(*target)) {
    return CastToString(values, target);
  }

  arrow::Array arr(values);
  Reader reader(values);
  const TypeId tid = target->id();
  const bool from_temporal = internal::IsTemporal(from);
  const bool to_temporal = internal::IsTemporal(*target);
  const int width = target->bit_width();
  OutBuffer out(tid == TypeId::kBool ? arrow::BytesForBits(n) : n * width / 8);
  uint8_t* o = out.data();
  for (int64_t i = 0; i < n; ++i) {
    if (arr.IsNull(i)) continue;
    Value v = reader.Get(i);
    // Strings: parse into the target's family first.
    if (v.tag == Value::Tag::kString) {
      if (to_temporal) {
        std::optional<int64_t> t;
        if (tid == TypeId::kDate32) {
          t = internal::ParseDate(v.s);
          if (!t) {
            const auto ts = internal::ParseTimestamp(v.s, arrow::TimeUnit::kSecond);
            if (ts) t = internal::ScaleDown(*ts, internal::Scale::kSecond, internal::Scale::kDay);
          }
        } else {
          t = internal::ParseTimestamp(
              v.s, tid == TypeId::kDate64 ? arrow::TimeUnit::kMilli : target->unit());
        }
        if (!t) return NotConvertible(what, v, *target);
        v = Value::Int(*t);
      } else {
        Value parsed;
        if (!ParseNumber(v.s, *target, &parsed)) return NotConvertible(what, v, *target);
        v = parsed;
      }
    } else if (from_temporal && to_temporal) {
      const auto fs = internal::ScaleOf(from), ts = internal::ScaleOf(*target);
      v.i = static_cast<int>(fs) <= static_cast<int>(ts) ? internal::ScaleUp(v.i, fs, ts)
                                                         : internal::ScaleDown(v.i, fs, ts);
    }
    switch (tid) {
      case TypeId::kBool: {
        const bool b = v.tag == Value::Tag::kFloat  ? v.f != 0
                       : v.tag == Value::Tag::kUInt ? v.u != 0
                                                    : v.i != 0;
        if (b) arrow::SetBit(o, i);
        break;
      }
      case TypeId::kInt8:
        STRATA_RETURN_IF_ERROR(PutInt(v, reinterpret_cast<int8_t*>(o) + i, what, *target));
        break;
      case TypeId::kInt16:
        STRATA_RETURN_IF_ERROR(PutInt(v, reinterpret_cast<int16_t*>(o) + i, what, *target));
        break;
      case TypeId::kInt32:
      case TypeId::kDate32:
        STRATA_RETURN_IF_ERROR(PutInt(v, reinterpret_cast<int32_t*>(o) + i, what, *target));
        break;
      case TypeId::kInt64:
      case TypeId::kDate64:
      case TypeId::kTimestamp:
        if (to_temporal && v.tag == Value::Tag::kFloat) return NotConvertible(what, v, *target);
        STRATA_RETURN_IF_ERROR(PutInt(v, reinterpret_cast<int64_t*>(o) + i, what, *target));
        break;
      case TypeId::kUInt8:
        STRATA_RETURN_IF_ERROR(PutInt(v, reinterpret_cast<uint8_t*>(o) + i, what, *target));
        break;
      case TypeId::kUInt16:
        STRATA_RETURN_IF_ERROR(PutInt(v, reinterpret_cast<uint16_t*>(o) + i, what, *target));
        break;
      case TypeId::kUInt32:
        STRATA_RETURN_IF_ERROR(PutInt(v, reinterpret_cast<uint32_t*>(o) + i, what, *target));
        break;
      case TypeId::kUInt64:
        STRATA_RETURN_IF_ERROR(PutInt(v, reinterpret_cast<uint64_t*>(o) + i, what, *target));
        break;
      case TypeId::kFloat16:
      case TypeId::kFloat32:
      case TypeId::kFloat64: {
        const double d = v.tag == Value::Tag::kFloat  ? v.f
                         : v.tag == Value::Tag::kUInt ? static_cast<double>(v.u)
                                                      : static_cast<double>(v.i);
        if (tid == TypeId::kFloat64) {
          reinterpret_cast<double*>(o)[i] = d;
        } else {
          if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
            return OutOfRange(what, v, *target);
          }
          const float f = static_cast<float>(d);
          if (tid == TypeId::kFloat32) {
            reinterpret_cast<float*>(o)[i] = f;
          } else {
            reinterpret_cast<uint16_t*>(o)[i] = arrow::FloatToHalfBits(f);
          }
        }
        break;
      }
      default:
        return Status::NotSupported("cannot cast " + what + " from " + from.ToString() + " to " +
                                    target->ToString());
    }
  }
  return internal::MakeArray(target, n, {internal::ValidityOf(*values), out.Finish()});
}

}  // namespace strata::query::filter
