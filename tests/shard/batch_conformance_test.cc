#include "shard/batch_conformance.h"

#include <gtest/gtest.h>

#include <limits>

#include "../io/storage_test_util.h"
#include "arrow/builder.h"

namespace strata::shard {
namespace {

using strata::testing::Ids;
using strata::testing::MakeBatch;
using strata::testing::TestSchema;

arrow::RecordBatchPtr Batch(std::vector<arrow::FieldPtr> fields,
                            std::vector<arrow::ArrayDataPtr> columns, int64_t rows) {
  return std::make_shared<arrow::RecordBatch>(std::make_shared<arrow::Schema>(std::move(fields)),
                                              rows, std::move(columns));
}

TEST(BatchConformance, ReordersAndFillsMissingNullable) {
  auto vec = arrow::MakeVectorArray({1, 2, 3, 4, 5, 6, 7, 8}, 4);
  auto b = Batch({arrow::field("vector", vec->type), arrow::field("id", arrow::int64(), false)},
                 {vec, arrow::MakeInt64Array({7, 8})}, 2);
  auto out = ConformBatch(TestSchema(), *b);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)->schema()->field(0)->name, "id");
  EXPECT_EQ(Ids({*out}), (std::vector<int64_t>{7, 8}));
  arrow::Array name = (*out)->column(1);
  EXPECT_EQ(name.length(), 2);
  EXPECT_TRUE(name.IsNull(0));
  EXPECT_TRUE(name.IsNull(1));
  arrow::Array v = (*out)->column(2);
  EXPECT_EQ(v.child(0).Value<float>(5), 6.0f);
}

TEST(BatchConformance, WrongTypeNamesColumnAndBothTypes) {
  auto b =
      Batch({arrow::field("id", arrow::float32(), false)}, {arrow::MakeFloat32Array({1.0f})}, 1);
  auto out = ConformBatch(TestSchema(), *b);
  ASSERT_TRUE(out.status().IsInvalid());
  const std::string& m = out.status().message();
  EXPECT_NE(m.find("'id'"), std::string::npos) << m;
  EXPECT_NE(m.find("float32"), std::string::npos) << m;
  EXPECT_NE(m.find("int64"), std::string::npos) << m;
}

TEST(BatchConformance, WrongVectorDimension) {
  auto vec3 = arrow::MakeVectorArray({1, 2, 3}, 3);
  auto b = Batch({arrow::field("id", arrow::int64(), false), arrow::field("vector", vec3->type)},
                 {arrow::MakeInt64Array({1}), vec3}, 1);
  auto out = ConformBatch(TestSchema(), *b);
  ASSERT_TRUE(out.status().IsInvalid());
  EXPECT_EQ(out.status().message(),
            "column 'vector': vector dimension 3 does not match the table's 4");
}

TEST(BatchConformance, NullInNonNullableColumn) {
  auto b = Batch({arrow::field("id", arrow::int64(), true)},
                 {arrow::MakeInt64Array({1, std::nullopt, std::nullopt})}, 3);
  auto out = ConformBatch(TestSchema(), *b);
  ASSERT_TRUE(out.status().IsInvalid());
  EXPECT_EQ(out.status().message(), "column 'id' is not nullable but has 2 nulls");
}

TEST(BatchConformance, UnknownMissingAndDuplicateColumns) {
  auto unknown =
      Batch({arrow::field("id", arrow::int64(), false), arrow::field("extra", arrow::utf8())},
            {arrow::MakeInt64Array({1}), arrow::MakeUtf8Array({"x"})}, 1);
  auto r1 = ConformBatch(TestSchema(), *unknown);
  ASSERT_TRUE(r1.status().IsInvalid());
  EXPECT_NE(r1.status().message().find("'extra' is not in the table schema"), std::string::npos);

  auto missing = Batch({arrow::field("name", arrow::utf8())}, {arrow::MakeUtf8Array({"x"})}, 1);
  auto r2 = ConformBatch(TestSchema(), *missing);
  ASSERT_TRUE(r2.status().IsInvalid());
  EXPECT_NE(r2.status().message().find("'id' is missing"), std::string::npos);

  auto dup = Batch({arrow::field("id", arrow::int64(), false), arrow::field("id", arrow::int64())},
                   {arrow::MakeInt64Array({1}), arrow::MakeInt64Array({2})}, 1);
  EXPECT_TRUE(ConformBatch(TestSchema(), *dup).status().IsInvalid());
}

