#include "arrow/type.h"

#include <gtest/gtest.h>

namespace strata::arrow {
namespace {

struct TypeFacts {
  DataTypePtr type;
  const char* str;
  int bit_width;
  int num_buffers;
  bool fixed_width;
};

TEST(DataType, FactsOfEveryType) {
  auto item = field("item", float32());
  const std::vector<TypeFacts> facts = {
      {null(), "null", 0, 0, true},
      {boolean(), "bool", 1, 2, true},
      {int8(), "int8", 8, 2, true},
      {int16(), "int16", 16, 2, true},
      {int32(), "int32", 32, 2, true},
      {int64(), "int64", 64, 2, true},
      {uint8(), "uint8", 8, 2, true},
      {uint16(), "uint16", 16, 2, true},
      {uint32(), "uint32", 32, 2, true},
      {uint64(), "uint64", 64, 2, true},
      {float16(), "float16", 16, 2, true},
      {float32(), "float32", 32, 2, true},
      {float64(), "float64", 64, 2, true},
      {utf8(), "utf8", 0, 3, false},
      {large_utf8(), "large_utf8", 0, 3, false},
      {binary(), "binary", 0, 3, false},
      {large_binary(), "large_binary", 0, 3, false},
      {fixed_size_binary(5), "fixed_size_binary[5]", 40, 2, true},
      {date32(), "date32", 32, 2, true},
      {date64(), "date64", 64, 2, true},
      {time32(TimeUnit::kMilli), "time32[ms]", 32, 2, true},
      {time64(TimeUnit::kNano), "time64[ns]", 64, 2, true},
      {timestamp(TimeUnit::kMicro, "UTC"), "timestamp[us, UTC]", 64, 2, true},
      {timestamp(TimeUnit::kSecond), "timestamp[s]", 64, 2, true},
      {duration(TimeUnit::kMicro), "duration[us]", 64, 2, true},
      {decimal128(38, 9), "decimal128(38, 9)", 128, 2, true},
      {list(item), "list<item: float32>", 0, 2, false},
      {large_list(item), "large_list<item: float32>", 0, 2, false},
      {fixed_size_list(item, 784), "fixed_size_list<item: float32>[784]", 0, 1, false},
      {struct_({field("a", int32(), false), field("b", utf8())}),
       "struct<a: int32 not null, b: utf8>", 0, 1, false},
  };
  for (const auto& f : facts) {
    EXPECT_EQ(f.type->ToString(), f.str);
    EXPECT_EQ(f.type->bit_width(), f.bit_width) << f.str;
    EXPECT_EQ(f.type->num_buffers(), f.num_buffers) << f.str;
    EXPECT_EQ(f.type->is_fixed_width(), f.fixed_width) << f.str;
    EXPECT_TRUE(f.type->Equals(*f.type));
  }
  // Every pair of distinct entries differs.
  for (size_t i = 0; i < facts.size(); ++i) {
    for (size_t j = 0; j < facts.size(); ++j) {
      if (i != j) {
        EXPECT_FALSE(facts[i].type->Equals(*facts[j].type))
            << facts[i].str << " vs " << facts[j].str;
      }
    }
  }
}

TEST(DataType, Predicates) {
  EXPECT_TRUE(int8()->is_integer());
  EXPECT_TRUE(int8()->is_signed_integer());
  EXPECT_FALSE(uint64()->is_signed_integer());
  EXPECT_TRUE(uint64()->is_numeric());
  EXPECT_FALSE(date32()->is_integer());
  EXPECT_TRUE(float16()->is_floating());
  EXPECT_FALSE(decimal128(5, 2)->is_floating());
  EXPECT_TRUE(large_binary()->is_binary_like());
  EXPECT_FALSE(fixed_size_binary(3)->is_binary_like());
  EXPECT_TRUE(fixed_size_list(field("item", int8()), 2)->is_list_like());
  EXPECT_FALSE(struct_({})->is_list_like());
  EXPECT_EQ(list(field("x", int16()))->value_type()->id(), TypeId::kInt16);
  EXPECT_EQ(fixed_size_list(field("item", int8()), 7)->list_size(), 7);
  EXPECT_EQ(timestamp(TimeUnit::kNano, "Asia/Tokyo")->timezone(), "Asia/Tokyo");
  EXPECT_EQ(decimal128(12, 3)->precision(), 12);
  EXPECT_EQ(decimal128(12, 3)->scale(), 3);
  EXPECT_STREQ(TimeUnitName(TimeUnit::kMicro), "us");
}

TEST(DataType, EqualityLooksAtParametersAndChildren) {
  EXPECT_FALSE(timestamp(TimeUnit::kMicro, "UTC")->Equals(*timestamp(TimeUnit::kMicro)));
  EXPECT_FALSE(timestamp(TimeUnit::kMicro)->Equals(*timestamp(TimeUnit::kNano)));
  EXPECT_FALSE(decimal128(10, 2)->Equals(*decimal128(10, 3)));
  EXPECT_FALSE(fixed_size_binary(4)->Equals(*fixed_size_binary(8)));
  auto a = fixed_size_list(field("item", float32(), true), 4);
  EXPECT_TRUE(a->Equals(*fixed_size_list(field("item", float32(), true), 4)));
  EXPECT_FALSE(a->Equals(*fixed_size_list(field("item", float32(), false), 4)));
  EXPECT_FALSE(a->Equals(*fixed_size_list(field("element", float32(), true), 4)));
  EXPECT_FALSE(a->Equals(*fixed_size_list(field("item", float32(), true), 5)));
  EXPECT_FALSE(a->Equals(*list(field("item", float32(), true))));
  KeyValueMetadata md;
  md.Set("k", "v");
  EXPECT_FALSE(struct_({field("a", int32(), true, md)})->Equals(*struct_({field("a", int32())})));
}

TEST(KeyValueMetadata, SetGetReplace) {
  KeyValueMetadata md;
  EXPECT_TRUE(md.empty());
  md.Set("a", "1");
  md.Set("b", "2");
  md.Set("a", "3");
  EXPECT_EQ(md.size(), 2u);
  ASSERT_NE(md.Get("a"), nullptr);
  EXPECT_EQ(*md.Get("a"), "3");
  EXPECT_EQ(md.Get("zz"), nullptr);
  EXPECT_EQ(md.pairs()[0].first, "a");  // insertion order kept
  EXPECT_EQ(md.pairs()[1].first, "b");
}

KeyValueMetadata OwnerMetadata() {
  KeyValueMetadata md;
  md.Set("owner", "x");
  return md;
}

TEST(Schema, LookupAndEquality) {
  Schema s({field("id", int64(), false),
            field("vector", fixed_size_list(field("item", float32()), 3)), field("id", utf8())},
           OwnerMetadata());
  EXPECT_EQ(s.num_fields(), 3);
  EXPECT_EQ(s.GetFieldIndex("id"), 0);  // first match
  EXPECT_EQ(s.GetFieldIndex("vector"), 1);
  EXPECT_EQ(s.GetFieldIndex("Vector"), -1);  // case-sensitive
  EXPECT_EQ(s.ToString(),
            "id: int64 not null\nvector: fixed_size_list<item: float32>[3]\nid: utf8");
  Schema t({field("id", int64(), false),
            field("vector", fixed_size_list(field("item", float32()), 3)), field("id", utf8())});
  EXPECT_TRUE(s.Equals(t));
  EXPECT_FALSE(s.Equals(t, /*check_metadata=*/true));
  Schema u({field("id", int64(), true)});
  EXPECT_FALSE(s.Equals(u));
}

}  // namespace
}  // namespace strata::arrow
