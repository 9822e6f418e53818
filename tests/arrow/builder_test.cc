#include "arrow/builder.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "arrow/array.h"
#include "type_cases.h"

namespace strata::arrow {
namespace {

using testing::AllTypeCases;
using testing::BuildCase;
using testing::Expected;
using testing::Repr;
using testing::TypeCase;

bool Aligned(const BufferPtr& b) {
  return b == nullptr || reinterpret_cast<uintptr_t>(b->data()) % 64 == 0;
}

void ExpectAligned(const ArrayData& d) {
  for (const auto& b : d.buffers) EXPECT_TRUE(Aligned(b)) << d.type->ToString();
  for (const auto& c : d.children) ExpectAligned(*c);
}

class EveryTypeBuild : public ::testing::TestWithParam<TypeCase> {};

TEST_P(EveryTypeBuild, ValuesNullsSlices) {
  const TypeCase& c = GetParam();
  for (bool with_nulls : {false, true}) {
    const int64_t n = 37;
    ArrayDataPtr d = BuildCase(c, n, with_nulls);
    ASSERT_NE(d, nullptr);
    STRATA_ASSERT_OK(ValidateArray(*d));
    ExpectAligned(*d);
    EXPECT_TRUE(d->type->Equals(*c.type));
    EXPECT_EQ(d->length, n);
    Array a(d);
    int64_t expected_nulls = 0;
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(Repr(a, i), Expected(c, i, with_nulls)) << c.name << " row " << i;
      expected_nulls += testing::RowIsNull(c, i, with_nulls);
    }
    EXPECT_EQ(d->null_count, expected_nulls);
    EXPECT_EQ(ComputeNullCount(*d), expected_nulls);
    if (c.type->id() != TypeId::kNull) {
      // The validity bitmap exists exactly when a null was appended.
      EXPECT_EQ(d->buffers[0] != nullptr, expected_nulls > 0) << c.name;
    }
    // Zero-copy slices keep the values at shifted positions.
    for (int64_t off : {1, 5, 8, 13}) {
      Array s = a.Slice(off, 17);
      STRATA_ASSERT_OK(ValidateArray(*s.data()));
      for (int64_t i = 0; i < 17; ++i) {
        EXPECT_EQ(Repr(s, i), Expected(c, off + i, with_nulls)) << c.name << " slice " << off;
      }
    }
  }
}

TEST_P(EveryTypeBuild, EmptyAndReuseAfterFinish) {
  const TypeCase& c = GetParam();
  ArrayBuilder b(c.type);
  auto empty = b.Finish();
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->length, 0);
  STRATA_ASSERT_OK(ValidateArray(**empty));
  // The builder is reusable after Finish and starts from scratch.
  c.append(&b, 4);
  c.append(&b, 5);
  EXPECT_EQ(b.length(), 2);
  auto two = b.Finish();
  ASSERT_TRUE(two.ok());
  STRATA_ASSERT_OK(ValidateArray(**two));
  EXPECT_EQ(Repr(Array(*two), 0), c.expect(4));
  EXPECT_EQ(Repr(Array(*two), 1), c.expect(5));
  EXPECT_EQ(b.length(), 0);
}

INSTANTIATE_TEST_SUITE_P(Arrow, EveryTypeBuild, ::testing::ValuesIn(AllTypeCases()),
                         testing::CaseName);

TEST(ArrayBuilder, IntegerRangeChecks) {
  ArrayBuilder b(int8());
  Status st = b.AppendInt(300);
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("300"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("int8"), std::string::npos) << st.message();
  EXPECT_EQ(b.length(), 0);  // a failed append changes nothing
  STRATA_ASSERT_OK(b.AppendInt(-128));
  STRATA_ASSERT_OK(b.AppendInt(127));
  EXPECT_TRUE(b.AppendInt(-129).IsInvalid());

  ArrayBuilder u8(uint8());
  EXPECT_TRUE(u8.AppendInt(-1).IsInvalid());
  EXPECT_TRUE(u8.AppendUInt(256).IsInvalid());
  STRATA_ASSERT_OK(u8.AppendInt(255));  // cross-sign append, range-checked

  ArrayBuilder i64(int64());
  Status big = i64.AppendUInt(uint64_t{1} << 63);
  ASSERT_TRUE(big.IsInvalid());
  EXPECT_NE(big.message().find("9223372036854775808"), std::string::npos) << big.message();
  STRATA_ASSERT_OK(i64.AppendUInt((uint64_t{1} << 63) - 1));

  ArrayBuilder d32(date32());
  EXPECT_TRUE(d32.AppendInt(int64_t{1} << 40).IsInvalid());
  auto r = b.Finish();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Array(*r).Value<int8_t>(0), -128);
  EXPECT_EQ(Array(*r).Value<int8_t>(1), 127);
}

