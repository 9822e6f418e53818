// LsmWriteSpec parsing, validation against a table, the one-shard check, writer options and
// the manifest round trip (table/lsm_write_spec.h, table/writer_config.h). Every error names
// the field it is about.
#include "table/lsm_write_spec.h"

#include <gtest/gtest.h>

#include "table/writer_config.h"

namespace strata::table {
namespace {

/// The message of the error ParseLsmWriteSpec gives for `json` (empty when it parses).
std::string ParseError(const std::string& json) {
  auto r = ParseLsmWriteSpec(json);
  if (r.ok()) return "";
  EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
  return r.status().message();
}

TEST(LsmWriteSpec, ParsesTheSdkShapes) {
  auto bucket = ParseLsmWriteSpec(
      R"({"maintained_indexes":["vector_idx"],"sharding":{"column":"id","mode":"bucket","num_buckets":4},"writer_config_defaults":{"durable_write":"true"}})");
  ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
  EXPECT_EQ(bucket->mode, ShardingMode::kBucket);
  EXPECT_EQ(bucket->column, "id");
  EXPECT_EQ(bucket->num_buckets, 4);
  EXPECT_EQ(bucket->NumShards(), 4);
  EXPECT_EQ(bucket->maintained_indexes, std::vector<std::string>{"vector_idx"});
  EXPECT_EQ(bucket->writer_config_defaults.at("durable_write"), "true");

  auto identity = ParseLsmWriteSpec(
      R"({"maintained_indexes":[],"sharding":{"column":"region","mode":"identity"},"writer_config_defaults":{}})");
  ASSERT_TRUE(identity.ok());
  EXPECT_EQ(identity->mode, ShardingMode::kIdentity);
  EXPECT_EQ(identity->NumShards(), 0);

  auto unsharded = ParseLsmWriteSpec(
      R"({"maintained_indexes":[],"sharding":{"mode":"unsharded"},"writer_config_defaults":{}})");
  ASSERT_TRUE(unsharded.ok());
  EXPECT_EQ(unsharded->mode, ShardingMode::kUnsharded);
  EXPECT_EQ(unsharded->NumShards(), 1);
  EXPECT_TRUE(unsharded->maintained_indexes.empty());
}

TEST(LsmWriteSpec, JsonRoundTrip) {
  auto spec = ParseLsmWriteSpec(
      R"({"sharding":{"mode":"bucket","column":"id","num_buckets":1},"maintained_indexes":["a","b","a"],"writer_config_defaults":{"max_memtable_rows":"7"}})");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->maintained_indexes, (std::vector<std::string>{"a", "b"}));  // deduplicated
  auto again = ParseLsmWriteSpec(LsmWriteSpecToJson(*spec));
  ASSERT_TRUE(again.ok()) << LsmWriteSpecToJson(*spec);
  EXPECT_EQ(*again, *spec);
}

TEST(LsmWriteSpec, ShapeErrorsNameTheField) {
  EXPECT_NE(ParseError("not json").find("not valid JSON"), std::string::npos);
  EXPECT_NE(ParseError("[]").find("JSON object"), std::string::npos);
  EXPECT_NE(ParseError("{}").find("sharding is required"), std::string::npos);
  EXPECT_NE(ParseError(R"({"sharding":{"mode":"range"}})").find("sharding.mode"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"sharding":{}})").find("sharding.mode"), std::string::npos);
  EXPECT_NE(ParseError(R"({"sharding":{"mode":"bucket","num_buckets":4}})").find("sharding.column"),
            std::string::npos);
  EXPECT_NE(
      ParseError(R"({"sharding":{"mode":"bucket","column":"id"}})").find("sharding.num_buckets"),
      std::string::npos);
  for (const char* n : {"0", "1025", "-3", "2.5", "\"4\"", "99999999999999999999"}) {
    const std::string msg = ParseError(
        std::string(R"({"sharding":{"mode":"bucket","column":"id","num_buckets":)") + n + "}}");
    EXPECT_NE(msg.find("sharding.num_buckets"), std::string::npos) << n << ": " << msg;
    EXPECT_NE(msg.find("[1, 1024]"), std::string::npos) << n << ": " << msg;
  }
  EXPECT_NE(
      ParseError(R"({"sharding":{"mode":"unsharded","column":"id"}})").find("sharding.column"),
      std::string::npos);
  EXPECT_NE(ParseError(R"({"sharding":{"mode":"identity","column":"r","num_buckets":2}})")
                .find("sharding.num_buckets"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"sharding":{"mode":"unsharded","extra":1}})").find("sharding.extra"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"sharding":{"mode":"unsharded"},"shards":3})").find("shards"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"sharding":{"mode":"unsharded"},"maintained_indexes":"v"})")
                .find("maintained_indexes"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"sharding":{"mode":"unsharded"},"maintained_indexes":["v",""]})")
                .find("maintained_indexes[1]"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"sharding":{"mode":"unsharded"},"writer_config_defaults":[]})")
                .find("writer_config_defaults"),
            std::string::npos);
}

