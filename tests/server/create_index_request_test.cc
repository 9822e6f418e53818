#include "server/create_index_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata::server {
namespace {

using index::DistanceType;
using index::IndexKind;

arrow::SchemaPtr TestSchema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false),
      arrow::field("text", arrow::utf8()),
      arrow::field("vector", arrow::fixed_size_list(arrow::field("item", arrow::float32()), 8)),
      arrow::field("My Col", arrow::int32()),
      arrow::field("a`b", arrow::utf8()),
  });
}

Result<index::IndexSpec> Parse(std::string_view body) {
  return ParseCreateIndexRequest(body, *TestSchema());
}

// The status of a failed parse; fails the test when the parse succeeded.
Status ErrorOf(std::string_view body) {
  auto r = Parse(body);
  EXPECT_FALSE(r.ok()) << "parsed: " << body;
  return r.ok() ? Status::OK() : r.status();
}

// PROTOCOL.md §5.4, "Default, vector column".
TEST(CreateIndexRequestTest, DefaultVectorBody) {
  auto r = Parse(R"({"column":"vector","index_type":"IVF_PQ","metric_type":"l2"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->name, "vector_idx");
  EXPECT_EQ(r->column, "vector");
  EXPECT_EQ(r->kind, IndexKind::kHnsw);
  EXPECT_EQ(r->requested_type, "IVF_PQ");
  EXPECT_EQ(r->hnsw.distance, DistanceType::kL2);
  EXPECT_EQ(r->hnsw.m, 16);
  EXPECT_EQ(r->hnsw.ef_construction, 100);
  EXPECT_EQ(nlohmann::json::parse(r->params_json), nlohmann::json({{"metric_type", "l2"}}));
  EXPECT_TRUE(r->uuid.empty());
}

// "Default, scalar column".
TEST(CreateIndexRequestTest, DefaultScalarBody) {
  auto r = Parse(R"({"column":"id","index_type":"BTREE"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->name, "id_idx");
  EXPECT_EQ(r->kind, IndexKind::kBTree);
  EXPECT_EQ(r->requested_type, "BTREE");
  EXPECT_EQ(r->params_json, "{}");
}

// Index.ivfPq({numPartitions:2, numSubVectors:2, distanceType:"cosine"}), name "vec_pq".
TEST(CreateIndexRequestTest, IvfPqWithParamsAndName) {
  const char* body =
      R"({"column":"vector","index_type":"IVF_PQ","metric_type":"cosine","num_partitions":2,)"
      R"("num_sub_vectors":2,"sample_rate":256,"max_iterations":50,"name":"vec_pq"})";
  auto r = Parse(body);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->name, "vec_pq");
  EXPECT_EQ(r->kind, IndexKind::kHnsw);
  EXPECT_EQ(r->hnsw.distance, DistanceType::kCosine);
  EXPECT_EQ(r->hnsw.m, 16);  // not an HNSW type: the MemTable defaults
  const auto params = nlohmann::json::parse(r->params_json);
  EXPECT_EQ(params.size(), 5u);
  EXPECT_EQ(params.at("num_partitions"), 2);
  EXPECT_EQ(params.at("num_sub_vectors"), 2);
  EXPECT_EQ(params.at("sample_rate"), 256);
  EXPECT_EQ(params.at("max_iterations"), 50);
  EXPECT_FALSE(params.contains("name"));
  EXPECT_FALSE(params.contains("column"));
}

// Index.hnswSq({distanceType:"dot"}): m and ef_construction are taken.
TEST(CreateIndexRequestTest, HnswSqTakesMAndEfConstruction) {
  auto r = Parse(R"({"column":"vector","ef_construction":300,"index_type":"IVF_HNSW_SQ","m":20,)"
                 R"("max_iterations":50,"metric_type":"dot","sample_rate":256})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kind, IndexKind::kHnsw);
  EXPECT_EQ(r->requested_type, "IVF_HNSW_SQ");
  EXPECT_EQ(r->hnsw.distance, DistanceType::kDot);
  EXPECT_EQ(r->hnsw.m, 20);
  EXPECT_EQ(r->hnsw.ef_construction, 300);
}

TEST(CreateIndexRequestTest, EveryVectorSpellingMapsToHnsw) {
  const std::pair<const char*, const char*> cases[] = {
      {"IVF_FLAT", "IVF_FLAT"},
      {"IVF_SQ", "IVF_SQ"},
      {"IVF_PQ", "IVF_PQ"},
      {"IVF_HNSW_PQ", "IVF_HNSW_PQ"},
      {"IVF_HNSW_SQ", "IVF_HNSW_SQ"},
      {"IVF_HNSW_FLAT", "IVF_HNSW_FLAT"},
      {"IvfFlat", "IVF_FLAT"},
      {"IvfSq", "IVF_SQ"},
      {"IvfPq", "IVF_PQ"},
      {"IvfHnswPq", "IVF_HNSW_PQ"},
      {"IvfHnswSq", "IVF_HNSW_SQ"},
      {"IvfHnswFlat", "IVF_HNSW_FLAT"},
  };
  for (const auto& [sent, canonical] : cases) {
    const std::string body = std::string(R"({"column":"vector","index_type":")") + sent +
                             R"(","metric_type":"cosine","sample_rate":256,"max_iterations":50})";
    auto r = Parse(body);
    ASSERT_TRUE(r.ok()) << sent << ": " << r.status().ToString();
    EXPECT_EQ(r->kind, IndexKind::kHnsw) << sent;
    EXPECT_EQ(r->requested_type, canonical) << sent;
    EXPECT_EQ(r->hnsw.distance, DistanceType::kCosine) << sent;
    // The base table builds IVF_FLAT / IVF_SQ / IVF_PQ as such; the IVF_HNSW_* types as HNSW.
    const std::string c = canonical;
    EXPECT_EQ(r->base_ivf, c == "IVF_FLAT" || c == "IVF_SQ" || c == "IVF_PQ") << sent;
  }
}