TEST(BatchConformance, ChildFieldNameDifferenceIsAccepted) {
  // Clients name the vector item "element" or "item"; both store under the table's type.
  auto vec = arrow::MakeVectorArray({1, 2, 3, 4}, 4);
  auto element_type = arrow::fixed_size_list(arrow::field("element", arrow::float32()), 4);
  auto relabelled = std::make_shared<arrow::ArrayData>(*vec);
  relabelled->type = element_type;
  auto b = Batch({arrow::field("id", arrow::int64(), false), arrow::field("vector", element_type)},
                 {arrow::MakeInt64Array({1}), relabelled}, 1);
  auto out = ConformBatch(TestSchema(), *b);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE((*out)->column(2).type()->Equals(*TestSchema()->field(2)->type));
}

TEST(BatchConformance, SchemaValidation) {
  EXPECT_TRUE(ValidateTableSchema(*TestSchema()).ok());
  EXPECT_TRUE(ValidateTableSchema(arrow::Schema(std::vector<arrow::FieldPtr>{})).IsInvalid());
  EXPECT_TRUE(ValidateTableSchema(arrow::Schema({arrow::field("a", arrow::int32()),
                                                 arrow::field("a", arrow::int64())}))
                  .IsInvalid());
  EXPECT_TRUE(ValidateTableSchema(arrow::Schema({arrow::field("", arrow::int32())})).IsInvalid());
}

TEST(BatchConformance, RejectsNonFiniteVectorValuesNamingRowAndElement) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (float bad : {nan, inf, -inf}) {
    auto vec = arrow::MakeVectorArray({1, 2, 3, 4, 5, 6, bad, 8}, 4);
    auto b = Batch({arrow::field("id", arrow::int64(), false), arrow::field("vector", vec->type)},
                   {arrow::MakeInt64Array({1, 2}), vec}, 2);
    auto out = ConformBatch(TestSchema(), *b);
    ASSERT_TRUE(out.status().IsInvalid());
    EXPECT_EQ(out.status().message(),
              "column 'vector': row 1 has a NaN or infinite value at element 2; vector values "
              "must be finite");
  }
}

TEST(BatchConformance, RejectsNullElementButAcceptsNullVector) {
  // Row 0 is a whole null vector (fine); row 1 has a null element (rejected).
  auto type = arrow::fixed_size_list(arrow::field("item", arrow::float32()), 4);
  arrow::ArrayBuilder vb(type);
  ASSERT_TRUE(vb.AppendNull().ok());
  for (int e = 0; e < 4; ++e) {
    ASSERT_TRUE((e == 3 ? vb.child(0)->AppendNull() : vb.child(0)->AppendDouble(e)).ok());
  }
  ASSERT_TRUE(vb.AppendValid().ok());
  auto vec = vb.Finish();
  ASSERT_TRUE(vec.ok());
  auto b = Batch({arrow::field("id", arrow::int64(), false), arrow::field("vector", type)},
                 {arrow::MakeInt64Array({1, 2}), *vec}, 2);
  auto out = ConformBatch(TestSchema(), *b);
  ASSERT_TRUE(out.status().IsInvalid());
  EXPECT_EQ(out.status().message(),
            "column 'vector': row 1 has a null at element 3 of 4; a vector must be null as a "
            "whole or have every element set");
  auto ok_batch = b->Slice(0, 1);
  EXPECT_TRUE(ConformBatch(TestSchema(), *ok_batch).ok());
}

}  // namespace
}  // namespace strata::shard
