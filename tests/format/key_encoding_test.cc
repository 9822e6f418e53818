#include "format/key_encoding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "arrow/builder.h"

namespace strata::format {
namespace {

std::string Hex(const std::string& s) { return KeyToDebugString(s, 1000); }

int Sign(int c) { return (c > 0) - (c < 0); }

TEST(KeyEncoding, ComponentBytes) {
  auto enc = [](auto fn) {
    std::string k;
    fn(&k);
    return Hex(k);
  };
  EXPECT_EQ(enc([](std::string* k) { AppendSignedComponent(5, 8, k); }), "018000000000000005");
  EXPECT_EQ(enc([](std::string* k) { AppendSignedComponent(-1, 8, k); }), "017fffffffffffffff");
  EXPECT_EQ(enc([](std::string* k) { AppendSignedComponent(-128, 1, k); }), "0100");
  EXPECT_EQ(enc([](std::string* k) { AppendSignedComponent(127, 1, k); }), "01ff");
  EXPECT_EQ(enc([](std::string* k) { AppendUnsignedComponent(258, 2, k); }), "010102");
  EXPECT_EQ(enc([](std::string* k) { AppendNullComponent(k); }), "00");
  EXPECT_EQ(enc([](std::string* k) { AppendBoolComponent(true, k); }), "0101");
  EXPECT_EQ(enc([](std::string* k) { AppendBytesComponent(std::string("a\0b", 3), k); }),
            "01610001620000");
  EXPECT_EQ(enc([](std::string* k) { AppendBytesComponent("", k); }), "010000");
  EXPECT_EQ(enc([](std::string* k) { AppendFloat64Component(1.0, k); }), "01bff0000000000000");
  EXPECT_EQ(enc([](std::string* k) { AppendFloat64Component(-1.0, k); }), "01400fffffffffffff");
  EXPECT_EQ(enc([](std::string* k) { AppendFloat32Component(0.0f, k); }), "0180000000");
  // -0 and +0 share a key; every NaN shares one key, above +inf.
  EXPECT_EQ(enc([](std::string* k) { AppendFloat32Component(-0.0f, k); }), "0180000000");
  std::string nan1, nan2, inf;
  AppendFloat64Component(std::nan("1"), &nan1);
  AppendFloat64Component(-std::nan("2"), &nan2);
  AppendFloat64Component(std::numeric_limits<double>::infinity(), &inf);
  EXPECT_EQ(nan1, nan2);
  EXPECT_GT(nan1, inf);
  uint8_t dec[16] = {0};
  dec[0] = 1;  // decimal 1
  EXPECT_EQ(enc([&](std::string* k) { AppendDecimal128Component(dec, k); }),
            "0180000000000000000000000000000001");
}

// A batch of (i32 nullable, utf8 nullable, f64 nullable, u64, binary) rows from random values.
struct Row {
  std::optional<int32_t> a;
  std::optional<std::string> s;
  std::optional<double> d;
  uint64_t u;
};

// Reference order: columns in order, null first.
template <typename T>
int CompareOpt(const std::optional<T>& x, const std::optional<T>& y) {
  if (!x || !y) return (x.has_value() ? 1 : 0) - (y.has_value() ? 1 : 0);
  return *x < *y ? -1 : (*y < *x ? 1 : 0);
}
int CompareRows(const Row& x, const Row& y) {
  if (int c = CompareOpt(x.a, y.a)) return c;
  if (int c = CompareOpt(x.s, y.s)) return c;
  if (int c = CompareOpt(x.d, y.d)) return c;
  return x.u < y.u ? -1 : (y.u < x.u ? 1 : 0);
}

TEST(KeyEncoding, CompositeKeysSortLikeTheirTuples) {
  auto schema = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("a", arrow::int32()), arrow::field("s", arrow::utf8()),
      arrow::field("d", arrow::float64()), arrow::field("u", arrow::uint64(), false),
      arrow::field("payload", arrow::float32())});
  std::mt19937_64 rng(42);
  std::vector<Row> rows;
  const std::vector<std::string> words = {"",
                                          "a",
                                          "a\0",
                                          "a\0b",
                                          "ab",
                                          "b",
                                          "\x01",
                                          "\xff",
                                          std::string("a\0\0", 3),
                                          std::string("\0", 1)};
  for (int i = 0; i < 400; ++i) {
    Row r;
    if (rng() % 5) r.a = static_cast<int32_t>(rng() % 7) - 3;
    if (rng() % 5) r.s = words[rng() % words.size()];
    const double ds[] = {
        -1e300, -2.5, -0.5, 0.0, 1e-300, 0.5, 3.0, 1e300, std::numeric_limits<double>::infinity()};
    if (rng() % 5) r.d = ds[rng() % std::size(ds)];
    r.u = (rng() % 3 == 0) ? std::numeric_limits<uint64_t>::max() - rng() % 2 : rng() % 4;
    rows.push_back(r);
  }
  arrow::RecordBatchBuilder b(schema);
  for (const auto& r : rows) {
    ASSERT_TRUE((r.a ? b.column(0)->AppendInt(*r.a) : b.column(0)->AppendNull()).ok());
    ASSERT_TRUE((r.s ? b.column(1)->AppendBytes(*r.s) : b.column(1)->AppendNull()).ok());
    ASSERT_TRUE((r.d ? b.column(2)->AppendDouble(*r.d) : b.column(2)->AppendNull()).ok());
    ASSERT_TRUE(b.column(3)->AppendUInt(r.u).ok());
    ASSERT_TRUE(b.column(4)->AppendDouble(1.0).ok());
  }
  auto batch = b.Finish();
  ASSERT_TRUE(batch.ok());
  auto enc = KeyEncoder::Make(*schema, {0, 1, 2, 3});
  ASSERT_TRUE(enc.ok());
  auto keys = enc->EncodeAll(**batch);
  ASSERT_EQ(keys.size(), rows.size());
  int equal_pairs = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t j = 0; j < rows.size(); ++j) {
      int want = CompareRows(rows[i], rows[j]);
      int got = Sign(keys[i].compare(keys[j]));
      ASSERT_EQ(got, want) << "rows " << i << " and " << j;
      if (i != j && want == 0) ++equal_pairs;
    }
  }
  EXPECT_GT(equal_pairs, 0);  // duplicates exist and share a key
  auto one = EncodeKey(**batch, {0, 1, 2, 3}, 7);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, keys[7]);
}

