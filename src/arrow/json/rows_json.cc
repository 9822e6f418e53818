#include "arrow/json/rows_json.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "arrow/builder.h"
#include "common/civil_date.h"
#include "common/json_guard.h"

namespace strata::arrow::json {
namespace {

using nlohmann::json;

// Quoted, capped at kMaxEchoBytes: values and keys come from untrusted request bodies.
std::string Quote(const std::string& s) {
  std::string out(1, '\'');
  out += Excerpt(s);
  out += '\'';
  return out;
}

std::string Got(const json& v) {
  // Never serialize arrays/objects: dump() recurses (stack overflow on deep input) and may be huge.
  if (v.is_structured()) return std::string(v.type_name()) + " of " + std::to_string(v.size());
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return std::string(v.type_name()) + " " + s;
}

Status Expected(const std::string& what, const DataType& type, const json& v) {
  return Status::Invalid("expected " + what + " for " + type.ToString() + ", got " + Got(v));
}

// --- Dates and times ------------------------------------------------------------------------

class Cursor {
 public:
  explicit Cursor(const std::string& s) : s_(s) {}
  bool Digits(int n, int64_t* out) {
    int64_t v = 0;
    for (int k = 0; k < n; ++k) {
      if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') return false;
      v = v * 10 + (s_[pos_++] - '0');
    }
    *out = v;
    return true;
  }
  bool Eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Done() const { return pos_ == s_.size(); }
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool IsDigit() const { return Peek() >= '0' && Peek() <= '9'; }
  void Next() { ++pos_; }