TEST(ArrayBuilder, WrongKindIsInvalid) {
  ArrayBuilder i32(int32());
  EXPECT_TRUE(i32.AppendBytes("x").IsInvalid());
  EXPECT_TRUE(i32.AppendDouble(1.0).IsInvalid());
  EXPECT_TRUE(i32.AppendBool(true).IsInvalid());
  EXPECT_TRUE(i32.AppendListEnd().IsInvalid());
  EXPECT_TRUE(i32.AppendValid().IsInvalid());
  ArrayBuilder s(utf8());
  Status st = s.AppendInt(1);
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("utf8"), std::string::npos);
  ArrayBuilder fsb(fixed_size_binary(4));
  Status w = fsb.AppendBytes("abc");
  ASSERT_TRUE(w.IsInvalid());
  EXPECT_NE(w.message().find("expected 4 bytes"), std::string::npos) << w.message();
  ArrayBuilder dec(decimal128(10, 2));
  EXPECT_TRUE(dec.AppendBytes("12345678").IsInvalid());
  EXPECT_EQ(fsb.length(), 0);
  EXPECT_EQ(dec.length(), 0);
}

TEST(ArrayBuilder, ValidityBitmapMaterializedOnFirstNull) {
  ArrayBuilder b(int32());
  for (int i = 0; i < 10; ++i) STRATA_ASSERT_OK(b.AppendInt(i));
  STRATA_ASSERT_OK(b.AppendNull());
  STRATA_ASSERT_OK(b.AppendInt(11));
  STRATA_ASSERT_OK(b.AppendNulls(3));
  auto r = b.Finish();
  ASSERT_TRUE(r.ok());
  const ArrayData& d = **r;
  ASSERT_NE(d.buffers[0], nullptr);
  EXPECT_EQ(d.null_count, 4);
  const uint8_t* bits = d.buffers[0]->data();
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(GetBit(bits, i)) << i;
  EXPECT_FALSE(GetBit(bits, 10));
  EXPECT_TRUE(GetBit(bits, 11));
  for (int i = 12; i < 15; ++i) EXPECT_FALSE(GetBit(bits, i));
  EXPECT_EQ(Array(*r).Value<int32_t>(11), 11);
  EXPECT_EQ(Array(*r).Value<int32_t>(12), 0);  // null slots hold zeros

  ArrayBuilder nn(float64());
  STRATA_ASSERT_OK(nn.AppendDouble(1.5));
  auto r2 = nn.Finish();
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ((*r2)->buffers[0], nullptr);
  EXPECT_EQ((*r2)->null_count, 0);
}

TEST(ArrayBuilder, NestedAppendNullKeepsChildrenAligned) {
  ArrayBuilder fsl(fixed_size_list(field("item", float32()), 4));
  STRATA_ASSERT_OK(fsl.AppendNull());
  EXPECT_EQ(fsl.child(0)->length(), 4);
  ArrayBuilder st(struct_({field("a", int32()), field("b", utf8())}));
  STRATA_ASSERT_OK(st.AppendNulls(2));
  EXPECT_EQ(st.child(0)->length(), 2);
  EXPECT_EQ(st.child(1)->length(), 2);
  auto r = st.Finish();
  ASSERT_TRUE(r.ok());
  STRATA_ASSERT_OK(ValidateArray(**r));
  EXPECT_EQ((*r)->null_count, 2);
}

TEST(ArrayBuilder, NestedLengthMismatchIsInvalid) {
  ArrayBuilder fsl(fixed_size_list(field("item", int32()), 3));
  STRATA_ASSERT_OK(fsl.child(0)->AppendInt(1));
  STRATA_ASSERT_OK(fsl.child(0)->AppendInt(2));
  Status st = fsl.AppendValid();
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("expected 3"), std::string::npos) << st.message();
  EXPECT_EQ(fsl.length(), 0);
  ArrayBuilder s(struct_({field("a", int32()), field("b", int32())}));
  STRATA_ASSERT_OK(s.child(0)->AppendInt(1));
  Status st2 = s.AppendValid();
  ASSERT_TRUE(st2.IsInvalid());
  EXPECT_NE(st2.message().find("'b'"), std::string::npos) << st2.message();
  // Finish reports leftover child values that do not match the rows.
  EXPECT_TRUE(fsl.Finish().status().IsInvalid());
}