// FAISS 1.7.3 has no RaBitQ: IVF_RQ is refused naming it, not served by another index.
TEST(CreateIndexRequestTest, IvfRqIsNotSupported) {
  for (const char* sent : {"IVF_RQ", "IvfRq"}) {
    auto r = Parse(std::string(R"({"column":"vector","index_type":")") + sent + R"("})");
    ASSERT_FALSE(r.ok()) << sent;
    EXPECT_EQ(r.status().code(), StatusCode::kNotSupported) << sent;
    EXPECT_NE(r.status().message().find(sent), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("RaBitQ"), std::string::npos) << r.status().message();
  }
}

TEST(CreateIndexRequestTest, ScalarAndFtsSpellings) {
  const std::tuple<const char*, const char*, const char*, IndexKind> cases[] = {
      {"BTREE", "id", "BTREE", IndexKind::kBTree},
      {"BTree", "id", "BTREE", IndexKind::kBTree},
      {"BITMAP", "id", "BITMAP", IndexKind::kBTree},
      {"Bitmap", "id", "BITMAP", IndexKind::kBTree},
      {"FTS", "text", "FTS", IndexKind::kFts},
      {"INVERTED", "text", "INVERTED", IndexKind::kFts},
      {"Inverted", "text", "INVERTED", IndexKind::kFts},
  };
  for (const auto& [sent, column, canonical, kind] : cases) {
    const std::string body =
        std::string(R"({"column":")") + column + R"(","index_type":")" + sent + R"("})";
    auto r = Parse(body);
    ASSERT_TRUE(r.ok()) << sent << ": " << r.status().ToString();
    EXPECT_EQ(r->kind, kind) << sent;
    EXPECT_EQ(r->requested_type, canonical) << sent;
    EXPECT_EQ(r->name, std::string(column) + "_idx");
  }
}

TEST(CreateIndexRequestTest, UnsupportedAndInvalidTypes) {
  for (const char* t : {"LABEL_LIST", "LabelList", "FM"}) {
    Status st = ErrorOf(std::string(R"({"column":"id","index_type":")") + t + R"("})");
    EXPECT_EQ(st.code(), StatusCode::kNotSupported) << t;
    EXPECT_NE(st.message().find(t), std::string::npos) << st.message();
  }
  for (const char* t : {"btree", "fts", "HNSW", "ivf_pq", ""}) {
    Status st = ErrorOf(std::string(R"({"column":"id","index_type":")") + t + R"("})");
    EXPECT_TRUE(st.IsInvalid()) << t << ": " << st.ToString();
    EXPECT_NE(st.message().find("index_type"), std::string::npos) << st.message();
  }
}

// Index.fts(): every key the client sends, with its defaults.
TEST(CreateIndexRequestTest, FtsDefaultBody) {
  const char* body =
      R"({"column":"text","index_type":"FTS","base_tokenizer":"simple","language":"English",)"
      R"("with_position":false,"max_token_length":40,"lower_case":true,"stem":true,)"
      R"("remove_stop_words":true,"ascii_folding":true,"min_ngram_length":3,)"
      R"("max_ngram_length":3,"prefix_only":false,"custom_stop_words":null,)"
      R"("lance_tokenizer":null})";
  auto r = Parse(body);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->name, "text_idx");
  EXPECT_EQ(r->kind, IndexKind::kFts);
  EXPECT_EQ(r->fts.base_tokenizer, "simple");
  EXPECT_EQ(r->fts.language, "English");
  EXPECT_FALSE(r->fts.with_position);
  EXPECT_EQ(r->fts.max_token_length, 40);
  EXPECT_TRUE(r->fts.lower_case);
  EXPECT_TRUE(r->fts.stem);
  EXPECT_TRUE(r->fts.remove_stop_words);
  EXPECT_TRUE(r->fts.ascii_folding);
  const auto params = nlohmann::json::parse(r->params_json);
  EXPECT_EQ(params.size(), 13u);
  EXPECT_TRUE(params.at("custom_stop_words").is_null());
}

TEST(CreateIndexRequestTest, FtsNonDefaultParameters) {
  auto r = Parse(
      R"({"column":"text","index_type":"FTS","base_tokenizer":"whitespace","with_position":true,)"
      R"("max_token_length":7,"lower_case":false,"stem":false,"remove_stop_words":false,)"
      R"("ascii_folding":false})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->fts.base_tokenizer, "whitespace");
  EXPECT_TRUE(r->fts.with_position);
  EXPECT_EQ(r->fts.max_token_length, 7);
  EXPECT_FALSE(r->fts.lower_case);
  EXPECT_FALSE(r->fts.stem);
  EXPECT_FALSE(r->fts.remove_stop_words);
  EXPECT_FALSE(r->fts.ascii_folding);

  auto no_limit = Parse(R"({"column":"text","index_type":"FTS","max_token_length":null})");
  ASSERT_TRUE(no_limit.ok()) << no_limit.status().ToString();
  EXPECT_EQ(no_limit->fts.max_token_length, index::kMaxTokenLengthLimit);
}

TEST(CreateIndexRequestTest, FtsUnsupportedValuesNameTheKey) {
  const std::pair<const char*, const char*> cases[] = {
      {R"("base_tokenizer":"ngram")", "base_tokenizer"},
      {R"("language":"French")", "language"},
      {R"("min_ngram_length":2)", "min_ngram_length"},
      {R"("max_ngram_length":5)", "max_ngram_length"},
      {R"("prefix_only":true)", "prefix_only"},
      {R"("custom_stop_words":["the"])", "custom_stop_words"},
      {R"("lance_tokenizer":"x")", "lance_tokenizer"},
  };
  for (const auto& [kv, key] : cases) {
    Status st = ErrorOf(std::string(R"({"column":"text","index_type":"FTS",)") + kv + "}");
    EXPECT_EQ(st.code(), StatusCode::kNotSupported) << kv << ": " << st.ToString();
    EXPECT_NE(st.message().find(key), std::string::npos) << st.message();
  }
  const std::pair<const char*, const char*> invalid[] = {
      {R"("max_token_length":0)", "max_token_length"},
      {R"("max_token_length":1025)", "max_token_length"},
      {R"("max_token_length":"40")", "max_token_length"},
      {R"("stem":"yes")", "stem"},
      {R"("with_position":1)", "with_position"},
  };
  for (const auto& [kv, key] : invalid) {
    Status st = ErrorOf(std::string(R"({"column":"text","index_type":"FTS",)") + kv + "}");
    EXPECT_TRUE(st.IsInvalid()) << kv << ": " << st.ToString();
    EXPECT_NE(st.message().find(key), std::string::npos) << st.message();
  }
}

TEST(CreateIndexRequestTest, MetricTypes) {
  auto mk = [](const char* metric) {
    return std::string(R"({"column":"vector","index_type":"IVF_PQ","metric_type":")") + metric +
           R"("})";
  };
  auto cosine = Parse(mk("COSINE"));
  ASSERT_TRUE(cosine.ok());
  EXPECT_EQ(cosine->hnsw.distance, DistanceType::kCosine);
  auto none = Parse(R"({"column":"vector","index_type":"IVF_FLAT"})");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->hnsw.distance, DistanceType::kL2);
  Status hamming = ErrorOf(mk("hamming"));
  EXPECT_EQ(hamming.code(), StatusCode::kNotSupported);
  EXPECT_NE(hamming.message().find("metric_type"), std::string::npos);
  Status bad = ErrorOf(mk("manhattan"));
  EXPECT_TRUE(bad.IsInvalid());
  EXPECT_NE(bad.message().find("metric_type"), std::string::npos);
}

TEST(CreateIndexRequestTest, HnswParameterRanges) {
  auto mk = [](const char* kv) {
    return std::string(R"({"column":"vector","index_type":"IVF_HNSW_SQ",)") + kv + "}";
  };
  const std::pair<const char*, const char*> invalid[] = {
      {R"("m":1)", "m must be"},
      {R"("m":129)", "m must be"},
      {R"("m":2.5)", "m must be"},
      {R"("ef_construction":4097)", "ef_construction"},
      {R"("m":40,"ef_construction":39)", "ef_construction"},
      {R"("num_partitions":0)", "num_partitions"},
      {R"("num_sub_vectors":-1)", "num_sub_vectors"},
      {R"("sample_rate":"256")", "sample_rate"},
  };
  for (const auto& [kv, what] : invalid) {
    Status st = ErrorOf(mk(kv));
    EXPECT_TRUE(st.IsInvalid()) << kv << ": " << st.ToString();
    EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
  }
  auto edge = Parse(mk(R"("m":128,"ef_construction":128)"));
  ASSERT_TRUE(edge.ok()) << edge.status().ToString();
  EXPECT_EQ(edge->hnsw.m, 128);
  EXPECT_EQ(edge->hnsw.ef_construction, 128);
}

TEST(CreateIndexRequestTest, KeysOfAnotherFamilyAreRejected) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"column":"id","index_type":"BTREE","metric_type":"l2"})", "metric_type"},
      {R"({"column":"vector","index_type":"IVF_PQ","m":20})", "\"m\""},
      {R"({"column":"vector","index_type":"IVF_PQ","stem":true})", "stem"},
      {R"({"column":"text","index_type":"FTS","num_partitions":4})", "num_partitions"},
      {R"({"column":"id","index_type":"BTREE","replace":true})", "replace"},
  };
  for (const auto& [body, key] : cases) {
    Status st = ErrorOf(body);
    EXPECT_TRUE(st.IsInvalid()) << body << ": " << st.ToString();
    EXPECT_NE(st.message().find(key), std::string::npos) << st.message();
  }
}

