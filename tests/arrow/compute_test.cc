#include <chrono>
#include <cstdio>
#include <random>

#include <gtest/gtest.h>

#include "arrow/array.h"
#include "arrow/builder.h"
#include "arrow/compute/concatenate.h"
#include "arrow/compute/filter.h"
#include "arrow/compute/gather.h"
#include "arrow/compute/take.h"
#include "type_cases.h"

namespace strata::arrow::compute {
namespace {

using testing::AllTypeCases;
using testing::BuildCase;
using testing::Expected;
using testing::Repr;
using testing::TypeCase;

void ExpectFresh(const ArrayData& d) {
  for (const auto& b : d.buffers) {
    if (b) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % 64, 0u);
    }
  }
  EXPECT_EQ(d.offset, 0);
}

class EveryTypeCompute : public ::testing::TestWithParam<TypeCase> {};

TEST_P(EveryTypeCompute, TakeFromSlice) {
  const TypeCase& c = GetParam();
  for (bool with_nulls : {false, true}) {
    ArrayDataPtr full = BuildCase(c, 40, with_nulls);
    const int64_t off = 3;
    Array sliced = Array(full).Slice(off, 30);
    std::vector<int64_t> idx = {29, 0, 5, 5, 6, 7, 2, 10, 11, 12, 13, 1, 29, 17};
    auto r = Take(*sliced.data(), idx.data(), static_cast<int64_t>(idx.size()));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    STRATA_ASSERT_OK(ValidateArray(**r));
    ExpectFresh(**r);
    ASSERT_EQ((*r)->length, static_cast<int64_t>(idx.size()));
    Array out(*r);
    int64_t nulls = 0;
    for (size_t k = 0; k < idx.size(); ++k) {
      EXPECT_EQ(Repr(out, static_cast<int64_t>(k)), Expected(c, off + idx[k], with_nulls))
          << c.name << " k=" << k;
      nulls += testing::RowIsNull(c, off + idx[k], with_nulls);
    }
    EXPECT_EQ((*r)->null_count, nulls);
    if (c.type->id() != TypeId::kNull) {
      EXPECT_EQ((*r)->buffers[0] != nullptr, nulls > 0);
    }
    // Empty take.
    auto e = Take(*sliced.data(), idx.data(), 0);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ((*e)->length, 0);
    STRATA_ASSERT_OK(ValidateArray(**e));
  }
}

TEST_P(EveryTypeCompute, TakeOutOfRangeIsInvalid) {
  const TypeCase& c = GetParam();
  ArrayDataPtr full = BuildCase(c, 10, true);
  Array sliced = Array(full).Slice(2, 5);
  std::vector<int64_t> idx = {0, 4, 5};
  auto r = Take(*sliced.data(), idx.data(), 3);
  ASSERT_TRUE(r.status().IsInvalid());
  EXPECT_NE(r.status().message().find("index 5 at position 2"), std::string::npos)
      << r.status().message();
  std::vector<int64_t> neg = {-1};
  EXPECT_TRUE(Take(*full, neg.data(), 1).status().IsInvalid());
}