TEST(LsmWriteSpec, WriterConfigErrorsNameKeyAndLimit) {
  auto err = [](const std::string& key, const std::string& value) {
    return ParseError(R"({"sharding":{"mode":"unsharded"},"writer_config_defaults":{")" + key +
                      R"(":")" + value + R"("}})");
  };
  std::string m = err("max_memtable_rows", "abc");
  EXPECT_NE(m.find("writer_config_defaults.max_memtable_rows"), std::string::npos) << m;
  EXPECT_NE(m.find("[1, 1099511627776]"), std::string::npos) << m;
  m = err("max_memtable_rows", "0");
  EXPECT_NE(m.find("max_memtable_rows"), std::string::npos) << m;
  m = err("max_memtable_rows", "12x");
  EXPECT_NE(m.find("'12x'"), std::string::npos) << m;
  m = err("durable_write", "yes");
  EXPECT_NE(m.find("writer_config_defaults.durable_write must be 'true' or 'false'"),
            std::string::npos)
      << m;
  m = err("max_memtable_bytes", "10");
  EXPECT_NE(m.find("[1024, "), std::string::npos) << m;
  m = err("sync_indexed_write", "true");
  EXPECT_NE(m.find("writer_config_defaults.sync_indexed_write is not a writer option"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("max_memtable_rows"), std::string::npos) << "lists the known keys: " << m;
  EXPECT_EQ(err("max_memtable_age_ms", "5000"), "");
  EXPECT_EQ(err("write_stall_timeout_ms", "2500"), "");
  // Numbers and booleans in JSON are accepted as their text.
  auto typed = ParseLsmWriteSpec(
      R"({"sharding":{"mode":"unsharded"},"writer_config_defaults":{"max_memtable_rows":50,"durable_write":false}})");
  ASSERT_TRUE(typed.ok()) << typed.status().ToString();
  EXPECT_EQ(typed->writer_config_defaults.at("max_memtable_rows"), "50");
  EXPECT_EQ(typed->writer_config_defaults.at("durable_write"), "false");
}

TEST(LsmWriteSpec, ApplyWriterConfig) {
  shard::ShardWriterOptions o;
  ASSERT_TRUE(ApplyWriterConfig({{"durable_write", "false"},
                                 {"max_memtable_rows", "123"},
                                 {"max_memtable_bytes", "4096"},
                                 {"max_memtable_age_ms", "250"},
                                 {"max_unflushed_bytes", "1048576"},
                                 {"max_frozen_memtables", "3"},
                                 {"write_stall_timeout_ms", "700"}},
                                &o)
                  .ok());
  EXPECT_FALSE(o.durable_write);
  EXPECT_EQ(o.max_memtable_rows, 123);
  EXPECT_EQ(o.max_memtable_bytes, 4096);
  EXPECT_EQ(o.max_memtable_age.count(), 250);
  EXPECT_EQ(o.max_unflushed_bytes, 1048576);
  EXPECT_EQ(o.max_frozen_memtables, 3);
  EXPECT_EQ(o.write_stall_timeout.count(), 700);
  // A bad key changes nothing, not even the good keys before it.
  shard::ShardWriterOptions p;
  EXPECT_TRUE(ApplyWriterConfig({{"durable_write", "false"}, {"nope", "1"}}, &p).IsInvalid());
  EXPECT_TRUE(p.durable_write);
  EXPECT_EQ(WriterConfigKeys().size(), 7u);
}

