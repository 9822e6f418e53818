#include "query/vector_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "query/query_result.h"
#include "query_test_util.h"

namespace strata::query {
namespace {

using testing::Int64Column;
using testing::MakeSnapshot;
using testing::TestBatch;
using testing::TestSchema;

// Two batches; positions 0..5. Row 3 has a null vector. Rows 1 and 4 tie for query (0,0).
table::TableSnapshot Fixture() {
  auto schema = TestSchema(2);
  auto b1 = TestBatch(
      schema, 2, {10, 11, 12, 13}, {"a", "b", "c", "d"},
      {std::vector<float>{0, 0}, std::vector<float>{1, 0}, std::vector<float>{0, 2}, std::nullopt});
  auto b2 = TestBatch(schema, 2, {14, 15}, {"b", std::nullopt},
                      {std::vector<float>{1, 0}, std::vector<float>{3, 3}});
  return MakeSnapshot(schema, {b1, b2});
}

std::vector<float> Distances(const arrow::RecordBatch& batch) {
  std::vector<float> out;
  const int i = batch.schema()->GetFieldIndex(kDistanceColumn);
  EXPECT_GE(i, 0);
  arrow::Array a = batch.column(i);
  EXPECT_EQ(a.type_id(), arrow::TypeId::kFloat32);
  for (int64_t r = 0; r < a.length(); ++r) out.push_back(a.Value<float>(r));
  return out;
}

TEST(VectorSearchTest, TopKSortedByDistanceTiesByPosition) {
  VectorSearchOptions o;
  o.query = {0, 0};
  o.k = 4;
  auto r = VectorSearch(Fixture(), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->batches.size(), 1u);
  const auto& batch = *r->batches[0];
  EXPECT_EQ(r->num_rows, 4);
  EXPECT_EQ(Int64Column(batch, "id"), (std::vector<int64_t>{10, 11, 14, 12}));
  EXPECT_EQ(Distances(batch), (std::vector<float>{0, 1, 1, 4}));
  // All columns, then _distance.
  ASSERT_EQ(batch.schema()->num_fields(), 4);
  EXPECT_EQ(batch.schema()->field(2)->name, "vector");
  EXPECT_EQ(batch.schema()->field(3)->name, "_distance");
  arrow::Array names = batch.column(1);
  EXPECT_EQ(names.GetView(2), "b");
  arrow::Array vecs = batch.column(2);
  EXPECT_EQ(vecs.child(0).Value<float>(vecs.ListStart(3) + 1), 2.0f);  // row 12 = (0, 2)
  EXPECT_TRUE(batch.Validate().ok());
}

TEST(VectorSearchTest, KLargerThanRowsSkipsNullVectors) {
  VectorSearchOptions o;
  o.query = {0, 0};
  o.k = std::numeric_limits<int64_t>::max();
  auto r = VectorSearch(Fixture(), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Int64Column(*r->batches[0], "id"), (std::vector<int64_t>{10, 11, 14, 12, 15}));
  EXPECT_EQ(Distances(*r->batches[0]), (std::vector<float>{0, 1, 1, 4, 18}));
}

TEST(VectorSearchTest, OffsetProjectionAliasAndRowId) {
  VectorSearchOptions o;
  o.query = {0, 0};
  o.k = 2;
  o.offset = 1;
  o.columns = {{"id", "ident"}};
  o.with_row_id = true;
  auto r = VectorSearch(Fixture(), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& batch = *r->batches[0];
  ASSERT_EQ(batch.schema()->num_fields(), 3);
  EXPECT_EQ(batch.schema()->field(0)->name, "ident");
  EXPECT_EQ(batch.schema()->field(2)->name, "_rowid");
  EXPECT_EQ(batch.schema()->field(2)->type->id(), arrow::TypeId::kUInt64);
  EXPECT_EQ(Int64Column(batch, "ident"), (std::vector<int64_t>{11, 14}));
  arrow::Array rowid = batch.column(2);
  EXPECT_EQ(rowid.Value<uint64_t>(0), 1u);
  EXPECT_EQ(rowid.Value<uint64_t>(1), 4u);
}

TEST(VectorSearchTest, FilterIsAppliedBeforeTopK) {
  VectorSearchOptions o;
  o.query = {0, 0};
  o.k = 1;
  o.filter = "name = 'b'";
  auto r = VectorSearch(Fixture(), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Int64Column(*r->batches[0], "id"), (std::vector<int64_t>{11}));
}

TEST(VectorSearchTest, CosineAndDotRankings) {
  VectorSearchOptions o;
  o.query = {1, 0.5f};
  o.k = 3;
  o.distance = DistanceType::kCosine;
  o.columns = {{"id", ""}};
  auto r = VectorSearch(Fixture(), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // |q| = sqrt(1.25). (3,3): 1 - 4.5/(|q| sqrt(18)); (1,0) twice: 1 - 1/|q|; (0,2): 1 - 1/|q|;
  // (0,0) has zero norm: 1.
  EXPECT_EQ(Int64Column(*r->batches[0], "id"), (std::vector<int64_t>{15, 11, 14}));
  auto d = Distances(*r->batches[0]);
  EXPECT_NEAR(d[0], 1.0 - 4.5 / (std::sqrt(1.25) * std::sqrt(18.0)), 1e-6);
  EXPECT_NEAR(d[1], 1.0 - 1.0 / std::sqrt(1.25), 1e-6);
  EXPECT_EQ(d[1], d[2]);

  o.distance = DistanceType::kDot;
  r = VectorSearch(Fixture(), o);
  ASSERT_TRUE(r.ok());
  // dot: 15 -> 4.5 (distance -3.5); 11, 12, 14 -> 1 (distance 0, ties by position); 10 -> 1.
  EXPECT_EQ(Int64Column(*r->batches[0], "id"), (std::vector<int64_t>{15, 11, 12}));
  EXPECT_EQ(Distances(*r->batches[0]), (std::vector<float>{-3.5f, 0, 0}));
}

TEST(VectorSearchTest, EmptySnapshotGivesEmptyBatch) {
  VectorSearchOptions o;
  o.query = {0, 0};
  auto r = VectorSearch(testing::MakeSnapshot(TestSchema(2), {}), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_rows, 0);
  EXPECT_EQ(r->batches[0]->num_rows(), 0);
  EXPECT_EQ(r->schema->num_fields(), 4);
}

TEST(VectorSearchTest, ValidationErrorsNameTheProblem) {
  auto snap = Fixture();
  auto expect_error = [&](VectorSearchOptions o, const std::string& needle) {
    auto r = VectorSearch(snap, o);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
  };
  VectorSearchOptions o;
  o.query = {0, 0};
  o.k = 0;
  expect_error(o, "k must be >= 1");
  o.k = 1;
  o.query = {0, 0, 0};
  expect_error(o, "dimension 3 but column 'vector' has dimension 2");
  o.query = {0, std::nanf("")};
  expect_error(o, "element 1 is NaN");
  o.query = {std::numeric_limits<float>::infinity(), 0};
  expect_error(o, "element 0 is infinite");
  o.query = {0, 0};
  o.column = "nope";
  expect_error(o, "vector_column 'nope'");
  o.column = "id";
  expect_error(o, "not a vector type");
  o.column = "";
  o.columns = {{"missing", ""}};
  expect_error(o, "column 'missing' is not in the table schema");
  o.columns = {};
  o.offset = -1;
  expect_error(o, "offset must be >= 0");
}

TEST(VectorSearchTest, VectorColumnDiscovery) {
  auto two = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("a", testing::VectorType(2)), arrow::field("b", testing::VectorType(3))});
  auto r = ResolveVectorColumn(*two, "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("several vector columns (a, b)"), std::string::npos);
  EXPECT_EQ(*ResolveVectorColumn(*two, "b"), 1);
  auto none = std::make_shared<arrow::Schema>(
      std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64())});
  r = ResolveVectorColumn(*none, "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no vector column"), std::string::npos);
  auto f64 = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("v", arrow::fixed_size_list(arrow::field("item", arrow::float64()), 2))});
  r = ResolveVectorColumn(*f64, "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotSupported);
}

}  // namespace
}  // namespace strata::query