TEST(CreateIndexRequestTest, ColumnResolution) {
  auto lower = Parse(R"({"column":"VECTOR","index_type":"IVF_PQ"})");
  ASSERT_TRUE(lower.ok()) << lower.status().ToString();
  EXPECT_EQ(lower->column, "vector");
  EXPECT_EQ(lower->name, "VECTOR_idx");  // the client waits for `{column as sent}_idx`

  auto quoted = Parse(R"({"column":"`My Col`","index_type":"BTREE"})");
  ASSERT_TRUE(quoted.ok()) << quoted.status().ToString();
  EXPECT_EQ(quoted->column, "My Col");
  EXPECT_EQ(quoted->name, "My Col_idx");

  auto plain = Parse(R"({"column":"my col","index_type":"BTREE"})");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->column, "My Col");
  EXPECT_EQ(plain->name, "my col_idx");

  auto backtick = Parse(R"({"column":"`a``b`","index_type":"FTS"})");
  ASSERT_TRUE(backtick.ok()) << backtick.status().ToString();
  EXPECT_EQ(backtick->column, "a`b");

  Status missing = ErrorOf(R"({"column":"nope","index_type":"BTREE"})");
  EXPECT_TRUE(missing.IsInvalid());
  EXPECT_NE(missing.message().find("nope"), std::string::npos);
  EXPECT_NE(missing.message().find("id, text, vector"), std::string::npos) << missing.message();

  Status nested = ErrorOf(R"({"column":"vector.item","index_type":"BTREE"})");
  EXPECT_EQ(nested.code(), StatusCode::kNotSupported) << nested.ToString();
  Status unterminated = ErrorOf(R"({"column":"`id","index_type":"BTREE"})");
  EXPECT_TRUE(unterminated.IsInvalid());

  auto ambiguous_schema = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("Name", arrow::utf8()), arrow::field("name", arrow::utf8())});
  auto exact =
      ParseCreateIndexRequest(R"({"column":"name","index_type":"FTS"})", *ambiguous_schema);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->column, "name");
  auto amb = ParseCreateIndexRequest(R"({"column":"NAME","index_type":"FTS"})", *ambiguous_schema);
  ASSERT_FALSE(amb.ok());
  EXPECT_NE(amb.status().message().find("ambiguous"), std::string::npos);
}

TEST(CreateIndexRequestTest, NamesAndMalformedBodies) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty"},
      {"   ", "empty"},
      {"[1]", "JSON object"},
      {"{\"column\":", "not valid JSON"},
      {R"({"index_type":"BTREE"})", "\"column\" is required"},
      {R"({"column":"id"})", "\"index_type\" is required"},
      {R"({"column":5,"index_type":"BTREE"})", "column must be a string"},
      {R"({"column":"id","index_type":["BTREE"]})", "index_type must be a string"},
      {R"({"column":"id","index_type":"BTREE","name":""})", "name must be 1 to 256"},
      {R"({"column":"id","index_type":"BTREE","name":"a/b"})", "name"},
      {R"({"column":"id","index_type":"BTREE","name":".."})", "name"},
      {R"({"column":"id","index_type":"BTREE","name":"100%"})", "'%', '#' or '?'"},
      {R"({"column":"id","index_type":"BTREE","name":"a#1"})", "'%', '#' or '?'"},
      {R"({"column":"id","index_type":"BTREE","name":"why?"})", "'%', '#' or '?'"},
      {R"({"column":"id","index_type":"BTREE","name":"a\u0001"})", "name"},
      {R"({"column":"id","index_type":"BTREE","name":7})", "name must be a string"},
      {R"({"column":"id","index_type":"BTREE","branch":"dev"})", "branch"},
  };
  for (const auto& [body, what] : cases) {
    Status st = ErrorOf(body);
    EXPECT_TRUE(st.IsInvalid() || st.code() == StatusCode::kNotSupported) << body;
    EXPECT_NE(st.message().find(what), std::string::npos) << body << " -> " << st.message();
  }
  std::string deep = R"({"column":"id","index_type":"BTREE","x":)";
  for (int i = 0; i < 100; ++i) deep += "[";
  Status st = ErrorOf(deep);
  EXPECT_NE(st.message().find("nesting"), std::string::npos) << st.message();

  auto named = Parse(R"({"column":"id","index_type":"BTREE","name":"my index ä"})");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->name, "my index ä");
  auto main_branch = Parse(R"({"column":"id","index_type":"BTREE","branch":"main"})");
  ASSERT_TRUE(main_branch.ok());
  EXPECT_EQ(main_branch->params_json, "{}");
}

}  // namespace
}  // namespace strata::server
