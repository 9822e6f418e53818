#include "query/predicate.h"

#include <gtest/gtest.h>

#include "query_test_util.h"

namespace strata::query {
namespace {

TEST(PredicateTest, ParsesLiteralKinds) {
  auto p = ParsePredicate("id = 42");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->column, "id");
  EXPECT_EQ(p->value.kind, Literal::Kind::kInt);
  EXPECT_EQ(p->value.int_value, 42);

  p = ParsePredicate("  score=-1.5e1 ");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->value.kind, Literal::Kind::kFloat);
  EXPECT_DOUBLE_EQ(p->value.float_value, -15.0);

  p = ParsePredicate("`my col` = 'it''s'");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->column, "my col");
  EXPECT_EQ(p->value.string_value, "it's");
  EXPECT_EQ(p->ToString(), "my col = 'it''s'");

  p = ParsePredicate("\"Flag\" = TRUE");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->column, "Flag");
  EXPECT_EQ(p->value.kind, Literal::Kind::kBool);
  EXPECT_TRUE(p->value.bool_value);
}

TEST(PredicateTest, RejectsUnsupportedSyntaxNamingIt) {
  struct Case {
    const char* sql;
    const char* needle;
  };
  for (const Case& c :
       {Case{"id > 3", "found '> '"}, Case{"id = 3 AND x = 1", "found 'AND x = 1'"},
        Case{"id == 3", "found '=='"}, Case{"id = NULL", "IS NULL"},
        Case{"id = other", "is not a literal"}, Case{"name = 'open", "unterminated"},
        Case{"id = 99999999999999999999", "does not fit in int64"}, Case{"", "empty"},
        Case{"_rowoffset in (0,2)", "found 'in'"}}) {
    auto p = ParsePredicate(c.sql);
    ASSERT_FALSE(p.ok()) << c.sql;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(p.status().message().find(c.needle), std::string::npos)
        << c.sql << " -> " << p.status().message();
  }
}

TEST(PredicateTest, CountsMatchesAndNullsNeverMatch) {
  auto schema = testing::TestSchema(1);
  auto b1 = testing::TestBatch(schema, 1, {1, 2, 3}, {"x", std::nullopt, "y"},
                               {std::vector<float>{1}, std::vector<float>{2}, std::nullopt});
  auto b2 = testing::TestBatch(schema, 1, {2, 2}, {"x", "x"},
                               {std::vector<float>{1}, std::vector<float>{2}});
  auto snap = testing::MakeSnapshot(schema, {b1, b2});
  EXPECT_EQ(*CountMatching(*ParsePredicate("id = 2"), snap), 3);
  EXPECT_EQ(*CountMatching(*ParsePredicate("id = 2.0"), snap), 3);
  EXPECT_EQ(*CountMatching(*ParsePredicate("id = 2.5"), snap), 0);
  EXPECT_EQ(*CountMatching(*ParsePredicate("name = 'x'"), snap), 3);
  EXPECT_EQ(*CountMatching(*ParsePredicate("NAME = 'y'"), snap), 1);  // case-insensitive column
  EXPECT_EQ(*CountMatching(*ParsePredicate("name = ''"), snap), 0);   // null is not ''

  auto missing = CountMatching(*ParsePredicate("nope = 1"), snap);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("columns: id, name, vector"), std::string::npos);
  auto mismatch = CountMatching(*ParsePredicate("name = 1"), snap);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find("of type utf8"), std::string::npos)
      << mismatch.status().message();
  auto vec = CountMatching(*ParsePredicate("vector = 1"), snap);
  ASSERT_FALSE(vec.ok());
  EXPECT_NE(vec.status().message().find("not supported"), std::string::npos);
}

}  // namespace
}  // namespace strata::query
