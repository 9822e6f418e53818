#include "query/shard_pruning.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "arrow/builder.h"
#include "query/filter/parser.h"
#include "table/shard_router.h"

namespace strata::query {
namespace {

arrow::SchemaPtr Schema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("region", arrow::utf8())});
}

table::LsmWriteSpec Bucket(int64_t n) {
  table::LsmWriteSpec s;
  s.mode = table::ShardingMode::kBucket;
  s.column = "id";
  s.num_buckets = n;
  return s;
}

ShardSelection Select(const table::LsmWriteSpec& spec, const std::string& sql) {
  auto e = filter::ParseExpression(sql);
  EXPECT_TRUE(e.ok()) << sql << ": " << e.status().ToString();
  auto s = SelectShards(spec, *Schema(), e.ok() ? *e : nullptr);
  EXPECT_TRUE(s.ok()) << sql << ": " << s.status().ToString();
  return s.ok() ? *s : ShardSelection{};
}

// Bucket of each id in [0, n) as the write router places its row.
std::map<int64_t, int64_t> RoutedBuckets(int64_t n, int64_t buckets) {
  std::vector<std::optional<int64_t>> ids;
  std::vector<std::optional<std::string>> regions;
  for (int64_t i = 0; i < n; ++i) ids.push_back(i), regions.push_back("r");
  auto batch = std::make_shared<arrow::RecordBatch>(
      Schema(), n,
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids), arrow::MakeUtf8Array(regions)});
  auto parts = table::RouteRows(Bucket(buckets), {batch});
  EXPECT_TRUE(parts.ok());
  std::map<int64_t, int64_t> out;
  for (const auto& p : *parts) {
    for (const auto& b : p.batches) {
      const arrow::Array col = b->column(0);
      for (int64_t i = 0; i < b->num_rows(); ++i) out[col.raw_values<int64_t>()[i]] = p.bucket;
    }
  }
  return out;
}

TEST(ShardPruningTest, AnEqualityReadsTheOneBucketTheRouterWritesTo) {
  const auto routed = RoutedBuckets(300, 16);
  for (const auto& [id, bucket] : routed) {
    const ShardSelection s = Select(Bucket(16), "id = " + std::to_string(id));
    ASSERT_FALSE(s.all) << id;
    EXPECT_EQ(s.buckets, std::vector<int64_t>{bucket}) << id;
  }
  // Iceberg's long 34 -> hash 2017239379 -> bucket 3 of 8 (the MemWAL spec's transform).
  const ShardSelection s = Select(Bucket(8), "id = 34");
  EXPECT_EQ(s.buckets, std::vector<int64_t>{3});
  EXPECT_EQ(s.how, "(id = 34) -> bucket 3 of 8");
}

TEST(ShardPruningTest, InListsUnionAndConjunctsIntersect) {
  const auto routed = RoutedBuckets(100, 16);
  const std::set<int64_t> want = {routed.at(5), routed.at(60), routed.at(99)};
  EXPECT_EQ(Select(Bucket(16), "id IN (5, 60, NULL, 99)").buckets,
            std::vector<int64_t>(want.begin(), want.end()));
  EXPECT_EQ(Select(Bucket(16), "region = 'eu' AND id = 60").buckets,
            std::vector<int64_t>{routed.at(60)});
  EXPECT_EQ(Select(Bucket(16), "id IN (5, 60) AND id = 60").buckets,
            std::vector<int64_t>{routed.at(60)});
  // Two keys in different buckets: no row can match both, so no shard is read.
  int64_t other = 1;
  while (routed.at(other) == routed.at(0)) ++other;
  const ShardSelection none = Select(Bucket(16), "id = 0 AND id = " + std::to_string(other));
  EXPECT_FALSE(none.all);
  EXPECT_TRUE(none.buckets.empty());
  const ShardSelection null = Select(Bucket(16), "id = NULL");
  EXPECT_FALSE(null.all);
  EXPECT_TRUE(null.buckets.empty());
}

TEST(ShardPruningTest, AnythingElseReadsEveryShard) {
  for (const char* sql : {"id > 3", "id = 3 OR id = 4", "id != 3", "id NOT IN (1, 2)", "id = 3.5",
                          "id + 0 = 3", "region = 'eu'", "NOT (id = 3)"}) {
    const ShardSelection s = Select(Bucket(16), sql);
    EXPECT_TRUE(s.all) << sql;
    EXPECT_TRUE(s.how.empty()) << sql << ": " << s.how;
  }
  EXPECT_TRUE(Select(table::LsmWriteSpec{}, "id = 3").all);  // unsharded
  EXPECT_TRUE(Select(Bucket(1), "id = 3").all);              // one bucket
  auto none = SelectShards(Bucket(16), *Schema(), nullptr);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->all);
}

TEST(ShardPruningTest, IdentityKeysAreTheRoutersGroups) {
  table::LsmWriteSpec spec;
  spec.mode = table::ShardingMode::kIdentity;
  spec.column = "region";
  auto batch = std::make_shared<arrow::RecordBatch>(
      Schema(), 3,
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array({1, 2, 3}),
                                       arrow::MakeUtf8Array({"eu", "us", "ap"})});
  auto parts = table::RouteRows(spec, {batch});
  ASSERT_TRUE(parts.ok());
  std::map<std::string, std::string> key_of;  // region -> identity key
  for (const auto& p : *parts) {
    key_of[std::string(arrow::Array(p.batches[0]->column_data(1)).GetView(0))] = p.identity_key;
  }
  const std::set<std::string> keys = {key_of.at("eu"), key_of.at("us")};
  const std::vector<std::string> want(keys.begin(), keys.end());
  const ShardSelection s = Select(spec, "region IN ('us', 'eu')");
  ASSERT_FALSE(s.all);
  EXPECT_EQ(s.identity_keys, want);
  EXPECT_EQ(Select(spec, "region = 'ap'").identity_keys, std::vector<std::string>{key_of.at("ap")});
  EXPECT_TRUE(Select(spec, "id = 1").all);
}

}  // namespace
}  // namespace strata::query