TEST(ArrayBuilder, AppendFloatsBulkIntoVectorColumn) {
  const int32_t dim = 4;
  ArrayBuilder b(fixed_size_list(field("item", float32()), dim));
  std::vector<float> v(12);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.25f;
  STRATA_ASSERT_OK(b.AppendFloats(v.data(), 8));
  STRATA_ASSERT_OK(b.AppendNull());
  STRATA_ASSERT_OK(b.AppendFloats(v.data() + 8, 4));
  EXPECT_TRUE(b.AppendFloats(v.data(), 3).IsInvalid());
  EXPECT_EQ(b.length(), 4);
  auto r = b.Finish();
  ASSERT_TRUE(r.ok());
  STRATA_ASSERT_OK(ValidateArray(**r));
  Array a(*r);
  EXPECT_EQ(a.null_count(), 1);
  EXPECT_TRUE(a.IsNull(2));
  EXPECT_TRUE(a.IsValid(3));
  Array child = a.child(0);
  EXPECT_EQ(child.length(), 16);
  EXPECT_FLOAT_EQ(child.Value<float>(5), 1.25f);
  EXPECT_FLOAT_EQ(child.Value<float>(12), 2.0f);  // row 3 = v[8..12)
  EXPECT_FLOAT_EQ(child.Value<float>(15), 2.75f);
}

TEST(ArrayBuilder, AppendFloatsThroughput) {
  const int64_t rows = 20000, dim = 784;
  std::vector<float> v(static_cast<size_t>(rows * dim));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000);
  const double gb = static_cast<double>(v.size() * 4) / 1e9;
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  // Baseline: memcpy of the same bytes into a fresh buffer (page faults included).
  auto t0 = std::chrono::steady_clock::now();
  BufferBuilder base;
  base.Append(v.data(), static_cast<int64_t>(v.size() * 4));
  BufferPtr base_buf = base.Finish();
  auto t1 = std::chrono::steady_clock::now();
  ArrayBuilder grow(fixed_size_list(field("item", float32()), static_cast<int32_t>(dim)));
  for (int64_t r = 0; r < rows; r += 1000) {
    ASSERT_TRUE(grow.AppendFloats(v.data() + r * dim, 1000 * dim).ok());
  }
  auto grown = grow.Finish();
  auto t2 = std::chrono::steady_clock::now();
  ArrayBuilder b(fixed_size_list(field("item", float32()), static_cast<int32_t>(dim)));
  b.Reserve(rows);
  for (int64_t r = 0; r < rows; r += 1000) {
    ASSERT_TRUE(b.AppendFloats(v.data() + r * dim, 1000 * dim).ok());
  }
  auto res = b.Finish();
  auto t3 = std::chrono::steady_clock::now();
  ASSERT_TRUE(res.ok());
  ASSERT_TRUE(grown.ok());
  std::printf(
      "AppendFloats %lld x %lld: reserved %.2f GB/s, growing %.2f GB/s, memcpy baseline "
      "%.2f GB/s\n",
      static_cast<long long>(rows), static_cast<long long>(dim), gb / secs(t2, t3),
      gb / secs(t1, t2), gb / secs(t0, t1));
  Array child = Array(*res).child(0);
  EXPECT_EQ(child.length(), rows * dim);
  EXPECT_EQ(std::memcmp(child.raw_values<float>(), v.data(), v.size() * 4), 0);
  EXPECT_EQ(std::memcmp(Array(*grown).child(0).raw_values<float>(), v.data(), v.size() * 4), 0);
  EXPECT_EQ(std::memcmp(base_buf->data(), v.data(), v.size() * 4), 0);
}

