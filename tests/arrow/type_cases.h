// Test support: one deterministic value generator per Arrow type of type.h, an independent
// renderer of array values (Repr, built only on the Array accessors), and the expected rendering
// of each generated row computed from the row number alone. Used by builder_test and
// compute_test to assert real values for every type.
#pragma once

// GCC 12 reports a false -Wrestrict on `"literal" + std::string` (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "arrow/array.h"
#include "arrow/builder.h"
#include "arrow/type.h"

namespace strata::arrow::testing {

inline std::string I128(__int128 v) {
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

inline std::string Fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

inline std::string Bytes(std::string_view s) {
  std::string out = "'";
  for (unsigned char c : s) {
    if (c >= 32 && c < 127 && c != '\'' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return out + "'";
}

/// Renders value i (logical) of `a`; "null" for nulls.
inline std::string Repr(const Array& a, int64_t i) {
  if (a.IsNull(i)) return "null";
  const DataType& t = *a.type();
  switch (t.id()) {
    case TypeId::kNull:
      return "null";
    case TypeId::kBool:
      return a.BoolValue(i) ? "true" : "false";
    case TypeId::kInt8:
      return std::to_string(a.Value<int8_t>(i));
    case TypeId::kInt16:
      return std::to_string(a.Value<int16_t>(i));
    case TypeId::kInt32:
    case TypeId::kDate32:
    case TypeId::kTime32:
      return std::to_string(a.Value<int32_t>(i));
    case TypeId::kInt64:
    case TypeId::kDate64:
    case TypeId::kTime64:
    case TypeId::kTimestamp:
    case TypeId::kDuration:
      return std::to_string(a.Value<int64_t>(i));
    case TypeId::kUInt8:
      return std::to_string(a.Value<uint8_t>(i));
    case TypeId::kUInt16:
      return std::to_string(a.Value<uint16_t>(i));
    case TypeId::kUInt32:
      return std::to_string(a.Value<uint32_t>(i));
    case TypeId::kUInt64:
      return std::to_string(a.Value<uint64_t>(i));
    case TypeId::kFloat16:
      return "h" + Fmt(HalfBitsToFloat(a.Value<uint16_t>(i)));
    case TypeId::kFloat32:
      return Fmt(a.Value<float>(i));
    case TypeId::kFloat64:
      return Fmt(a.Value<double>(i));
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
    case TypeId::kBinary:
    case TypeId::kLargeBinary:
    case TypeId::kFixedSizeBinary:
      return Bytes(a.GetView(i));
    case TypeId::kDecimal128: {
      __int128 v;
      std::memcpy(&v, a.GetView(i).data(), 16);
      return "d" + I128(v);
    }
    case TypeId::kList:
    case TypeId::kLargeList:
    case TypeId::kFixedSizeList: {
      std::string s = "[";
      Array child = a.child(0);
      for (int64_t k = a.ListStart(i); k < a.ListEnd(i); ++k) {
        if (k != a.ListStart(i)) s += ", ";
        s += Repr(child, k);
      }
      return s + "]";
    }
    case TypeId::kStruct: {
      std::string s = "{";
      for (int j = 0; j < static_cast<int>(t.children().size()); ++j) {
        if (j) s += ", ";
        s += t.children()[static_cast<size_t>(j)]->name + ": " + Repr(a.child(j), a.offset() + i);
      }
      return s + "}";
    }
  }
  return "?";
}

struct TypeCase {
  std::string name;
  DataTypePtr type;
  /// Appends the (non-null) value of row i.
  std::function<void(ArrayBuilder*, int64_t)> append;
  /// Repr of row i's value, computed independently of any array.
  std::function<std::string(int64_t)> expect;
};

/// Prints a case as its name in gtest output (instead of a byte dump).
inline void PrintTo(const TypeCase& c, std::ostream* os) { *os << c.name; }

inline std::string StrValue(int64_t i) {
  if (i % 7 == 3) return "";
  return std::string(static_cast<size_t>(i % 5), static_cast<char>('a' + i % 26)) +
         std::to_string(i);
}
inline std::string BinValue(int64_t i) {
  std::string s = StrValue(i);
  if (i % 2 == 1) s.push_back('\0');
  if (i % 3 == 1) s.push_back(static_cast<char>(0xff));
  return s;
}

#define STRATA_ASSERT_OK(expr)             \
  do {                                     \
    ::strata::Status _s = (expr);          \
    ASSERT_TRUE(_s.ok()) << _s.ToString(); \
  } while (0)

inline std::vector<TypeCase> AllTypeCases() {
  std::vector<TypeCase> c;
  auto ints = [&](std::string name, DataTypePtr type, std::function<int64_t(int64_t)> f) {
    c.push_back({std::move(name), std::move(type),
                 [f](ArrayBuilder* b, int64_t i) { EXPECT_TRUE(b->AppendInt(f(i)).ok()); },
                 [f](int64_t i) { return std::to_string(f(i)); }});
  };
  c.push_back({"null", null(), [](ArrayBuilder* b, int64_t) { EXPECT_TRUE(b->AppendNull().ok()); },
               [](int64_t) { return std::string("null"); }});
  c.push_back({"bool", boolean(),
               [](ArrayBuilder* b, int64_t i) { EXPECT_TRUE(b->AppendBool(i % 3 == 0).ok()); },
               [](int64_t i) { return std::string(i % 3 == 0 ? "true" : "false"); }});
  ints("int8", int8(), [](int64_t i) { return (i * 37) % 256 - 128; });
  ints("int16", int16(), [](int64_t i) { return i * 1000 - 30000; });
  ints("int32", int32(), [](int64_t i) { return i * 100000 - 7; });
  ints("int64", int64(), [](int64_t i) { return i * 1000000000000LL - 5; });
  ints("uint8", uint8(), [](int64_t i) { return (i * 7) % 256; });
  ints("uint16", uint16(), [](int64_t i) { return i * 1000 + 5; });
  ints("uint32", uint32(), [](int64_t i) { return i * 80000000 + 3; });
  c.push_back({"uint64", uint64(),
               [](ArrayBuilder* b, int64_t i) {
                 EXPECT_TRUE(b->AppendUInt(UINT64_MAX - static_cast<uint64_t>(i)).ok());
               },
               [](int64_t i) { return std::to_string(UINT64_MAX - static_cast<uint64_t>(i)); }});
  c.push_back({"float16", float16(),
               [](ArrayBuilder* b, int64_t i) {
                 EXPECT_TRUE(b->AppendHalfBits(FloatToHalfBits(static_cast<float>(i) * 0.5f)).ok());
               },
               [](int64_t i) { return "h" + Fmt(static_cast<double>(i) * 0.5); }});
  c.push_back({"float32", float32(),
               [](ArrayBuilder* b, int64_t i) { EXPECT_TRUE(b->AppendDouble(i * 1.25).ok()); },
               [](int64_t i) { return Fmt(static_cast<float>(i * 1.25)); }});
  c.push_back(
      {"float64", float64(),
       [](ArrayBuilder* b, int64_t i) { EXPECT_TRUE(b->AppendDouble(i * -2.5 + 0.1).ok()); },
       [](int64_t i) { return Fmt(i * -2.5 + 0.1); }});
  auto strs = [&](std::string name, DataTypePtr type, std::function<std::string(int64_t)> f) {
    c.push_back({std::move(name), std::move(type),
                 [f](ArrayBuilder* b, int64_t i) { EXPECT_TRUE(b->AppendBytes(f(i)).ok()); },
                 [f](int64_t i) { return Bytes(f(i)); }});
  };
  strs("utf8", utf8(), StrValue);
  strs("large_utf8", large_utf8(), StrValue);
  strs("binary", binary(), BinValue);
  strs("large_binary", large_binary(), BinValue);
  strs("fixed_size_binary", fixed_size_binary(3), [](int64_t i) {
    return std::string{static_cast<char>(i), static_cast<char>(i + 1),
                       static_cast<char>(200 + i % 50)};
  });
  ints("date32", date32(), [](int64_t i) { return i * 100 - 1000; });
  ints("date64", date64(), [](int64_t i) { return i * 86400000LL; });
  ints("time32_s", time32(TimeUnit::kSecond), [](int64_t i) { return i * 60; });
  ints("time32_ms", time32(TimeUnit::kMilli), [](int64_t i) { return i * 60000 + 1; });
  ints("time64_us", time64(TimeUnit::kMicro), [](int64_t i) { return i * 1000001; });
  ints("time64_ns", time64(TimeUnit::kNano), [](int64_t i) { return i * 1000000007; });
  ints("timestamp_us_utc", timestamp(TimeUnit::kMicro, "UTC"),
       [](int64_t i) { return 1700000000000000LL + i; });
  ints("timestamp_ns", timestamp(TimeUnit::kNano), [](int64_t i) { return -i * 999; });
  ints("duration_ms", duration(TimeUnit::kMilli), [](int64_t i) { return i * 250; });
  c.push_back({"decimal128", decimal128(20, 2),
               [](ArrayBuilder* b, int64_t i) {
                 __int128 v = static_cast<__int128>(i) * 12345 - 99;
                 v *= (i % 2 ? -1 : 1);
                 char bytes[16];
                 std::memcpy(bytes, &v, 16);
                 EXPECT_TRUE(b->AppendBytes(std::string_view(bytes, 16)).ok());
               },
               [](int64_t i) {
                 __int128 v = static_cast<__int128>(i) * 12345 - 99;
                 return "d" + I128(v * (i % 2 ? -1 : 1));
               }});
  // list<int32>: i % 4 elements i*10+k, element 1 null when i % 5 == 0.
  c.push_back({"list_int32", list(field("item", int32())),
               [](ArrayBuilder* b, int64_t i) {
                 for (int64_t k = 0; k < i % 4; ++k) {
                   if (k == 1 && i % 5 == 0) {
                     EXPECT_TRUE(b->child(0)->AppendNull().ok());
                   } else {
                     EXPECT_TRUE(b->child(0)->AppendInt(i * 10 + k).ok());
                   }
                 }
                 EXPECT_TRUE(b->AppendListEnd().ok());
               },
               [](int64_t i) {
                 std::string s = "[";
                 for (int64_t k = 0; k < i % 4; ++k) {
                   if (k) s += ", ";
                   s += (k == 1 && i % 5 == 0) ? "null" : std::to_string(i * 10 + k);
                 }
                 return s + "]";
               }});
  c.push_back(
      {"large_list_utf8", large_list(field("item", utf8())),
       [](ArrayBuilder* b, int64_t i) {
         for (int64_t k = 0; k < i % 3; ++k) {
           EXPECT_TRUE(
               b->child(0)->AppendBytes("x" + std::to_string(i) + "_" + std::to_string(k)).ok());
         }
         EXPECT_TRUE(b->AppendListEnd().ok());
       },
       [](int64_t i) {
         std::string s = "[";
         for (int64_t k = 0; k < i % 3; ++k) {
           if (k) s += ", ";
           s += Bytes("x" + std::to_string(i) + "_" + std::to_string(k));
         }
         return s + "]";
       }});
  // fixed_size_list<float32>[3], item null when (i + k) % 7 == 0.
  c.push_back({"fixed_size_list_float32", fixed_size_list(field("item", float32()), 3),
               [](ArrayBuilder* b, int64_t i) {
                 for (int64_t k = 0; k < 3; ++k) {
                   if ((i + k) % 7 == 0) {
                     EXPECT_TRUE(b->child(0)->AppendNull().ok());
                   } else {
                     EXPECT_TRUE(
                         b->child(0)->AppendDouble(static_cast<double>(i * 3 + k) + 0.5).ok());
                   }
                 }
                 EXPECT_TRUE(b->AppendValid().ok());
               },
               [](int64_t i) {
                 std::string s = "[";
                 for (int64_t k = 0; k < 3; ++k) {
                   if (k) s += ", ";
                   s += (i + k) % 7 == 0 ? "null" : Fmt(static_cast<double>(i * 3 + k) + 0.5);
                 }
                 return s + "]";
               }});
  // struct<a: int32 (null when i % 3 == 0), b: utf8, c: fixed_size_list<int16>[2]>
  c.push_back({"struct",
               struct_({field("a", int32()), field("b", utf8(), false),
                        field("c", fixed_size_list(field("item", int16()), 2))}),
               [](ArrayBuilder* b, int64_t i) {
                 if (i % 3 == 0) {
                   EXPECT_TRUE(b->child(0)->AppendNull().ok());
                 } else {
                   EXPECT_TRUE(b->child(0)->AppendInt(i).ok());
                 }
                 EXPECT_TRUE(b->child(1)->AppendBytes("b" + std::to_string(i)).ok());
                 EXPECT_TRUE(b->child(2)->child(0)->AppendInt(i).ok());
                 EXPECT_TRUE(b->child(2)->child(0)->AppendInt(-i).ok());
                 EXPECT_TRUE(b->child(2)->AppendValid().ok());
                 EXPECT_TRUE(b->AppendValid().ok());
               },
               [](int64_t i) {
                 return "{a: " + (i % 3 == 0 ? std::string("null") : std::to_string(i)) +
                        ", b: " + Bytes("b" + std::to_string(i)) + ", c: [" + std::to_string(i) +
                        ", " + std::to_string(-i) + "]}";
               }});
  // list<struct<x: int64>>: nesting of list over struct.
  c.push_back({"list_struct", list(field("item", struct_({field("x", int64())}))),
               [](ArrayBuilder* b, int64_t i) {
                 ArrayBuilder* s = b->child(0);
                 for (int64_t k = 0; k < i % 3; ++k) {
                   EXPECT_TRUE(s->child(0)->AppendInt(i * 100 + k).ok());
                   EXPECT_TRUE(s->AppendValid().ok());
                 }
                 EXPECT_TRUE(b->AppendListEnd().ok());
               },
               [](int64_t i) {
                 std::string s = "[";
                 for (int64_t k = 0; k < i % 3; ++k) {
                   if (k) s += ", ";
                   s += "{x: " + std::to_string(i * 100 + k) + "}";
                 }
                 return s + "]";
               }});
  return c;
}

/// Row i is null when `with_nulls` and i % 4 == 2 (the null type: always).
inline bool RowIsNull(const TypeCase& c, int64_t i, bool with_nulls) {
  return c.type->id() == TypeId::kNull || (with_nulls && i % 4 == 2);
}

inline std::string Expected(const TypeCase& c, int64_t i, bool with_nulls) {
  return RowIsNull(c, i, with_nulls) ? "null" : c.expect(i);
}

/// Builds rows [0, n) of case `c`.
inline ArrayDataPtr BuildCase(const TypeCase& c, int64_t n, bool with_nulls) {
  ArrayBuilder b(c.type);
  for (int64_t i = 0; i < n; ++i) {
    if (RowIsNull(c, i, with_nulls)) {
      EXPECT_TRUE(b.AppendNull().ok());
    } else {
      c.append(&b, i);
    }
  }
  auto r = b.Finish();
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r.value() : nullptr;
}

inline std::string CaseName(const ::testing::TestParamInfo<TypeCase>& info) {
  return info.param.name;
}

}  // namespace strata::arrow::testing
