#include "table/shard_router.h"

#include <gtest/gtest.h>

#include <set>

#include "arrow/builder.h"
#include "format/bucket_hash.h"
#include "format/key_encoding.h"

namespace strata::table {
namespace {

arrow::SchemaPtr Schema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("region", arrow::utf8())});
}

arrow::RecordBatchPtr Batch(const std::vector<std::optional<int64_t>>& ids,
                            const std::vector<std::optional<std::string>>& regions) {
  return std::make_shared<arrow::RecordBatch>(
      Schema(), static_cast<int64_t>(ids.size()),
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids), arrow::MakeUtf8Array(regions)});
}

arrow::RecordBatchPtr Ids(int64_t first, int64_t n) {
  std::vector<std::optional<int64_t>> ids;
  std::vector<std::optional<std::string>> regions;
  for (int64_t i = first; i < first + n; ++i) {
    ids.push_back(i);
    regions.push_back("r" + std::to_string(i % 3));
  }
  return Batch(ids, regions);
}

LsmWriteSpec Bucket(int64_t n) {
  LsmWriteSpec s;
  s.mode = ShardingMode::kBucket;
  s.column = "id";
  s.num_buckets = n;
  return s;
}

// (id, region) of every row of `part`, in order.
std::vector<std::pair<int64_t, std::string>> Rows(const ShardPart& part) {
  std::vector<std::pair<int64_t, std::string>> out;
  for (const auto& b : part.batches) {
    const arrow::Array ids = b->column(0);
    const arrow::Array regions = b->column(1);
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      out.emplace_back(ids.raw_values<int64_t>()[i],
                       regions.IsNull(i) ? "<null>" : std::string(regions.GetView(i)));
    }
  }
  return out;
}

TEST(ShardRouterTest, BucketsSplitEveryRowOnceByTheMemWalHashKeepingOrder) {
  const std::vector<arrow::RecordBatchPtr> in = {Ids(0, 400), Ids(400, 1), Ids(401, 599)};
  auto parts = RouteRows(Bucket(8), in);
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 8u);  // 1,000 ids touch every one of 8 buckets
  std::set<int64_t> seen;
  int64_t total = 0;
  for (size_t p = 0; p < parts->size(); ++p) {
    const ShardPart& part = (*parts)[p];
    EXPECT_EQ(part.bucket, static_cast<int64_t>(p));  // ascending, none empty
    int64_t last = -1;
    for (const auto& b : part.batches) {
      const arrow::Array ids = b->column(0);
      for (int64_t i = 0; i < b->num_rows(); ++i) {
        const int64_t id = ids.raw_values<int64_t>()[i];
        EXPECT_GT(id, last) << "order kept inside the shard";
        last = id;
        EXPECT_TRUE(seen.insert(id).second) << "id " << id << " routed twice";
        EXPECT_EQ(*format::BucketOfValue(ids, i, 8), part.bucket);
      }
    }
    EXPECT_EQ(static_cast<int64_t>(Rows(part).size()), part.rows);
    total += part.rows;
  }
  EXPECT_EQ(total, 1000);
  EXPECT_EQ(seen.size(), 1000u);
  // Iceberg's long 34 hashes to 2017239379 (tests/format/bucket_hash_test.cc): bucket 3 of 8.
  const auto& three = Rows((*parts)[3]);
  EXPECT_NE(std::find(three.begin(), three.end(), std::make_pair(int64_t{34}, std::string("r1"))),
            three.end());
}

TEST(ShardRouterTest, RepeatedKeysStayInOneShardInWriteOrder) {
  const auto in = Batch({5, 7, 5, 5}, {"a", "b", "c", "d"});
  auto parts = RouteRows(Bucket(16), {in});
  ASSERT_TRUE(parts.ok());
  int found = 0;
  for (const ShardPart& p : *parts) {
    std::vector<std::pair<int64_t, std::string>> fives;
    for (const auto& r : Rows(p)) {
      if (r.first == 5) fives.push_back(r);
    }
    if (fives.empty()) continue;
    ++found;
    EXPECT_EQ(fives, (std::vector<std::pair<int64_t, std::string>>{{5, "a"}, {5, "c"}, {5, "d"}}));
  }
  EXPECT_EQ(found, 1);
}