class ValidateTest : public ::testing::Test {
 protected:
  ValidateTest() {
    schema_ = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
        arrow::field("id", arrow::int64(), false), arrow::field("region", arrow::utf8(), true),
        arrow::field("score", arrow::float64(), true),
        arrow::field("vector",
                     arrow::fixed_size_list(arrow::field("item", arrow::float32(), true), 4),
                     true)});
    index::IndexSpec v;
    v.name = "vector_idx";
    v.column = "vector";
    v.kind = index::IndexKind::kHnsw;
    target_ = {schema_.get(), {"id"}, {v}};
  }
  std::string Error(const std::string& json) {
    auto spec = ParseLsmWriteSpec(json);
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    Status st = ValidateLsmWriteSpec(*spec, target_);
    if (st.ok()) return "";
    EXPECT_TRUE(st.IsInvalid());
    return st.message();
  }
  arrow::SchemaPtr schema_;
  LsmSpecTarget target_;
};

TEST_F(ValidateTest, AcceptsValidSpecs) {
  EXPECT_EQ(Error(R"({"sharding":{"mode":"unsharded"},"maintained_indexes":["vector_idx"]})"), "");
  EXPECT_EQ(Error(R"({"sharding":{"mode":"bucket","column":"id","num_buckets":1}})"), "");
  EXPECT_EQ(Error(R"({"sharding":{"mode":"bucket","column":"id","num_buckets":1024}})"), "");
  // Identity by a column of the key (a one-column key has no other column to shard by).
  target_.primary_key = {"region", "id"};
  EXPECT_EQ(Error(R"({"sharding":{"mode":"identity","column":"region"}})"), "");
}

TEST_F(ValidateTest, IdentityShardsByAKeyColumnOnly) {
  // `region` is not in the key {id}: one id could then live in two shards.
  EXPECT_NE(Error(R"({"sharding":{"mode":"identity","column":"region"}})")
                .find("sharding.column 'region' must be one of the primary key's columns (id)"),
            std::string::npos);
}

TEST_F(ValidateTest, RulesNameTheField) {
  EXPECT_NE(Error(R"({"sharding":{"mode":"bucket","column":"region","num_buckets":2}})")
                .find("sharding.column 'region' must be the table's primary key column 'id'"),
            std::string::npos);
  EXPECT_NE(
      Error(R"({"sharding":{"mode":"identity","column":"nope"}})").find("sharding.column 'nope'"),
      std::string::npos);
  EXPECT_NE(Error(R"({"sharding":{"mode":"identity","column":"score"}})")
                .find("sharding.column 'score' has type"),
            std::string::npos);
  EXPECT_NE(Error(R"({"sharding":{"mode":"identity","column":"vector"}})")
                .find("sharding.column 'vector'"),
            std::string::npos);
  EXPECT_NE(Error(R"({"sharding":{"mode":"unsharded"},"maintained_indexes":["label_idx"]})")
                .find("maintained_indexes: 'label_idx' is not an index of the table (indexes: "
                      "vector_idx)"),
            std::string::npos);
  target_.primary_key = {"id", "region"};
  EXPECT_NE(Error(R"({"sharding":{"mode":"bucket","column":"id","num_buckets":2}})")
                .find("single-column primary key"),
            std::string::npos);
  target_.primary_key.clear();
  EXPECT_NE(Error(R"({"sharding":{"mode":"unsharded"}})").find("needs a table with a primary key"),
            std::string::npos);
}

TEST(LsmWriteSpecProto, RoundTripAndCorruption) {
  LsmWriteSpec s;
  s.mode = ShardingMode::kBucket;
  s.column = "id";
  s.num_buckets = 1;
  s.maintained_indexes = {"vector_idx"};
  s.writer_config_defaults = {{"max_memtable_rows", "10"}};
  auto back = LsmWriteSpecFromProto(LsmWriteSpecToProto(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, s);
  format::LsmWriteSpec bad = LsmWriteSpecToProto(s);
  bad.set_mode("range");
  EXPECT_EQ(LsmWriteSpecFromProto(bad).status().code(), StatusCode::kCorruption);
  bad.set_mode("bucket");
  bad.set_num_buckets(0);
  EXPECT_EQ(LsmWriteSpecFromProto(bad).status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace strata::table