 private:
  const std::string& s_;
  size_t pos_ = 0;
};

bool ParseDate(Cursor* c, int64_t* days) {
  int64_t y, m, d;
  if (!c->Digits(4, &y) || !c->Eat('-') || !c->Digits(2, &m) || !c->Eat('-') || !c->Digits(2, &d)) {
    return false;
  }
  if (m < 1 || m > 12 || d < 1 || d > DaysInMonth(y, static_cast<unsigned>(m))) return false;
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  return true;
}

// ISO 8601 date or date-time to nanoseconds since the epoch (128-bit, unchecked range).
bool ParseTimestampNanos(const std::string& s, __int128* nanos) {
  Cursor c(s);
  int64_t days;
  if (!ParseDate(&c, &days)) return false;
  __int128 secs = static_cast<__int128>(days) * 86400;
  __int128 frac_ns = 0;
  if (!c.Done()) {
    if (!c.Eat('T') && !c.Eat(' ')) return false;
    int64_t hh, mm, ss = 0;
    if (!c.Digits(2, &hh) || !c.Eat(':') || !c.Digits(2, &mm)) return false;
    if (c.Eat(':')) {
      if (!c.Digits(2, &ss)) return false;
      if (c.Eat('.')) {
        int ndig = 0;
        int64_t f = 0;
        while (c.IsDigit()) {
          if (ndig < 9) {
            f = f * 10 + (c.Peek() - '0');
            ++ndig;
          }
          c.Next();
        }
        if (ndig == 0) return false;
        for (int k = ndig; k < 9; ++k) f *= 10;
        frac_ns = f;
      }
    }
    if (hh > 23 || mm > 59 || ss > 60) return false;
    secs += hh * 3600 + mm * 60 + ss;
    if (c.Eat('Z') || c.Eat('z')) {
      // UTC
    } else if (c.Peek() == '+' || c.Peek() == '-') {
      const int sign = c.Peek() == '+' ? 1 : -1;
      c.Next();
      int64_t oh, om = 0;
      if (!c.Digits(2, &oh)) return false;
      if (c.Eat(':')) {
        if (!c.Digits(2, &om)) return false;
      } else if (c.IsDigit() && !c.Digits(2, &om)) {
        return false;
      }
      if (oh > 23 || om > 59) return false;
      secs -= sign * (oh * 3600 + om * 60);
    }
  }
  if (!c.Done()) return false;
  *nanos = secs * 1000000000 + frac_ns;
  return true;
}

int64_t UnitsPerSecond(TimeUnit u) {
  switch (u) {
    case TimeUnit::kSecond:
      return 1;
    case TimeUnit::kMilli:
      return 1000;
    case TimeUnit::kMicro:
      return 1000000;
    case TimeUnit::kNano:
      return 1000000000;
  }
  return 1;
}

// --- Decimal128 -------------------------------------------------------------------------------

std::string Int128ToString(__int128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  unsigned __int128 u =
      neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u > 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

int CountDigits(__int128 v) {
  unsigned __int128 u = v < 0 ? -static_cast<unsigned __int128>(v) : v;
  int n = 0;
  while (u > 0) {
    ++n;
    u /= 10;
  }
  return n;
}

Status DecimalFromJson(const DataType& t, const json& v, __int128* out) {
  const int p = t.precision();
  const int scale = t.scale();
  if (scale < 0) return Status::NotSupported("JSON input for a decimal with negative scale");
  __int128 unscaled = 0;
  if (v.is_number_integer()) {
    unscaled = v.is_number_unsigned() ? static_cast<__int128>(v.get<uint64_t>())
                                      : static_cast<__int128>(v.get<int64_t>());
    if (CountDigits(unscaled) + scale > p) {
      return Status::Invalid("value " + Int128ToString(unscaled) + " has more than " +
                             std::to_string(p - scale) + " integer digits for " + t.ToString());
    }
    for (int k = 0; k < scale; ++k) unscaled *= 10;
  } else if (v.is_string()) {
    const std::string s = v.get<std::string>();
    size_t i = 0;
    bool neg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    int int_digits = 0, frac_digits = 0;
    bool any = false;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      if (int_digits > 0 || s[i] != '0') ++int_digits;
      if (int_digits > 38) break;
      unscaled = unscaled * 10 + (s[i] - '0');
      any = true;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
        any = true;
        if (frac_digits < scale) {
          unscaled = unscaled * 10 + (s[i] - '0');
          ++frac_digits;
        } else if (s[i] != '0') {
          return Status::Invalid("decimal " + Quote(s) + " has more than " + std::to_string(scale) +
                                 " fraction digits for " + t.ToString());
        }
      }
    }
    if (!any || i != s.size()) {
      return Status::Invalid("expected a decimal string like \"-12.34\" for " + t.ToString() +
                             ", got " + Quote(s));
    }
    if (int_digits > p - scale) {
      return Status::Invalid("decimal " + Quote(s) + " has more than " + std::to_string(p - scale) +
                             " integer digits for " + t.ToString());
    }
    for (; frac_digits < scale; ++frac_digits) unscaled *= 10;
    if (neg) unscaled = -unscaled;
  } else {
    return Expected("a decimal string or an integer", t, v);
  }
  *out = unscaled;
  return Status::OK();
}

std::string DecimalToString(__int128 unscaled, int scale) {
  std::string digits = Int128ToString(unscaled < 0 ? -unscaled : unscaled);
  const bool neg = unscaled < 0;
  if (scale > 0) {
    if (static_cast<int>(digits.size()) <= scale) {
      digits.insert(0, static_cast<size_t>(scale - static_cast<int>(digits.size()) + 1), '0');
    }
    digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  } else if (scale < 0 && unscaled != 0) {
    digits.append(static_cast<size_t>(-scale), '0');
  }
  return neg ? "-" + digits : digits;
}

// --- JSON -> builder ----------------------------------------------------------------------------

Status AppendBinaryJson(ArrayBuilder* b, const json& v) {
  if (v.is_string()) return b->AppendBytes(v.get_ref<const std::string&>());
  if (v.is_array()) {
    std::string bytes;
    bytes.reserve(v.size());
    for (size_t k = 0; k < v.size(); ++k) {
      const json& e = v[k];
      if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() > 255) {
        return Status::Invalid("byte " + std::to_string(k) +
                               ": expected an integer in [0, 255], got " + Got(e));
      }
      bytes.push_back(static_cast<char>(e.get<int64_t>()));
    }
    return b->AppendBytes(bytes);
  }
  return Expected("a string or an array of bytes", *b->type(), v);
}