TEST(ArrayBuilder, OffsetsOfStringsAndLists) {
  ArrayBuilder s(utf8());
  STRATA_ASSERT_OK(s.AppendBytes("ab"));
  STRATA_ASSERT_OK(s.AppendNull());
  STRATA_ASSERT_OK(s.AppendBytes(""));
  STRATA_ASSERT_OK(s.AppendBytes("cde"));
  auto r = s.Finish();
  ASSERT_TRUE(r.ok());
  const int32_t* off = (*r)->buffers[1]->data_as<int32_t>();
  EXPECT_EQ(off[0], 0);
  EXPECT_EQ(off[1], 2);
  EXPECT_EQ(off[2], 2);
  EXPECT_EQ(off[3], 2);
  EXPECT_EQ(off[4], 5);
  EXPECT_EQ((*r)->buffers[2]->view(), "abcde");

  ArrayBuilder l(large_list(field("item", int64())));
  STRATA_ASSERT_OK(l.child(0)->AppendInt(7));
  STRATA_ASSERT_OK(l.AppendListEnd());
  STRATA_ASSERT_OK(l.AppendNull());
  STRATA_ASSERT_OK(l.AppendListEnd());  // empty list
  auto lr = l.Finish();
  ASSERT_TRUE(lr.ok());
  STRATA_ASSERT_OK(ValidateArray(**lr));
  const int64_t* loff = (*lr)->buffers[1]->data_as<int64_t>();
  EXPECT_EQ(loff[0], 0);
  EXPECT_EQ(loff[1], 1);
  EXPECT_EQ(loff[2], 1);
  EXPECT_EQ(loff[3], 1);
  EXPECT_EQ((*lr)->null_count, 1);
}

TEST(ArrayBuilder, HalfFloatConversions) {
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalfBits(1e6f), 0x7C00);                   // overflow to +inf
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalfBits(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);  // tie rounds to even
  EXPECT_EQ(FloatToHalfBits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(FloatToHalfBits(std::nanf("")))));
  EXPECT_FLOAT_EQ(HalfBitsToFloat(0x3555), 0.333251953125f);
  for (float f : {0.5f, -3.75f, 1024.0f, 0.0009765625f}) {
    EXPECT_EQ(HalfBitsToFloat(FloatToHalfBits(f)), f);
  }
  ArrayBuilder b(float16());
  STRATA_ASSERT_OK(b.AppendDouble(1.5));
  auto r = b.Finish();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Array(*r).Value<uint16_t>(0), 0x3E00);
}

TEST(RecordBatchBuilder, BuildsAndChecksLengths) {
  auto schema = std::make_shared<const Schema>(
      std::vector<FieldPtr>{field("id", int64(), false), field("name", utf8())});
  RecordBatchBuilder rb(schema);
  STRATA_ASSERT_OK(rb.column(0)->AppendInt(1));
  STRATA_ASSERT_OK(rb.column(0)->AppendInt(2));
  STRATA_ASSERT_OK(rb.column(1)->AppendBytes("x"));
  auto bad = rb.Finish();
  ASSERT_TRUE(bad.status().IsInvalid());
  EXPECT_NE(bad.status().message().find("'name'"), std::string::npos) << bad.status().message();

  STRATA_ASSERT_OK(rb.column(0)->AppendInt(3));
  STRATA_ASSERT_OK(rb.column(1)->AppendNull());
  auto ok = rb.Finish();
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)->num_rows(), 1);
  STRATA_ASSERT_OK((*ok)->Validate());
  EXPECT_EQ((*ok)->column(0).Value<int64_t>(0), 3);
  EXPECT_TRUE((*ok)->column(1).IsNull(0));
}

TEST(MakeArrays, ConvenienceHelpers) {
  auto i = MakeInt64Array({1, std::nullopt, -3});
  STRATA_ASSERT_OK(ValidateArray(*i));
  EXPECT_EQ(Array(i).Value<int64_t>(2), -3);
  EXPECT_TRUE(Array(i).IsNull(1));
  auto f = MakeFloat32Array({0.5f, std::nullopt});
  EXPECT_FLOAT_EQ(Array(f).Value<float>(0), 0.5f);
  EXPECT_EQ(f->null_count, 1);
  auto s = MakeUtf8Array({"héllo", std::nullopt, ""});
  EXPECT_EQ(Array(s).GetView(0), "héllo");
  EXPECT_EQ(Array(s).GetView(2), "");
  EXPECT_EQ(s->null_count, 1);
  auto v = MakeVectorArray({1, 2, 3, 4, 5, 6}, 3);
  STRATA_ASSERT_OK(ValidateArray(*v));
  EXPECT_EQ(v->length, 2);
  EXPECT_EQ(v->type->ToString(), "fixed_size_list<item: float32>[3]");
  EXPECT_FLOAT_EQ(Array(v).child(0).Value<float>(4), 5.0f);
}

}  // namespace
}  // namespace strata::arrow