TEST_P(EveryTypeCompute, FilterWithBitOffset) {
  const TypeCase& c = GetParam();
  for (bool with_nulls : {false, true}) {
    ArrayDataPtr full = BuildCase(c, 50, with_nulls);
    const int64_t off = 7;
    Array sliced = Array(full).Slice(off, 40);
    // Selection of 40 bits stored at bit offset 5: keep rows where k % 3 != 1 or k in [16, 32).
    std::vector<uint8_t> sel(8, 0);
    std::vector<int64_t> kept;
    for (int64_t k = 0; k < 40; ++k) {
      if (k % 3 != 1 || (k >= 16 && k < 32)) {
        SetBit(sel.data(), 5 + k);
        kept.push_back(k);
      }
    }
    auto r = Filter(*sliced.data(), sel.data(), 5);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    STRATA_ASSERT_OK(ValidateArray(**r));
    ExpectFresh(**r);
    ASSERT_EQ((*r)->length, static_cast<int64_t>(kept.size()));
    EXPECT_EQ(CountSelected(sel.data(), 5, 40), static_cast<int64_t>(kept.size()));
    Array out(*r);
    for (size_t k = 0; k < kept.size(); ++k) {
      EXPECT_EQ(Repr(out, static_cast<int64_t>(k)), Expected(c, off + kept[k], with_nulls))
          << c.name << " k=" << k;
    }
    // All-zero and all-one selections.
    std::vector<uint8_t> none(8, 0), all(8, 0xff);
    auto rn = Filter(*sliced.data(), none.data(), 3);
    ASSERT_TRUE(rn.ok());
    EXPECT_EQ((*rn)->length, 0);
    STRATA_ASSERT_OK(ValidateArray(**rn));
    auto ra = Filter(*sliced.data(), all.data(), 3);
    ASSERT_TRUE(ra.ok());
    ASSERT_EQ((*ra)->length, 40);
    for (int64_t k = 0; k < 40; ++k) {
      EXPECT_EQ(Repr(Array(*ra), k), Expected(c, off + k, with_nulls));
    }
  }
}