Status AppendIntegerJson(ArrayBuilder* b, const json& v) {
  if (v.is_number_unsigned()) return b->AppendUInt(v.get<uint64_t>());
  if (v.is_number_integer()) return b->AppendInt(v.get<int64_t>());
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::trunc(d) && d >= -9.2233720368547758e18 &&
        d < 9.2233720368547758e18) {
      return b->AppendInt(static_cast<int64_t>(d));
    }
  }
  return Expected("an integer", *b->type(), v);
}

Status AppendValueJson(ArrayBuilder* b, const Field& f, const json& v, int depth);

Status AppendStructJson(ArrayBuilder* b, const DataType& t, const json& obj, int depth) {
  if (!obj.is_object()) return Expected("an object", t, obj);
  const auto& fields = t.children();
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (const auto& f : fields) known = known || f->name == it.key();
    if (!known) return Status::Invalid("field " + Quote(it.key()) + " is not in " + t.ToString());
  }
  for (size_t j = 0; j < fields.size(); ++j) {
    auto it = obj.find(fields[j]->name);
    static const json kNull;
    const json& v = it == obj.end() ? kNull : *it;
    STRATA_RETURN_IF_ERROR(AppendValueJson(b->child(static_cast<int>(j)), *fields[j], v, depth + 1)
                               .WithContext("field " + Quote(fields[j]->name)));
  }
  return b->AppendValid();
}

Status AppendValueJson(ArrayBuilder* b, const Field& f, const json& v, int depth) {
  const DataType& t = *f.type;
  if (depth > 64) return Status::Invalid("nesting deeper than 64 levels");
  if (v.is_null()) {
    if (!f.nullable) return Status::Invalid("null for a non-nullable field");
    return b->AppendNull();
  }
  switch (t.id()) {
    case TypeId::kNull:
      return Expected("null", t, v);
    case TypeId::kBool:
      if (!v.is_boolean()) return Expected("true or false", t, v);
      return b->AppendBool(v.get<bool>());
    case TypeId::kInt8:
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64:
    case TypeId::kUInt8:
    case TypeId::kUInt16:
    case TypeId::kUInt32:
    case TypeId::kUInt64:
    case TypeId::kTime32:
    case TypeId::kTime64:
    case TypeId::kDuration:
      return AppendIntegerJson(b, v);
    case TypeId::kDate32:
    case TypeId::kDate64: {
      if (!v.is_string()) return AppendIntegerJson(b, v);
      const std::string& s = v.get_ref<const std::string&>();
      Cursor c(s);
      int64_t days;
      if (!ParseDate(&c, &days) || !c.Done()) {
        return Status::Invalid("expected a date \"YYYY-MM-DD\" for " + t.ToString() + ", got " +
                               Quote(s));
      }
      return b->AppendInt(t.id() == TypeId::kDate32 ? days : days * 86400000);
    }
    case TypeId::kTimestamp: {
      if (!v.is_string()) return AppendIntegerJson(b, v);
      const std::string& s = v.get_ref<const std::string&>();
      __int128 ns;
      if (!ParseTimestampNanos(s, &ns)) {
        return Status::Invalid(
            "expected an ISO 8601 timestamp like \"2024-01-31T12:00:00Z\" "
            "for " +
            t.ToString() + ", got " + Quote(s));
      }
      const int64_t div = 1000000000 / UnitsPerSecond(t.unit());
      __int128 q = ns / div;
      if (ns % div != 0 && ns < 0) --q;  // floor
      if (q < std::numeric_limits<int64_t>::min() || q > std::numeric_limits<int64_t>::max()) {
        return Status::Invalid("timestamp " + Quote(s) + " is out of range for " + t.ToString());
      }
      return b->AppendInt(static_cast<int64_t>(q));
    }
    case TypeId::kFloat16:
    case TypeId::kFloat32:
    case TypeId::kFloat64: {
      if (!v.is_number()) return Expected("a number", t, v);
      const double d = v.get<double>();
      if (t.id() == TypeId::kFloat32 && std::isfinite(d) && std::fabs(d) > FLT_MAX) {
        return Status::Invalid("value " + v.dump() + " is out of range for float32");
      }
      if (t.id() == TypeId::kFloat16 && std::isfinite(d) && std::fabs(d) > 65504.0) {
        return Status::Invalid("value " + v.dump() + " is out of range for float16 (max 65504)");
      }
      return b->AppendDouble(d);
    }
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
      if (!v.is_string()) return Expected("a string", t, v);
      return b->AppendBytes(v.get_ref<const std::string&>());
    case TypeId::kBinary:
    case TypeId::kLargeBinary:
    case TypeId::kFixedSizeBinary:
      return AppendBinaryJson(b, v);
    case TypeId::kDecimal128: {
      __int128 x = 0;
      STRATA_RETURN_IF_ERROR(DecimalFromJson(t, v, &x));
      char bytes[16];
      std::memcpy(bytes, &x, 16);  // little-endian host (x86-64), as the Arrow format stores it
      return b->AppendBytes(std::string_view(bytes, 16));
    }
    case TypeId::kList:
    case TypeId::kLargeList:
    case TypeId::kFixedSizeList: {
      if (!v.is_array()) return Expected("an array", t, v);
      if (t.id() == TypeId::kFixedSizeList && static_cast<int64_t>(v.size()) != t.list_size()) {
        return Status::Invalid("expected " + std::to_string(t.list_size()) + " values, got " +
                               std::to_string(v.size()));
      }
      ArrayBuilder* child = b->child(0);
      const Field& cf = *t.value_field();
      for (size_t k = 0; k < v.size(); ++k) {
        STRATA_RETURN_IF_ERROR(AppendValueJson(child, cf, v[k], depth + 1)
                                   .WithContext("element " + std::to_string(k)));
      }
      return t.id() == TypeId::kFixedSizeList ? b->AppendValid() : b->AppendListEnd();
    }
    case TypeId::kStruct:
      return AppendStructJson(b, t, v, depth);
  }
  return Status::Internal("unhandled type " + t.ToString());
}