TEST(KeyEncoding, SignedIntsOfEveryWidthAndSlicedArrays) {
  std::vector<std::optional<int64_t>> vals = {std::nullopt,
                                              std::numeric_limits<int64_t>::min(),
                                              -5,
                                              -1,
                                              0,
                                              1,
                                              5,
                                              std::numeric_limits<int64_t>::max()};
  auto arr = arrow::MakeInt64Array(vals);
  auto schema = std::make_shared<arrow::Schema>(
      std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64())});
  arrow::RecordBatch batch(schema, static_cast<int64_t>(vals.size()), {arr});
  auto sliced = batch.Slice(3, 4);  // -1, 0, 1, 5
  auto enc = KeyEncoder::Make(*schema, {0});
  ASSERT_TRUE(enc.ok());
  auto keys = enc->EncodeAll(batch);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end());
  auto skeys = enc->EncodeAll(*sliced);
  ASSERT_EQ(skeys.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(skeys[i], keys[i + 3]);
}

TEST(KeyEncoding, Errors) {
  auto schema = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64()),
      arrow::field("vec", arrow::fixed_size_list(arrow::field("item", arrow::float32()), 2))});
  EXPECT_TRUE(KeyEncoder::Make(*schema, {}).status().IsInvalid());
  EXPECT_TRUE(KeyEncoder::Make(*schema, {2}).status().IsInvalid());
  auto st = KeyEncoder::Make(*schema, {1}).status();
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("'vec'"), std::string::npos);
  arrow::RecordBatch batch(schema, 1,
                           {arrow::MakeInt64Array({1}), arrow::MakeVectorArray({1, 2}, 2)});
  EXPECT_TRUE(EncodeKey(batch, {0}, 1).status().IsInvalid());
  EXPECT_TRUE(EncodeKey(batch, {0}, 0).ok());
}

}  // namespace
}  // namespace strata::format