TEST_P(EveryTypeCompute, ConcatenateSlices) {
  const TypeCase& c = GetParam();
  for (bool with_nulls : {false, true}) {
    ArrayDataPtr a = BuildCase(c, 30, with_nulls);
    ArrayDataPtr b = BuildCase(c, 30, !with_nulls);
    Array aa(a), bb(b);
    // Pieces at odd bit offsets, an empty piece and a whole array.
    std::vector<ArrayDataPtr> parts = {aa.Slice(1, 7).data(), aa.Slice(9, 0).data(),
                                       bb.Slice(3, 20).data(), a, aa.Slice(29, 1).data()};
    auto r = Concatenate(parts);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    STRATA_ASSERT_OK(ValidateArray(**r));
    ExpectFresh(**r);
    std::vector<std::string> expect;
    for (int64_t i = 1; i < 8; ++i) expect.push_back(Expected(c, i, with_nulls));
    for (int64_t i = 3; i < 23; ++i) expect.push_back(Expected(c, i, !with_nulls));
    for (int64_t i = 0; i < 30; ++i) expect.push_back(Expected(c, i, with_nulls));
    expect.push_back(Expected(c, 29, with_nulls));
    ASSERT_EQ((*r)->length, static_cast<int64_t>(expect.size()));
    Array out(*r);
    int64_t nulls = 0;
    for (size_t k = 0; k < expect.size(); ++k) {
      EXPECT_EQ(Repr(out, static_cast<int64_t>(k)), expect[k]) << c.name << " k=" << k;
      nulls += expect[k] == "null";
    }
    EXPECT_EQ((*r)->null_count, nulls);
    // A slice of the result reads the same values.
    Array s = out.Slice(5, 10);
    for (int64_t k = 0; k < 10; ++k) EXPECT_EQ(Repr(s, k), expect[static_cast<size_t>(5 + k)]);
    // Take and filter compose on the concatenated result.
    std::vector<int64_t> idx = {57, 0, 30};
    auto t = Take(*s.data(), idx.data(), 0);
    ASSERT_TRUE(t.ok());
    auto t2 = Take(**r, idx.data(), 3);
    ASSERT_TRUE(t2.ok());
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(Repr(Array(*t2), k), expect[static_cast<size_t>(idx[static_cast<size_t>(k)])]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Arrow, EveryTypeCompute, ::testing::ValuesIn(AllTypeCases()),
                         testing::CaseName);

TEST(Concatenate, Errors) {
  EXPECT_TRUE(Concatenate({}).status().IsInvalid());
  auto r = Concatenate({MakeInt64Array({1}), MakeFloat32Array({1.0f})});
  ASSERT_TRUE(r.status().IsInvalid());
  EXPECT_NE(r.status().message().find("float32"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("int64"), std::string::npos);
  EXPECT_TRUE(Concatenate({MakeInt64Array({1}), nullptr}).status().IsInvalid());
}

// A list whose child array is itself a slice (child offset != 0), and a struct whose children
// carry their own offsets: gather must add the child's offset to the list offsets.
TEST(Gather, ChildrenWithOwnOffsets) {
  auto values = MakeInt64Array({100, 101, 102, 103, 104, 105, 106});
  ArrayDataPtr child = Array(values).Slice(2, 5).data();  // 102..106
  auto list_data = std::make_shared<ArrayData>();
  list_data->type = list(field("item", int64()));
  list_data->length = 3;
  std::vector<int32_t> offs = {0, 2, 2, 5};
  list_data->buffers = {nullptr, Buffer::CopyFrom(offs.data(), 16)};
  list_data->children = {child};
  STRATA_ASSERT_OK(ValidateArray(*list_data));
  std::vector<int64_t> idx = {2, 0};
  auto r = Take(*list_data, idx.data(), 2);
  ASSERT_TRUE(r.ok());
  STRATA_ASSERT_OK(ValidateArray(**r));
  EXPECT_EQ(Repr(Array(*r), 0), "[104, 105, 106]");
  EXPECT_EQ(Repr(Array(*r), 1), "[102, 103]");

  auto st = std::make_shared<ArrayData>();
  st->type = struct_({field("a", int64()), field("s", utf8())});
  st->length = 3;
  st->offset = 1;
  st->buffers = {nullptr};
  st->children = {Array(values).Slice(3, 4).data(),
                  Array(MakeUtf8Array({"p", "q", "r", "s", "t"})).Slice(1, 4).data()};
  STRATA_ASSERT_OK(ValidateArray(*st));
  EXPECT_EQ(Repr(Array(st), 0), "{a: 104, s: 'r'}");
  auto cat = Concatenate({st, st});
  ASSERT_TRUE(cat.ok());
  STRATA_ASSERT_OK(ValidateArray(**cat));
  EXPECT_EQ(Repr(Array(*cat), 2), "{a: 106, s: 't'}");
  EXPECT_EQ(Repr(Array(*cat), 3), "{a: 104, s: 'r'}");
}

TEST(CopyBitmap, AllPhases) {
  std::mt19937 rng(7);
  std::vector<uint8_t> src(32);
  for (auto& b : src) b = static_cast<uint8_t>(rng());
  for (int so = 0; so < 16; ++so) {
    for (int dof = 0; dof < 16; ++dof) {
      for (int n : {0, 1, 7, 8, 9, 63, 100}) {
        std::vector<uint8_t> dst(32, 0xA5);
        CopyBitmap(src.data(), so, dst.data(), dof, n);
        for (int i = 0; i < n; ++i) {
          ASSERT_EQ(GetBit(dst.data(), dof + i), GetBit(src.data(), so + i));
        }
        // Bits around the range are kept.
        for (int i = 0; i < dof; ++i)
          ASSERT_EQ(GetBit(dst.data(), i), ((0xA5 >> (i & 7)) & 1) != 0);
        for (int i = dof + n; i < 256; ++i) {
          ASSERT_EQ(GetBit(dst.data(), i), ((0xA5 >> (i & 7)) & 1) != 0);
        }
      }
    }
  }
}

std::shared_ptr<RecordBatch> MakeBatch(int64_t n, int64_t base) {
  auto schema = std::make_shared<const Schema>(
      std::vector<FieldPtr>{field("id", int64(), false), field("name", utf8()),
                            field("vector", fixed_size_list(field("item", float32()), 2))});
  RecordBatchBuilder rb(schema);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_TRUE(rb.column(0)->AppendInt(base + i).ok());
    if (i % 3 == 1) {
      EXPECT_TRUE(rb.column(1)->AppendNull().ok());
    } else {
      EXPECT_TRUE(rb.column(1)->AppendBytes("n" + std::to_string(base + i)).ok());
    }
    float v[2] = {static_cast<float>(base + i), -static_cast<float>(base + i)};
    EXPECT_TRUE(rb.column(2)->AppendFloats(v, 2).ok());
  }
  return std::move(rb.Finish()).value();
}

TEST(BatchHelpers, TakeFilterConcatenate) {
  auto b1 = MakeBatch(10, 0);
  auto b2 = MakeBatch(5, 100);
  auto cat = ConcatenateBatches({b1, b2->Slice(1, 4)});
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  STRATA_ASSERT_OK((*cat)->Validate());
  ASSERT_EQ((*cat)->num_rows(), 14);
  EXPECT_EQ((*cat)->column(0).Value<int64_t>(10), 101);
  EXPECT_EQ(Repr((*cat)->column(2), 13), "[104, -104]");
  EXPECT_TRUE((*cat)->column(1).IsNull(10));  // row 1 of b2 (i % 3 == 1)

  std::vector<int64_t> idx = {13, 0, 4};
  auto t = TakeBatch(**cat, idx.data(), 3);
  ASSERT_TRUE(t.ok());
  STRATA_ASSERT_OK((*t)->Validate());
  EXPECT_EQ((*t)->num_rows(), 3);
  EXPECT_EQ((*t)->column(0).Value<int64_t>(0), 104);
  EXPECT_EQ(Repr((*t)->column(1), 1), "'n0'");
  EXPECT_TRUE((*t)->column(1).IsNull(2));
  std::vector<int64_t> bad = {14};
  auto tb = TakeBatch(**cat, bad.data(), 1);
  EXPECT_TRUE(tb.status().IsInvalid());

  std::vector<uint8_t> sel(2, 0);
  for (int i : {1, 2, 11}) SetBit(sel.data(), i);
  auto f = FilterBatch(**cat, sel.data(), 0);
  ASSERT_TRUE(f.ok());
  STRATA_ASSERT_OK((*f)->Validate());
  ASSERT_EQ((*f)->num_rows(), 3);
  EXPECT_EQ((*f)->column(0).Value<int64_t>(2), 102);
  EXPECT_EQ(Repr((*f)->column(2), 0), "[1, -1]");

  auto other = std::make_shared<RecordBatch>(
      std::make_shared<const Schema>(std::vector<FieldPtr>{field("id", int32())}), 1,
      std::vector<ArrayDataPtr>{MakeInt64Array({1})});
  auto mismatch = ConcatenateBatches({b1, other});
  ASSERT_TRUE(mismatch.status().IsInvalid());
  EXPECT_NE(mismatch.status().message().find("batch 1"), std::string::npos);
  EXPECT_TRUE(ConcatenateBatches({}).status().IsInvalid());
}

TEST(ComputePerf, TakeAndConcatenateVectors) {
  const int64_t rows = 20000, dim = 784;
  std::vector<float> v(static_cast<size_t>(rows * dim));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 977);
  auto vec = MakeVectorArray(v, static_cast<int32_t>(dim));
  std::vector<int64_t> idx(5000);
  std::mt19937_64 rng(1);
  for (auto& i : idx) i = static_cast<int64_t>(rng() % rows);
  auto t0 = std::chrono::steady_clock::now();
  auto r = Take(*vec, idx.data(), static_cast<int64_t>(idx.size()));
  auto t1 = std::chrono::steady_clock::now();
  ASSERT_TRUE(r.ok());
  auto c = Concatenate({vec, vec});
  auto t2 = std::chrono::steady_clock::now();
  ASSERT_TRUE(c.ok());
  const double take_gb = static_cast<double>(idx.size() * dim * 4) / 1e9;
  const double cat_gb = static_cast<double>(2 * rows * dim * 4) / 1e9;
  std::printf("Take 5000 x 784-d: %.2f GB/s; Concatenate 2 x 20000 x 784-d: %.2f GB/s\n",
              take_gb / std::chrono::duration<double>(t1 - t0).count(),
              cat_gb / std::chrono::duration<double>(t2 - t1).count());
  Array out(*r);
  for (size_t k = 0; k < idx.size(); k += 997) {
    const float* row = out.child(0).raw_values<float>() + k * dim;
    EXPECT_EQ(std::memcmp(row, v.data() + idx[k] * dim, dim * 4), 0);
  }
  EXPECT_EQ(
      std::memcmp(Array(*c).child(0).raw_values<float>() + rows * dim, v.data(), v.size() * 4), 0);
}

}  // namespace
}  // namespace strata::arrow::compute
