// ValidateArray: the layout guard run on every array decoded from untrusted input.
#include <gtest/gtest.h>

#include "arrow/array.h"
#include "arrow/builder.h"

namespace strata::arrow {
namespace {

template <typename T>
BufferPtr Buf(std::vector<T> v) {
  return Buffer::CopyFrom(v.data(), static_cast<int64_t>(v.size() * sizeof(T)));
}

ArrayDataPtr Utf8(std::vector<int32_t> offsets, std::string data, int64_t length) {
  auto a = std::make_shared<ArrayData>();
  a->type = utf8();
  a->length = length;
  a->buffers = {nullptr, Buf(offsets),
                Buffer::CopyFrom(data.data(), static_cast<int64_t>(data.size()))};
  return a;
}

TEST(ValidateArray, AcceptsWellFormedArrays) {
  EXPECT_TRUE(ValidateArray(*Utf8({0, 1, 3}, "abc", 2)).ok());
  EXPECT_TRUE(ValidateArray(*MakeInt64Array({1, std::nullopt, 3})).ok());
  EXPECT_TRUE(ValidateArray(*MakeVectorArray({1, 2, 3, 4}, 2)).ok());
}

TEST(ValidateArray, RejectsBadOffsets) {
  auto dec = ValidateArray(*Utf8({0, 3, 1}, "abc", 2));
  ASSERT_FALSE(dec.ok());
  EXPECT_NE(dec.message().find("decrease"), std::string::npos) << dec.message();
  auto past = ValidateArray(*Utf8({0, 1, 9}, "abc", 2));
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.message().find("data buffer"), std::string::npos) << past.message();
  auto neg = ValidateArray(*Utf8({-1, 1, 2}, "abc", 2));
  EXPECT_FALSE(neg.ok());
  auto short_offsets = ValidateArray(*Utf8({0, 1}, "abc", 2));
  ASSERT_FALSE(short_offsets.ok());
  EXPECT_NE(short_offsets.message().find("offsets"), std::string::npos);
}

TEST(ValidateArray, RejectsShortBuffersAndWrongCounts) {
  auto a = std::make_shared<ArrayData>();
  a->type = int64();
  a->length = 3;
  a->buffers = {nullptr, Buf<int64_t>({1, 2})};
  auto st = ValidateArray(*a);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("values buffer has 16 bytes; 24"), std::string::npos) << st.message();
  a->buffers = {nullptr, Buf<int64_t>({1, 2, 3})};
  EXPECT_TRUE(ValidateArray(*a).ok());
  a->offset = 1;  // offset counts against the buffer size too
  EXPECT_FALSE(ValidateArray(*a).ok());
  a->offset = 0;
  a->buffers.push_back(nullptr);
  EXPECT_FALSE(ValidateArray(*a).ok());
  a->buffers.pop_back();
  a->length = -1;
  EXPECT_FALSE(ValidateArray(*a).ok());
}

TEST(ValidateArray, NullCountMustMatchBitmap) {
  auto a = MakeInt64Array({1, std::nullopt, 3});
  ASSERT_EQ(a->null_count, 1);
  a->null_count = 0;
  EXPECT_FALSE(ValidateArray(*a).ok());
  a->null_count = 1;
  EXPECT_TRUE(ValidateArray(*a).ok());
  auto b = MakeInt64Array({1, 2});
  b->null_count = 1;  // no bitmap
  EXPECT_FALSE(ValidateArray(*b).ok());
}

TEST(ValidateArray, ChildLengths) {
  auto v = MakeVectorArray({1, 2, 3, 4, 5, 6}, 3);  // 2 rows
  ASSERT_TRUE(ValidateArray(*v).ok());
  v->length = 3;  // needs 9 child values, has 6
  auto st = ValidateArray(*v);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("child"), std::string::npos);

  auto s = std::make_shared<ArrayData>();
  s->type = struct_({field("x", int64())});
  s->length = 4;
  s->buffers = {nullptr};
  s->children = {MakeInt64Array({1, 2, 3})};
  auto ss = ValidateArray(*s);
  ASSERT_FALSE(ss.ok());
  EXPECT_NE(ss.message().find("'x'"), std::string::npos);
  s->length = 3;
  EXPECT_TRUE(ValidateArray(*s).ok());
  s->children = {MakeFloat32Array({1, 2, 3})};  // wrong child type
  EXPECT_FALSE(ValidateArray(*s).ok());

  auto l = std::make_shared<ArrayData>();
  l->type = list(field("item", int64()));
  l->length = 2;
  l->buffers = {nullptr, Buf<int32_t>({0, 2, 5})};
  l->children = {MakeInt64Array({1, 2, 3, 4})};
  auto ls = ValidateArray(*l);
  ASSERT_FALSE(ls.ok());
  EXPECT_NE(ls.message().find("reach 5"), std::string::npos) << ls.message();
}

TEST(ValidateArray, NestingDepthLimited) {
  // A chain of 70 structs, each with one child.
  ArrayDataPtr a = MakeInt64Array({1});
  for (int i = 0; i < 70; ++i) {
    auto s = std::make_shared<ArrayData>();
    s->type = struct_({field("c", a->type)});
    s->length = 1;
    s->buffers = {nullptr};
    s->children = {a};
    a = s;
  }
  auto st = ValidateArray(*a);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("nesting"), std::string::npos) << st.message();
}

TEST(ValidateArray, NullType) {
  auto a = std::make_shared<ArrayData>();
  a->type = null();
  a->length = 3;
  a->null_count = 3;
  EXPECT_TRUE(ValidateArray(*a).ok());
  a->null_count = 2;
  EXPECT_FALSE(ValidateArray(*a).ok());
}

}  // namespace
}  // namespace strata::arrow
