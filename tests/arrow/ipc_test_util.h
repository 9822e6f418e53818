// Test helpers shared by the IPC tests, the ipc_tool CLI and the fuzz corpus generator:
// a schema with every type of arrow/type.h, deterministic batches of it, and a canonical JSON
// dump of values (the same form tests/e2e/arrow_interop.test.mjs computes on the JS side).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/builder.h"
#include "arrow/type.h"

namespace strata::arrow::testing {

/// One field of every type Strata carries, nested types included, with field and schema
/// metadata. Column "id" (int64) is non-nullable.
inline SchemaPtr AllTypesSchema() {
  using KV = std::vector<std::pair<std::string, std::string>>;
  std::vector<FieldPtr> f = {
      field("id", int64(), false, KeyValueMetadata(KV{{"role", "primary"}})),
      field("null", null()),
      field("bool", boolean()),
      field("i8", int8()),
      field("i16", int16()),
      field("i32", int32()),
      field("u8", uint8()),
      field("u16", uint16()),
      field("u32", uint32()),
      field("u64", uint64()),
      field("f16", float16()),
      field("f32", float32()),
      field("f64", float64()),
      field("utf8", utf8()),
      field("large_utf8", large_utf8()),
      field("binary", binary()),
      field("large_binary", large_binary()),
      field("fsb", fixed_size_binary(3)),
      field("date32", date32()),
      field("date64", date64()),
      field("time32s", time32(TimeUnit::kSecond)),
      field("time32ms", time32(TimeUnit::kMilli)),
      field("time64us", time64(TimeUnit::kMicro)),
      field("time64ns", time64(TimeUnit::kNano)),
      field("ts_us_utc", timestamp(TimeUnit::kMicro, "UTC")),
      field("ts_ns", timestamp(TimeUnit::kNano)),
      field("ts_s", timestamp(TimeUnit::kSecond)),
      field("dur_ms", duration(TimeUnit::kMilli)),
      field("dec", decimal128(10, 2)),
      field("list_i32", list(field("item", int32()))),
      field("large_list_utf8", large_list(field("item", utf8()))),
      field("vec", fixed_size_list(field("item", float32()), 3)),
      field("st", struct_({field("a", int16()), field("b", utf8())})),
  };
  return std::make_shared<const Schema>(std::move(f),
                                        KeyValueMetadata(KV{{"origin", "strata-test"}}));
}

inline bool IsNullRow(int64_t row, int seed) { return (row + seed) % 5 == 2; }

/// Appends one value derived from (row, seed) to `b`, or a null every fifth row when
/// `nullable`.
inline Status AppendSample(ArrayBuilder* b, int64_t row, int seed, bool nullable) {
  const DataType& t = *b->type();
  if (t.id() == TypeId::kNull) return b->AppendNull();
  if (nullable && IsNullRow(row, seed)) return b->AppendNull();
  const int64_t v = row * 7 + seed;
  switch (t.id()) {
    case TypeId::kBool:
      return b->AppendBool((row + seed) % 3 == 0);
    case TypeId::kInt8:
      return b->AppendInt(v % 120 - 60);
    case TypeId::kInt16:
      return b->AppendInt(v * 3 - 1000);
    case TypeId::kInt32:
    case TypeId::kDate32:
      return b->AppendInt(v * 1000 - 50000);
    case TypeId::kTime32:
      return b->AppendInt(t.unit() == TimeUnit::kSecond ? v % 86400 : (v * 1000) % 86400000);
    case TypeId::kInt64:
    case TypeId::kDuration:
      return b->AppendInt(v * 1000000007LL - 3);
    case TypeId::kDate64:
      return b->AppendInt((v - 5) * 86400000LL);
    case TypeId::kTime64:
      return b->AppendInt(t.unit() == TimeUnit::kMicro ? v * 1000001LL : v * 1000000001LL);
    case TypeId::kTimestamp:
      return b->AppendInt(1700000000LL * 1000 + v * 12345);
    case TypeId::kUInt8:
      return b->AppendUInt(static_cast<uint64_t>(v % 250));
    case TypeId::kUInt16:
      return b->AppendUInt(static_cast<uint64_t>(v * 13 % 65000));
    case TypeId::kUInt32:
      return b->AppendUInt(static_cast<uint64_t>(v) * 4000000ULL % 4000000000ULL);
    case TypeId::kUInt64:
      return b->AppendUInt(static_cast<uint64_t>(v) * 1000000000000ULL + 7);
    case TypeId::kFloat16: {
      // Half-precision bits of (v % 64) * 0.5: exactly representable.
      const float x = static_cast<float>(v % 64) * 0.5f;
      uint16_t bits = 0;
      if (x != 0.0f) {
        int e = 0;
        const float m = std::frexp(x, &e);  // x = m * 2^e, m in [0.5, 1)
        const int exp = e - 1 + 15;
        const uint16_t frac = static_cast<uint16_t>((m * 2.0f - 1.0f) * 1024.0f);
        bits = static_cast<uint16_t>((exp << 10) | frac);
      }
      return b->AppendHalfBits(bits);
    }
    case TypeId::kFloat32:
      return b->AppendDouble(static_cast<double>(v) * 0.25 - 8.0);
    case TypeId::kFloat64:
      return b->AppendDouble(static_cast<double>(v) * 0.125 - 100.0);
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
      return b->AppendBytes(row % 4 == 3 ? std::string() : "s" + std::to_string(v) + "\xc3\xa9");
    case TypeId::kBinary:
    case TypeId::kLargeBinary: {
      std::string s(static_cast<size_t>(v % 5), '\0');
      for (size_t k = 0; k < s.size(); ++k)
        s[k] = static_cast<char>((v + static_cast<int64_t>(k)) * 37);
      return b->AppendBytes(s);
    }
    case TypeId::kFixedSizeBinary: {
      std::string s(static_cast<size_t>(t.byte_width()), '\0');
      for (size_t k = 0; k < s.size(); ++k)
        s[k] = static_cast<char>(v + static_cast<int64_t>(k) * 11);
      return b->AppendBytes(s);
    }
    case TypeId::kDecimal128: {
      __int128 x = static_cast<__int128>(v * 12345 - 99999);
      char bytes[16];
      std::memcpy(bytes, &x, 16);
      return b->AppendBytes(std::string_view(bytes, 16));
    }
    case TypeId::kList:
    case TypeId::kLargeList: {
      const int64_t n = (row + seed) % 4;
      for (int64_t k = 0; k < n; ++k) {
        STRATA_RETURN_IF_ERROR(AppendSample(b->child(0), row * 4 + k, seed + 1, true));
      }
      return b->AppendListEnd();
    }
    case TypeId::kFixedSizeList:
      for (int32_t k = 0; k < t.list_size(); ++k) {
        STRATA_RETURN_IF_ERROR(AppendSample(b->child(0), row * 3 + k, seed + 2, true));
      }
      return b->AppendValid();
    case TypeId::kStruct:
      for (int j = 0; j < b->num_children(); ++j) {
        STRATA_RETURN_IF_ERROR(AppendSample(b->child(j), row, seed + 3 + j, true));
      }
      return b->AppendValid();
    default:
      return Status::Invalid("AppendSample: unexpected type " + t.ToString());
  }
}

/// A batch of `rows` rows of `schema` with values from AppendSample.
inline Result<RecordBatchPtr> SampleBatch(const SchemaPtr& schema, int64_t rows, int seed) {
  RecordBatchBuilder rb(schema);
  for (int64_t r = 0; r < rows; ++r) {
    for (int c = 0; c < schema->num_fields(); ++c) {
      STRATA_RETURN_IF_ERROR(AppendSample(rb.column(c), r, seed + c, schema->field(c)->nullable));
    }
  }
  return rb.Finish();
}

inline std::string Hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

inline double HalfToDouble(uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int frac = h & 0x3ff;
  double v;
  if (exp == 0) {
    v = std::ldexp(frac, -24);
  } else if (exp == 31) {
    v = frac ? NAN : INFINITY;
  } else {
    v = std::ldexp(frac + 1024, exp - 25);
  }
  return (h & 0x8000) ? -v : v;
}

/// Canonical JSON of cell i: null; bool; 8-32 bit ints, date32, time32 as numbers; 64-bit
/// integers and 64-bit temporals as decimal strings; floats as numbers; utf8 as strings;
/// binary, fixed_size_binary and decimal128 (16 little-endian bytes) as lowercase hex;
/// lists as arrays; structs as objects.
inline nlohmann::json CellJson(const Array& a, int64_t i) {
  if (a.IsNull(i)) return nullptr;
  switch (a.type_id()) {
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
    case TypeId::kUInt8:
      return a.Value<uint8_t>(i);
    case TypeId::kUInt16:
      return a.Value<uint16_t>(i);
    case TypeId::kUInt32:
      return a.Value<uint32_t>(i);
    case TypeId::kInt64:
    case TypeId::kDate64:
    case TypeId::kTime64:
    case TypeId::kTimestamp:
    case TypeId::kDuration:
      return std::to_string(a.Value<int64_t>(i));
    case TypeId::kUInt64:
      return std::to_string(a.Value<uint64_t>(i));
    case TypeId::kFloat16:
      return HalfToDouble(a.Value<uint16_t>(i));
    case TypeId::kFloat32:
      return static_cast<double>(a.Value<float>(i));
    case TypeId::kFloat64:
      return a.Value<double>(i);
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
      return std::string(a.GetView(i));
    case TypeId::kBinary:
    case TypeId::kLargeBinary:
    case TypeId::kFixedSizeBinary:
    case TypeId::kDecimal128:
      return Hex(a.GetView(i));
    case TypeId::kList:
    case TypeId::kLargeList:
    case TypeId::kFixedSizeList: {
      nlohmann::json arr = nlohmann::json::array();
      Array c = a.child(0);
      for (int64_t j = a.ListStart(i); j < a.ListEnd(i); ++j) arr.push_back(CellJson(c, j));
      return arr;
    }
    case TypeId::kStruct: {
      nlohmann::json obj = nlohmann::json::object();
      const auto& fields = a.type()->children();
      for (size_t j = 0; j < fields.size(); ++j) {
        obj[fields[j]->name] = CellJson(a.child(static_cast<int>(j)), a.offset() + i);
      }
      return obj;
    }
  }
  return nullptr;
}

inline nlohmann::json MetadataJson(const KeyValueMetadata& md) {
  nlohmann::json o = nlohmann::json::object();
  for (const auto& [k, v] : md.pairs()) o[k] = v;
  return o;
}

inline nlohmann::json FieldJson(const Field& f) {
  nlohmann::json o = {{"name", f.name}, {"type", f.type->ToString()}, {"nullable", f.nullable}};
  if (!f.metadata.empty()) o["metadata"] = MetadataJson(f.metadata);
  return o;
}

/// {"schema": {"fields": [...], "metadata": {...}}, "batches": [{"num_rows": n,
///  "columns": {name: [cells]}}]}
inline nlohmann::json DumpJson(const Schema& schema, const std::vector<RecordBatchPtr>& batches) {
  nlohmann::json fields = nlohmann::json::array();
  for (const auto& f : schema.fields()) fields.push_back(FieldJson(*f));
  nlohmann::json out = {
      {"schema", {{"fields", fields}, {"metadata", MetadataJson(schema.metadata())}}}};
  nlohmann::json bs = nlohmann::json::array();
  for (const auto& b : batches) {
    nlohmann::json cols = nlohmann::json::object();
    for (int c = 0; c < b->num_columns(); ++c) {
      nlohmann::json vals = nlohmann::json::array();
      Array col = b->column(c);
      for (int64_t i = 0; i < col.length(); ++i) vals.push_back(CellJson(col, i));
      cols[schema.field(c)->name] = vals;
    }
    bs.push_back({{"num_rows", b->num_rows()}, {"columns", cols}});
  }
  out["batches"] = bs;
  return out;
}

}  // namespace strata::arrow::testing
