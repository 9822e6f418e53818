// table::PrimaryKeyOf / DeclarePrimaryKey / ParsePrimaryKeyList (the Lance field-metadata
// convention), and LocalTable::Create / Overwrite taking the key from the schema.
#include "table/primary_key.h"

#include <gtest/gtest.h>

#include <map>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "arrow/builder.h"
#include "table/catalog.h"

namespace strata::table {
namespace {

arrow::FieldPtr KeyField(const std::string& name, arrow::DataTypePtr type,
                         std::vector<std::pair<std::string, std::string>> md) {
  return arrow::field(name, std::move(type), true, arrow::KeyValueMetadata(std::move(md)));
}

arrow::SchemaPtr SchemaOf(std::vector<arrow::FieldPtr> fields) {
  return std::make_shared<arrow::Schema>(std::move(fields));
}

std::vector<std::string> KeyOf(const arrow::SchemaPtr& s) {
  auto k = PrimaryKeyOf(*s);
  EXPECT_TRUE(k.ok()) << k.status().ToString();
  return k.ok() ? *k : std::vector<std::string>{"<error>"};
}

void ExpectInvalid(const Result<std::vector<std::string>>& r, const std::string& needle) {
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().ToString();
}

TEST(PrimaryKeyOf, NoMetadataMeansNoKey) {
  EXPECT_TRUE(KeyOf(SchemaOf({arrow::field("id", arrow::int64())})).empty());
}

TEST(PrimaryKeyOf, FlagValuesAreCaseInsensitive) {
  for (const char* v : {"true", "TRUE", "True", "1", "yes", "YES"}) {
    EXPECT_EQ(KeyOf(SchemaOf({arrow::field("a", arrow::utf8()),
                              KeyField("id", arrow::int64(), {{kPrimaryKeyMetadataKey, v}})})),
              std::vector<std::string>{"id"})
        << v;
  }
  for (const char* v : {"false", "FALSE", "0", "no"}) {
    EXPECT_TRUE(
        KeyOf(SchemaOf({KeyField("id", arrow::int64(), {{kPrimaryKeyMetadataKey, v}})})).empty())
        << v;
  }
  ExpectInvalid(PrimaryKeyOf(*SchemaOf(
                    {KeyField("id", arrow::int64(), {{kPrimaryKeyMetadataKey, "maybe"}})})),
                "column 'id' has lance-schema:unenforced-primary-key = 'maybe'");
}

TEST(PrimaryKeyOf, PositionsOrderCompositeKeysThenSchemaOrder) {
  // b (position 1), a (position 2), then c and d (flag only) in schema order.
  auto s =
      SchemaOf({KeyField("c", arrow::int32(), {{kPrimaryKeyMetadataKey, "true"}}),
                KeyField("a", arrow::utf8(),
                         {{kPrimaryKeyMetadataKey, "true"}, {kPrimaryKeyPositionMetadataKey, "2"}}),
                arrow::field("x", arrow::float64()),
                KeyField("b", arrow::int64(), {{kPrimaryKeyPositionMetadataKey, "1"}}),
                KeyField("d", arrow::int16(), {{kPrimaryKeyMetadataKey, "yes"}})});
  EXPECT_EQ(KeyOf(s), (std::vector<std::string>{"b", "a", "c", "d"}));
}

TEST(PrimaryKeyOf, RejectsBadPositionsNestedKeysAndUnkeyableTypes) {
  ExpectInvalid(PrimaryKeyOf(*SchemaOf(
                    {KeyField("a", arrow::int64(), {{kPrimaryKeyPositionMetadataKey, "1"}}),
                     KeyField("b", arrow::int64(), {{kPrimaryKeyPositionMetadataKey, "1"}})})),
                "columns 'a' and 'b' both have key position 1");
  ExpectInvalid(PrimaryKeyOf(*SchemaOf(
                    {KeyField("a", arrow::int64(), {{kPrimaryKeyPositionMetadataKey, "0"}})})),
                "expected an integer >= 1");
  ExpectInvalid(PrimaryKeyOf(*SchemaOf({KeyField(
                    "a", arrow::int64(),
                    {{kPrimaryKeyMetadataKey, "false"}, {kPrimaryKeyPositionMetadataKey, "1"}})})),
                "column 'a' has lance-schema:unenforced-primary-key = false but a key position");
  auto nested =
      arrow::struct_({KeyField("inner", arrow::int64(), {{kPrimaryKeyMetadataKey, "true"}})});
  ExpectInvalid(PrimaryKeyOf(*SchemaOf({arrow::field("s", nested)})),
                "column 's.inner' is nested; key columns must be top-level columns");
  auto vec = arrow::fixed_size_list(arrow::field("item", arrow::float32()), 4);
  ExpectInvalid(PrimaryKeyOf(*SchemaOf({KeyField("v", vec, {{kPrimaryKeyMetadataKey, "true"}})})),
                "primary-key column 'v' has type");
}

TEST(DeclarePrimaryKey, WritesFlagAndPositionInGivenOrder) {
  auto s = SchemaOf({arrow::field("a", arrow::int64()), arrow::field("b", arrow::utf8()),
                     arrow::field("v", arrow::float64())});
  auto d = DeclarePrimaryKey(s, {"b", "a"});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(KeyOf(*d), (std::vector<std::string>{"b", "a"}));
  const arrow::Field& b = *(*d)->field(1);
  ASSERT_NE(b.metadata.Get(kPrimaryKeyMetadataKey), nullptr);
  EXPECT_EQ(*b.metadata.Get(kPrimaryKeyMetadataKey), "true");
  EXPECT_EQ(*b.metadata.Get(kPrimaryKeyPositionMetadataKey), "1");
  EXPECT_EQ(*(*d)->field(0)->metadata.Get(kPrimaryKeyPositionMetadataKey), "2");
  EXPECT_TRUE((*d)->field(2)->metadata.empty());
}

TEST(DeclarePrimaryKey, RejectsUnknownDuplicateUnkeyableAndConflicting) {
  auto vec = arrow::fixed_size_list(arrow::field("item", arrow::float32()), 2);
  auto s = SchemaOf({arrow::field("a", arrow::int64()), arrow::field("v", vec)});
  auto unknown = DeclarePrimaryKey(s, {"nope"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("no column 'nope'"), std::string::npos);
  auto twice = DeclarePrimaryKey(s, {"a", "a"});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("column 'a' is listed twice"), std::string::npos);
  auto vector_key = DeclarePrimaryKey(s, {"v"});
  ASSERT_FALSE(vector_key.ok());
  EXPECT_TRUE(vector_key.status().IsInvalid());
  EXPECT_NE(vector_key.status().message().find("'v'"), std::string::npos);

  auto declared = SchemaOf({KeyField("a", arrow::int64(), {{kPrimaryKeyMetadataKey, "true"}}),
                            arrow::field("b", arrow::int64())});
  auto conflict = DeclarePrimaryKey(declared, {"b"});
  ASSERT_FALSE(conflict.ok());
  EXPECT_NE(conflict.status().message().find(
                "primary_key=b differs from the key the schema's field metadata declares (a)"),
            std::string::npos)
      << conflict.status().ToString();
  auto same = DeclarePrimaryKey(declared, {"a"});
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(KeyOf(*same), std::vector<std::string>{"a"});
}

TEST(ParsePrimaryKeyList, SplitsAndTrims) {
  EXPECT_EQ(*ParsePrimaryKeyList("id"), std::vector<std::string>{"id"});
  EXPECT_EQ(*ParsePrimaryKeyList("a, b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(ParsePrimaryKeyList("").ok());
  EXPECT_FALSE(ParsePrimaryKeyList("a,,b").ok());
  EXPECT_FALSE(ParsePrimaryKeyList("a,").ok());
}

// The catalog takes the key from the schema at create and from the NEW schema at overwrite:
// rows with an equal key replace each other (newest wins).
TEST(PrimaryKeyTable, CreateAndOverwriteUseTheSchemasKey) {
  strata::testing::TempDir dir;
  auto keyed = SchemaOf({KeyField("id", arrow::int64(), {{kPrimaryKeyMetadataKey, "true"}}),
                         arrow::field("v", arrow::utf8())});
  auto rows = [&](const arrow::SchemaPtr& schema, std::vector<int64_t> ids, const std::string& v) {
    arrow::RecordBatchBuilder b(schema);
    for (int64_t id : ids) {
      EXPECT_TRUE(b.column(0)->AppendInt(id).ok());
      EXPECT_TRUE(b.column(1)->AppendBytes(v + std::to_string(id)).ok());
    }
    return b.Finish().value();
  };
  {
    auto catalog = std::move(Catalog::Open(dir.path(), {})).value();
    auto t = catalog->CreateTable("default", "t", keyed, {rows(keyed, {1, 2, 3}, "a")},
                                  CreateMode::kCreate);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    ASSERT_TRUE((*t)->Insert({rows(keyed, {2, 3, 4}, "b")}).ok());
    auto snap = (*t)->Snapshot();
    EXPECT_EQ(snap.key_columns, std::vector<std::string>{"id"});
    std::map<int64_t, std::string> seen;
    for (const auto& b : strata::testing::Live(snap)) {
      for (int64_t i = 0; i < b->num_rows(); ++i) {
        seen[b->column(0).Value<int64_t>(i)] = std::string(b->column(1).GetView(i));
      }
    }
    EXPECT_EQ(seen, (std::map<int64_t, std::string>{{1, "a1"}, {2, "b2"}, {3, "b3"}, {4, "b4"}}));
    int64_t n = 0;
    for (const auto& b : strata::testing::Live(snap)) n += b->num_rows();
    EXPECT_EQ(n, 4);

    // Overwrite with a schema without the metadata: hidden _rowid, duplicates kept.
    auto plain = SchemaOf({arrow::field("id", arrow::int64()), arrow::field("v", arrow::utf8())});
    ASSERT_TRUE((*t)->Overwrite(plain, {rows(plain, {7, 7}, "c")}).ok());
    EXPECT_EQ((*t)->Snapshot().key_columns, std::vector<std::string>{"_rowid"});
    // Overwrite with a keyed schema again: the key is back, and survives a reopen.
    ASSERT_TRUE((*t)->Overwrite(keyed, {rows(keyed, {5, 5, 6}, "d")}).ok());
    EXPECT_EQ((*t)->Snapshot().key_columns, std::vector<std::string>{"id"});
  }
  auto reopened = std::move(Catalog::Open(dir.path(), {})).value();
  auto t2 = reopened->GetTable("default", "t");
  ASSERT_TRUE(t2.ok()) << t2.status().ToString();
  auto snap2 = (*t2)->Snapshot();
  EXPECT_EQ(snap2.key_columns, std::vector<std::string>{"id"});
  int64_t n2 = 0;
  for (const auto& b : strata::testing::Live(snap2)) n2 += b->num_rows();
  EXPECT_EQ(n2, 2);  // 5 (newest wins) and 6
  ASSERT_NE((*t2)->schema()->field(0)->metadata.Get(kPrimaryKeyMetadataKey), nullptr);
}

}  // namespace
}  // namespace strata::table