Result<RecordBatchPtr> RowsFromJsonImpl(const json& rows, const SchemaPtr& schema) {
  if (!rows.is_array()) {
    return Status::Invalid("expected a JSON array of row objects, got " +
                           std::string(rows.type_name()));
  }
  RecordBatchBuilder rb(schema);
  const auto& fields = schema->fields();
  for (int c = 0; c < schema->num_fields(); ++c) {
    rb.column(c)->Reserve(static_cast<int64_t>(rows.size()));
  }
  static const json kNull;
  for (size_t r = 0; r < rows.size(); ++r) {
    const json& row = rows[r];
    const std::string where = "row " + std::to_string(r);
    if (!row.is_object()) {
      return Status::Invalid(where + ": expected an object, got " + Got(row));
    }
    for (auto it = row.begin(); it != row.end(); ++it) {
      if (schema->GetFieldIndex(it.key()) < 0) {
        return Status::Invalid(where + ", column " + Quote(it.key()) +
                               ": no such column in the table schema");
      }
    }
    for (int c = 0; c < schema->num_fields(); ++c) {
      const Field& f = *fields[static_cast<size_t>(c)];
      auto it = row.find(f.name);
      if (it == row.end() && !f.nullable) {
        return Status::Invalid(where + ", column " + Quote(f.name) +
                               ": missing value for a non-nullable column");
      }
      Status st = AppendValueJson(rb.column(c), f, it == row.end() ? kNull : *it, 0);
      if (!st.ok()) {
        return Status(st.code(), where + ", column " + Quote(f.name) + ": " + st.message());
      }
    }
  }
  return rb.Finish();
}

// --- Array -> JSON ------------------------------------------------------------------------------

json BytesToJsonArray(std::string_view s) {
  json arr = json::array();
  for (char ch : s) arr.push_back(static_cast<int>(static_cast<uint8_t>(ch)));
  return arr;
}

