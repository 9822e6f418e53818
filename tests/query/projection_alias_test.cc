// query/projection.h: the list form "EXPR AS alias" of a computed or renamed column (issue 18:
// the LanceDB Node client sorts a select({...}) object's keys, so a list is how its users keep
// their column order). Output names, types and order are checked.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "arrow/type.h"
#include "query/projection.h"

namespace strata::query {
namespace {

arrow::SchemaPtr TestSchema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("label", arrow::utf8()),
      arrow::field("price as list", arrow::int64())});
}

std::vector<std::string> Names(const Projection& p) {
  std::vector<std::string> out;
  for (const auto& f : p.schema->fields()) out.push_back(f->name);
  return out;
}

TEST(ProjectionAliasTest, ListEntriesWithAsKeepTheirOrderAndAliases) {
  Result<Projection> p = ResolveProjection(
      TestSchema(),
      {{"id * 10 AS zeta", ""}, {"label as alpha", ""}, {"  id + 1   As   mid ", ""}, {"id", ""}});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(Names(*p), (std::vector<std::string>{"zeta", "alpha", "mid", "id"}));
  // "label as alpha" is the plain column renamed; the others are computed.
  EXPECT_EQ(p->indices, (std::vector<int>{-1, 1, -1, 0}));
  EXPECT_EQ(p->schema->field(1)->type->id(), arrow::utf8()->id());
  EXPECT_EQ(p->schema->field(0)->type->id(), arrow::int64()->id());
}

TEST(ProjectionAliasTest, AColumnNamedLikeAnAliasIsThatColumn) {
  Result<Projection> p = ResolveProjection(TestSchema(), {{"price as list", ""}});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(Names(*p), (std::vector<std::string>{"price as list"}));
  EXPECT_EQ(p->indices, (std::vector<int>{2}));
}

TEST(ProjectionAliasTest, NotAnAliasOrABadOne) {
  // No alias after AS, AS glued to the expression, an alias that is not an identifier: the
  // whole text is an expression (and fails as one), named in the error.
  for (const char* text : {"id AS", "idAS x", "id AS 1x"}) {
    Result<Projection> p = ResolveProjection(TestSchema(), {{text, ""}});
    EXPECT_FALSE(p.ok()) << text;
  }
  // An explicit alias wins: the text is not split.
  Result<Projection> p = ResolveProjection(TestSchema(), {{"id AS x", "given"}});
  EXPECT_FALSE(p.ok());
  // Duplicates through AS are refused like any duplicate output name.
  Result<Projection> dup = ResolveProjection(TestSchema(), {{"id", ""}, {"label AS id", ""}});
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().message(), "columns: output column 'id' is selected twice");
}

}  // namespace
}  // namespace strata::query
