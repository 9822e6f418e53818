#include "server/list_literal.h"

#include <gtest/gtest.h>

namespace strata::server {
namespace {

using query::filter::Literal;

TEST(ListLiteralTest, ParsesTheClientsArrayText) {
  EXPECT_TRUE(IsListLiteral("  [1]"));
  EXPECT_FALSE(IsListLiteral("n + 1"));
  auto a = ParseListLiteral("[3, 4.5, -1, NULL]", "update");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->size(), 4u);
  EXPECT_EQ((*a)[0].kind, Literal::Kind::kInt);
  EXPECT_EQ((*a)[0].int_value, 3);
  EXPECT_EQ((*a)[1].kind, Literal::Kind::kFloat);
  EXPECT_DOUBLE_EQ((*a)[1].float_value, 4.5);
  EXPECT_EQ((*a)[2].int_value, -1);
  EXPECT_EQ((*a)[3].kind, Literal::Kind::kNull);
  auto s = ParseListLiteral("['a, b', 'it''s']", "update");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].string_value, "a, b");
  EXPECT_EQ((*s)[1].string_value, "it's");
  auto empty = ParseListLiteral(" [ ] ", "update");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(ListLiteralTest, RejectsMalformedArrays) {
  struct Case {
    const char* sql;
    const char* needle;
  };
  for (const Case& c : {Case{"[1, 2", "missing ']' at position 5"},
                        Case{"[1, n]", "element at position 4 must be a literal"},
                        Case{"[1] x", "unexpected text after ']' at position 3"},
                        Case{"[1 + 2]", "element at position 1 must be a literal"}}) {
    auto r = ParseListLiteral(c.sql, "update expression for 'v'");
    ASSERT_FALSE(r.ok()) << c.sql;
    EXPECT_NE(r.status().message().find(c.needle), std::string::npos)
        << c.sql << " -> " << r.status().message();
  }
}

TEST(ListLiteralTest, RepeatsIntoVectorAndListColumns) {
  auto items = ParseListLiteral("[3, 4.5]", "update");
  ASSERT_TRUE(items.ok());
  auto vec_type = arrow::fixed_size_list(arrow::field("item", arrow::float32()), 2);
  auto v = RepeatListLiteral(*items, vec_type, 3, "column 'vector'");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  arrow::Array arr(*v);
  ASSERT_EQ(arr.length(), 3);
  EXPECT_EQ(arr.null_count(), 0);
  arrow::Array child = arr.child(0);
  ASSERT_EQ(child.length(), 6);
  for (int r = 0; r < 3; ++r) {
    EXPECT_FLOAT_EQ(child.Value<float>(2 * r), 3.0f);
    EXPECT_FLOAT_EQ(child.Value<float>(2 * r + 1), 4.5f);
  }
  auto three = ParseListLiteral("[1, 2, 3]", "update");
  auto bad = RepeatListLiteral(*three, vec_type, 1, "column 'vector'");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("dimension 2 but the array has 3 elements"),
            std::string::npos)
      << bad.status().message();

  auto tags = ParseListLiteral("['x', 'y']", "update");
  auto list = RepeatListLiteral(*tags, arrow::list(arrow::field("item", arrow::utf8())), 2,
                                "column 'tags'");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  arrow::Array l(*list);
  ASSERT_EQ(l.length(), 2);
  EXPECT_EQ(l.ListEnd(1) - l.ListStart(1), 2);
  EXPECT_EQ(l.child(0).GetView(l.ListStart(1) + 1), "y");

  auto scalar = RepeatListLiteral(*tags, arrow::int64(), 1, "column 'n'");
  ASSERT_FALSE(scalar.ok());
  EXPECT_NE(scalar.status().message().find("fits only list and vector columns"), std::string::npos);
}

}  // namespace
}  // namespace strata::server