json ValueImpl(const Array& a, int64_t i) {
  const ArrayData& d = *a.data();
  return [&]() -> json {
    if (a.IsNull(i)) return nullptr;
    const DataType& t = *d.type;
    switch (t.id()) {
      case TypeId::kNull:
        return nullptr;
      case TypeId::kBool:
        return a.BoolValue(i);
      case TypeId::kInt8:
        return a.Value<int8_t>(i);
      case TypeId::kInt16:
        return a.Value<int16_t>(i);
      case TypeId::kInt32:
      case TypeId::kDate32:
      case TypeId::kTime32:
        return a.Value<int32_t>(i);
      case TypeId::kInt64:
      case TypeId::kDate64:
      case TypeId::kTime64:
      case TypeId::kTimestamp:
      case TypeId::kDuration:
        return a.Value<int64_t>(i);
      case TypeId::kUInt8:
        return a.Value<uint8_t>(i);
      case TypeId::kUInt16:
        return a.Value<uint16_t>(i);
      case TypeId::kUInt32:
        return a.Value<uint32_t>(i);
      case TypeId::kUInt64:
        return a.Value<uint64_t>(i);
      case TypeId::kFloat16:
        return HalfBitsToFloat(a.Value<uint16_t>(i));
      case TypeId::kFloat32:
        return a.Value<float>(i);
      case TypeId::kFloat64:
        return a.Value<double>(i);
      case TypeId::kUtf8:
      case TypeId::kLargeUtf8:
        return std::string(a.GetView(i));
      case TypeId::kBinary:
      case TypeId::kLargeBinary:
      case TypeId::kFixedSizeBinary:
        return BytesToJsonArray(a.GetView(i));
      case TypeId::kDecimal128: {
        __int128 x;
        std::memcpy(&x, a.GetView(i).data(), 16);
        return DecimalToString(x, t.scale());
      }
      case TypeId::kList:
      case TypeId::kLargeList:
      case TypeId::kFixedSizeList: {
        json arr = json::array();
        const Array child = a.child(0);
        for (int64_t k = a.ListStart(i); k < a.ListEnd(i); ++k) {
          arr.push_back(ValueImpl(child, k));
        }
        return arr;
      }
      case TypeId::kStruct: {
        json obj = json::object();
        for (size_t j = 0; j < t.children().size(); ++j) {
          obj[t.children()[j]->name] = ValueImpl(a.child(static_cast<int>(j)), d.offset + i);
        }
        return obj;
      }
    }
    return nullptr;
  }();
}

}  // namespace

json ValueToJson(const ArrayData& d, int64_t i) {
  return ValueImpl(Array(std::make_shared<ArrayData>(d)), i);
}

json RowsToJson(const RecordBatch& batch) {
  json rows = json::array();
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    json row = json::object();
    for (int c = 0; c < batch.num_columns(); ++c) {
      row[batch.schema()->field(c)->name] = ValueImpl(batch.column(c), r);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string RowsToJsonString(const RecordBatch& batch) {
  return RowsToJson(batch).dump(-1, ' ', false, json::error_handler_t::replace);
}

void AppendRowsJsonInColumnOrder(const RecordBatch& batch, std::string* out, bool* first) {
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(batch.num_columns()));
  for (int c = 0; c < batch.num_columns(); ++c) {
    keys.push_back(
        json(batch.schema()->field(c)->name).dump(-1, ' ', false, json::error_handler_t::replace) +
        ":");
  }
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    if (!*first) out->push_back(',');
    *first = false;
    out->push_back('{');
    for (int c = 0; c < batch.num_columns(); ++c) {
      if (c > 0) out->push_back(',');
      out->append(keys[static_cast<size_t>(c)]);
      out->append(
          ValueImpl(batch.column(c), r).dump(-1, ' ', false, json::error_handler_t::replace));
    }
    out->push_back('}');
  }
}

Result<RecordBatchPtr> RowsFromJson(const json& rows, const SchemaPtr& schema) {
  try {
    return RowsFromJsonImpl(rows, schema);
  } catch (const std::exception& e) {
    return Status::Invalid(std::string("invalid rows JSON: ") + e.what());
  }
}

Result<RecordBatchPtr> ParseRowsJson(std::string_view text, const SchemaPtr& schema) {
  STRATA_RETURN_IF_ERROR(CheckJsonDepth(text, "rows"));
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    return Status::Invalid("rows are not valid JSON " + DescribeJsonParseError(e.byte, e.what()));
  } catch (const std::exception& e) {
    return Status::Invalid(std::string("rows are not valid JSON: ") + e.what());
  }
  return RowsFromJson(j, schema);
}

}  // namespace strata::arrow::json
