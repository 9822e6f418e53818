#include "query/scan.h"

#include <gtest/gtest.h>

#include "query/query_result.h"
#include "query_test_util.h"

namespace strata::query {
namespace {

table::TableSnapshot Fixture() {
  auto schema = testing::TestSchema(1);
  auto b1 = testing::TestBatch(schema, 1, {0, 1, 2}, {"a", "b", "a"},
                               {std::vector<float>{0}, std::vector<float>{1}, std::nullopt});
  auto b2 = testing::TestBatch(schema, 1, {3, 4}, {"a", "c"},
                               {std::vector<float>{3}, std::vector<float>{4}});
  return testing::MakeSnapshot(schema, {b1, b2});
}

std::vector<int64_t> AllIds(const QueryResult& r, const std::string& col = "id") {
  std::vector<int64_t> out;
  for (const auto& b : r.batches) {
    for (int64_t v : testing::Int64Column(*b, col)) out.push_back(v);
  }
  return out;
}

TEST(ScanTest, OffsetAndLimitAcrossBatches) {
  ScanOptions o;
  o.offset = 2;
  o.limit = 2;
  auto r = Scan(Fixture(), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_rows, 2);
  EXPECT_EQ(AllIds(*r), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r->schema->num_fields(), 3);

  o.offset = 0;
  o.limit = std::numeric_limits<int64_t>::max();
  r = Scan(Fixture(), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(AllIds(*r), (std::vector<int64_t>{0, 1, 2, 3, 4}));

  o.offset = 10;
  r = Scan(Fixture(), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->num_rows, 0);
}

TEST(ScanTest, FilterProjectionAndRowIds) {
  ScanOptions o;
  o.filter = "name = 'a'";
  o.offset = 1;
  o.columns = {{"id", "k"}};
  o.with_row_id = true;
  auto r = Scan(Fixture(), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->batches.size(), 1u);
  const auto& b = *r->batches[0];
  ASSERT_EQ(b.schema()->num_fields(), 2);
  EXPECT_EQ(b.schema()->field(1)->name, kRowIdColumn);
  EXPECT_EQ(AllIds(*r, "k"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(b.column(1).Value<uint64_t>(0), 2u);
  EXPECT_EQ(b.column(1).Value<uint64_t>(1), 3u);
  EXPECT_TRUE(b.Validate().ok());
}

TEST(ScanTest, UnfilteredRowIdsAreSnapshotPositions) {
  ScanOptions o;
  o.offset = 1;
  o.limit = 3;
  o.with_row_id = true;
  auto r = Scan(Fixture(), o);
  ASSERT_TRUE(r.ok());
  std::vector<uint64_t> ids;
  for (const auto& b : r->batches) {
    const int i = b->schema()->GetFieldIndex(kRowIdColumn);
    for (int64_t k = 0; k < b->num_rows(); ++k) ids.push_back(b->column(i).Value<uint64_t>(k));
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2, 3}));
}

TEST(ScanTest, Errors) {
  ScanOptions o;
  o.limit = -1;
  EXPECT_FALSE(Scan(Fixture(), o).ok());
  o.limit = 1;
  o.columns = {{"zzz", ""}};
  auto r = Scan(Fixture(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'zzz'"), std::string::npos);
  o.columns = {{"id", ""}, {"id", ""}};
  r = Scan(Fixture(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("selected twice"), std::string::npos);
}

}  // namespace
}  // namespace strata::query