TEST(ShardRouterTest, ABatchWhollyInOneShardAndOneShardSpecsPassBatchesUncopied) {
  // Rows with one id only: one bucket, so the batch itself is the part's batch.
  const auto same = Batch({42, 42, 42}, {"x", "y", "z"});
  auto parts = RouteRows(Bucket(8), {same});
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].bucket, *format::BucketOfValue(same->column(0), 0, 8));
  ASSERT_EQ((*parts)[0].batches.size(), 1u);
  EXPECT_EQ((*parts)[0].batches[0].get(), same.get());

  const std::vector<arrow::RecordBatchPtr> in = {Ids(0, 10), Ids(10, 5)};
  for (const LsmWriteSpec& spec : {LsmWriteSpec{}, Bucket(1)}) {
    auto one = RouteRows(spec, in);
    ASSERT_TRUE(one.ok());
    ASSERT_EQ(one->size(), 1u);
    EXPECT_EQ((*one)[0].rows, 15);
    ASSERT_EQ((*one)[0].batches.size(), 2u);
    EXPECT_EQ((*one)[0].batches[0].get(), in[0].get());
    EXPECT_EQ((*one)[0].batches[1].get(), in[1].get());
  }
  auto none = RouteRows(Bucket(4), {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(ShardRouterTest, IdentityGroupsEqualValuesWithNullAsAValue) {
  LsmWriteSpec spec;
  spec.mode = ShardingMode::kIdentity;
  spec.column = "region";
  const auto a = Batch({1, 2, 3, 4}, {"eu", "us", std::nullopt, "eu"});
  const auto b = Batch({5, 6}, {"us", "eu"});
  auto parts = RouteRows(spec, {a, b});
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 3u);
  std::map<std::string, std::vector<std::pair<int64_t, std::string>>> by_region;
  std::set<std::string> keys;
  for (const ShardPart& p : *parts) {
    EXPECT_TRUE(keys.insert(p.identity_key).second);
    const auto rows = Rows(p);
    by_region[rows.at(0).second] = rows;
  }
  using R = std::vector<std::pair<int64_t, std::string>>;
  EXPECT_EQ(by_region["eu"], (R{{1, "eu"}, {4, "eu"}, {6, "eu"}}));
  EXPECT_EQ(by_region["us"], (R{{2, "us"}, {5, "us"}}));
  EXPECT_EQ(by_region["<null>"], (R{{3, "<null>"}}));
  // Parts come in ascending key order.
  for (size_t i = 1; i < parts->size(); ++i) {
    EXPECT_LT((*parts)[i - 1].identity_key, (*parts)[i].identity_key);
  }
}

TEST(ShardRouterTest, AMissingShardColumnIsRefusedNamingIt) {
  LsmWriteSpec spec = Bucket(4);
  spec.column = "tenant";
  auto r = RouteRows(spec, {Ids(0, 3)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("'tenant'"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("bucket"), std::string::npos) << r.status().ToString();
}

// mem_wal/describe/ shows each identity shard's value decoded from its key component.
TEST(ShardRouterTest, AnIdentityValueReadsBackFromItsKeyComponentAsJson) {
  auto json_of = [](const arrow::DataTypePtr& type, const arrow::ArrayDataPtr& data) {
    std::string key;
    EXPECT_TRUE(format::AppendValueComponent(arrow::Array(data), 0, &key).ok());
    auto v = IdentityValueJson(*type, key);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? *v : std::string("<error>");
  };
  EXPECT_EQ(json_of(arrow::int64(), arrow::MakeInt64Array({-7})), "-7");
  EXPECT_EQ(json_of(arrow::int64(), arrow::MakeInt64Array({INT64_MIN})), "-9223372036854775808");
  EXPECT_EQ(json_of(arrow::int64(), arrow::MakeInt64Array({INT64_MAX})), "9223372036854775807");
  EXPECT_EQ(json_of(arrow::int64(), arrow::MakeInt64Array({std::nullopt})), "null");
  EXPECT_EQ(json_of(arrow::utf8(), arrow::MakeUtf8Array({std::string("eu")})), "\"eu\"");
  EXPECT_EQ(json_of(arrow::utf8(), arrow::MakeUtf8Array({std::string("a\0\"b", 4)})),
            "\"a\\u0000\\\"b\"");
  EXPECT_EQ(json_of(arrow::utf8(), arrow::MakeUtf8Array({std::string()})), "\"\"");
  // Narrower integers and bool, from their components as the encoding defines them.
  std::string c;
  format::AppendSignedComponent(-5, 1, &c);
  EXPECT_EQ(*IdentityValueJson(*arrow::int8(), c), "-5");
  c.clear();
  format::AppendSignedComponent(-32768, 2, &c);
  EXPECT_EQ(*IdentityValueJson(*arrow::int16(), c), "-32768");
  c.clear();
  format::AppendSignedComponent(123456, 4, &c);
  EXPECT_EQ(*IdentityValueJson(*arrow::int32(), c), "123456");
  c.clear();
  format::AppendUnsignedComponent(65535, 2, &c);
  EXPECT_EQ(*IdentityValueJson(*arrow::uint16(), c), "65535");
  c.clear();
  format::AppendBoolComponent(true, &c);
  EXPECT_EQ(*IdentityValueJson(*arrow::boolean(), c), "true");
  // Malformed components are Corruption, never a wrong value.
  for (const std::string& bad : {std::string(), std::string("\x02", 1), std::string("\x00\x01", 2),
                                 std::string("\x01\x80", 2)}) {
    auto r = IdentityValueJson(*arrow::int32(), bad);
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << bad.size();
  }
  auto r = IdentityValueJson(*arrow::utf8(), std::string("\x01"
                                                         "ab",
                                                         3));  // no terminator
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace strata::table
