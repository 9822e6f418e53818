#include "server/query_request.h"

#include <gtest/gtest.h>

#include <limits>

namespace strata::server {
namespace {

TEST(QueryRequestTest, PlainQueryWithI64MaxK) {
  auto r = ParseQueryRequest(
      R"({"k":9223372036854775807,"prefilter":true,"vector":[],"version":null,"offset":3,)"
      R"("columns":["id","name"],"with_row_id":true})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(std::holds_alternative<query::ScanOptions>(r->plan));
  const auto& scan = std::get<query::ScanOptions>(r->plan);
  EXPECT_EQ(scan.limit, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(scan.offset, 3);
  ASSERT_EQ(scan.columns.size(), 2u);
  EXPECT_EQ(scan.columns[1].name, "name");
  EXPECT_TRUE(scan.with_row_id);
  EXPECT_FALSE(r->version.has_value());
}

TEST(QueryRequestTest, VectorQueryAsTheNodeClientSendsIt) {
  auto r = ParseQueryRequest(
      R"({"k":10,"vector":[0.10000000149011612,2,-3.5],"distance_type":"cosine",)"
      R"("nprobes":20,"minimum_nprobes":20,"maximum_nprobes":20,"lower_bound":null,)"
      R"("upper_bound":null,"ef":null,"refine_factor":null,"prefilter":true,"version":4,)"
      R"("columns":{"ident":"id","v":"`vector`"},"filter":"name = 'x'","vector_column":"vector"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(std::holds_alternative<query::VectorSearchOptions>(r->plan));
  const auto& vs = std::get<query::VectorSearchOptions>(r->plan);
  EXPECT_EQ(vs.k, 10);
  EXPECT_EQ(vs.query, (std::vector<float>{0.1f, 2.0f, -3.5f}));
  EXPECT_EQ(vs.distance, query::DistanceType::kCosine);
  EXPECT_EQ(vs.column, "vector");
  ASSERT_EQ(vs.columns.size(), 2u);
  EXPECT_EQ(vs.columns[0].alias, "ident");
  EXPECT_EQ(vs.columns[0].name, "id");
  EXPECT_EQ(vs.columns[1].name, "vector");
  ASSERT_TRUE(vs.filter.has_value());
  EXPECT_EQ(*vs.filter, "name = 'x'");
  EXPECT_TRUE(vs.prefilter);
  EXPECT_FALSE(vs.lower_bound.has_value());
  EXPECT_EQ(r->version, 4u);
}

// The fast parser (common/json_fast_parse.h) reads a flat vector into floats; a body it
// declines (here an integer beyond 64 bits, which nlohmann reads as a float) takes nlohmann's
// path, and the vector then comes from nlohmann's tree: the same request either way.
TEST(QueryRequestTest, VectorIsTheSameThroughTheFastAndTheFallbackParser) {
  for (const char* extra : {"", R"(,"fast_search":18446744073709551616)"}) {
    auto r = ParseQueryRequest(std::string(R"({"vector":[0.5,-2,3e1],"k":4)") + extra + "}");
    ASSERT_TRUE(r.ok()) << extra << ": " << r.status().ToString();
    const auto& vs = std::get<query::VectorSearchOptions>(r->plan);
    EXPECT_EQ(vs.query, (std::vector<float>{0.5f, -2.0f, 30.0f})) << extra;
    EXPECT_EQ(vs.k, 4) << extra;
  }
  // [[...]] (one vector wrapped) and a repeated "vector" key (the last one counts).
  auto wrapped = ParseQueryRequest(R"({"vector":[[1,2]],"k":1})");
  ASSERT_TRUE(wrapped.ok()) << wrapped.status().ToString();
  EXPECT_EQ(std::get<query::VectorSearchOptions>(wrapped->plan).query, (std::vector<float>{1, 2}));
  auto repeated = ParseQueryRequest(R"({"vector":[1,2],"k":1,"vector":[5,6,7]})");
  ASSERT_TRUE(repeated.ok()) << repeated.status().ToString();
  EXPECT_EQ(std::get<query::VectorSearchOptions>(repeated->plan).query,
            (std::vector<float>{5, 6, 7}));
  auto to_scan = ParseQueryRequest(R"({"vector":[1,2],"k":1,"vector":[]})");
  ASSERT_TRUE(to_scan.ok()) << to_scan.status().ToString();
  EXPECT_TRUE(std::holds_alternative<query::ScanOptions>(to_scan->plan));
  // Too deep: rejected by the fallback's depth check, naming the route.
  std::string deep =
      R"({"k":1,"vector":[1],"x":)" + std::string(70, '[') + std::string(70, ']') + "}";
  auto too_deep = ParseQueryRequest(deep);
  ASSERT_FALSE(too_deep.ok());
  EXPECT_NE(too_deep.status().message().find("JSON nesting is deeper than the limit of 64"),
            std::string::npos)
      << too_deep.status().ToString();
}

TEST(QueryRequestTest, CarriesFiltersBoundsAndDynamicProjections) {
  auto r = ParseQueryRequest(
      R"x({"k":5,"vector":[1,2],"filter":"price > 1 AND cat IN ('a','b')","prefilter":false,)x"
      R"x("lower_bound":0.5,"upper_bound":2,"columns":{"double":"price * 2","c":"cat"}})x");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& vs = std::get<query::VectorSearchOptions>(r->plan);
  EXPECT_EQ(*vs.filter, "price > 1 AND cat IN ('a','b')");
  EXPECT_FALSE(vs.prefilter);
  EXPECT_FLOAT_EQ(*vs.lower_bound, 0.5f);
  EXPECT_FLOAT_EQ(*vs.upper_bound, 2.0f);
  ASSERT_EQ(vs.columns.size(), 2u);
  // Output columns keep the order the client gave.
  EXPECT_EQ(vs.columns[0].alias, "double");
  EXPECT_EQ(vs.columns[0].name, "price * 2");
  EXPECT_EQ(vs.columns[1].alias, "c");
  EXPECT_EQ(vs.columns[1].name, "cat");
}

TEST(QueryRequestTest, RejectsWhatIsNotSupported) {
  struct Case {
    const char* body;
    const char* needle;
    StatusCode code;
  };
  for (
      const Case& c : {
          Case{R"({"k":-1,"vector":[]})", "k must be >= 0", StatusCode::kInvalidArgument},
          Case{R"({"k":"ten","vector":[]})", "k must be an integer", StatusCode::kInvalidArgument},
          Case{R"({"k":1,"vector":[1,"a"]})", "element 1 must be a number",
               StatusCode::kInvalidArgument},
          Case{R"({"k":1,"vector":[[1,2],[3,4]]})", "multi-vector", StatusCode::kNotSupported},
          Case{R"({"k":1,"vector":[],"filter":3})", "filter must be a string",
               StatusCode::kInvalidArgument},
          Case{R"({"k":1,"vector":[1,2],"lower_bound":"a"})", "lower_bound must be a number",
               StatusCode::kInvalidArgument},
          Case{R"({"k":2,"vector":[1,0],"columns":{"_distance":"id"}})",
               "'_distance' clashes with the column this query appends",
               StatusCode::kInvalidArgument},
          Case{R"({"k":2,"vector":[],"with_row_id":true,"columns":{"_rowid":"id"}})",
               "'_rowid' clashes", StatusCode::kInvalidArgument},
          Case{R"({"k":2,"vector":[],"columns":{"":"id"}})", "must not be empty",
               StatusCode::kInvalidArgument},
          Case{R"({"k":1,"vector":[],"full_text_query":{"query":{"multi_match":{"query":"hi"}}}})",
               "full_text_query.query.multi_match", StatusCode::kNotSupported},
          Case{R"({"k":1,"vector":[],"full_text_query":{"query":{"boolean":{"must":[]}}}})",
               "full_text_query.query.boolean", StatusCode::kNotSupported},
          Case{
              R"({"k":1,"vector":[],"full_text_query":{"query":{"match":{"terms":"a","fuzziness":2}}}})",
              "fuzziness", StatusCode::kNotSupported},
          Case{
              R"({"k":1,"vector":[],"full_text_query":{"query":{"phrase":{"terms":"a b","slop":1}}}})",
              "slop", StatusCode::kNotSupported},
          Case{
              R"({"k":1,"vector":[],"full_text_query":{"query":{"match":{"terms":"a","operator":"Xor"}}}})",
              "operator must be", StatusCode::kInvalidArgument},
          Case{R"({"k":1,"vector":[],"full_text_query":{"query":{"match":{"terms":3}}}})",
               "terms must be a string", StatusCode::kInvalidArgument},
          Case{R"({"k":1,"vector":[],"full_text_query":{"columns":"text","query":"hi"}})",
               "full_text_query.columns", StatusCode::kInvalidArgument},
          Case{R"({"k":0,"vector":[],"full_text_query":{"columns":[],"query":"hi"}})",
               "k must be >= 1 for a full-text search", StatusCode::kInvalidArgument},
          Case{R"({"k":1,"vector":[1,2],"full_text_query":{"columns":[],"query":"hi"}})", "hybrid",
               StatusCode::kNotSupported},
          Case{R"({"k":1,"vector":[1,2],"ef":0})", "ef must be >= 1", StatusCode::kInvalidArgument},
          Case{R"({"k":1,"vector":[1,2],"bypass_vector_index":1})",
               "bypass_vector_index must be true or false", StatusCode::kInvalidArgument},
          Case{R"({"k":1,"vector":[1],"distance_type":"hamming"})", "hamming",
               StatusCode::kNotSupported},
          Case{R"([1,2])", "JSON object", StatusCode::kInvalidArgument},
          Case{R"({"k":)", "not valid JSON", StatusCode::kInvalidArgument},
          Case{"", "empty", StatusCode::kInvalidArgument},
      }) {
    auto r = ParseQueryRequest(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.status().code(), c.code) << c.body;
    EXPECT_NE(r.status().message().find(c.needle), std::string::npos)
        << c.body << " -> " << r.status().message();
  }
}

TEST(QueryRequestTest, VectorQueryEfAndBypass) {
  auto r = ParseQueryRequest(R"({"k":3,"vector":[1,2],"ef":128,"bypass_vector_index":true})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& vs = std::get<query::VectorSearchOptions>(r->plan);
  ASSERT_TRUE(vs.ef.has_value());
  EXPECT_EQ(*vs.ef, 128);
  EXPECT_TRUE(vs.bypass_vector_index);
  auto n = ParseQueryRequest(R"({"k":3,"vector":[1,2],"ef":null,"nprobes":20})");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_FALSE(std::get<query::VectorSearchOptions>(n->plan).ef.has_value());
  EXPECT_FALSE(std::get<query::VectorSearchOptions>(n->plan).bypass_vector_index);
}

// IVF tuning keys as the 0.31 client sends them (nprobes = minimum_nprobes, maximum_nprobes,
// refine_factor; docs/INDEXES.md): honoured, and bad values refused naming the key.
TEST(QueryRequestTest, VectorQueryIvfKeys) {
  auto r = ParseQueryRequest(
      R"({"k":3,"vector":[1,2],"nprobes":30,"minimum_nprobes":30,"maximum_nprobes":0,)"
      R"("refine_factor":10})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& vs = std::get<query::VectorSearchOptions>(r->plan);
  EXPECT_EQ(vs.nprobes, std::optional<int64_t>(30));
  EXPECT_EQ(vs.max_nprobes, std::optional<int64_t>(0));
  EXPECT_EQ(vs.refine_factor, std::optional<int64_t>(10));
  auto unset = ParseQueryRequest(
      R"({"k":3,"vector":[1,2],"nprobes":null,"maximum_nprobes":null,"refine_factor":null})");
  ASSERT_TRUE(unset.ok()) << unset.status().ToString();
  EXPECT_FALSE(std::get<query::VectorSearchOptions>(unset->plan).nprobes.has_value());
  EXPECT_FALSE(std::get<query::VectorSearchOptions>(unset->plan).refine_factor.has_value());
  for (const auto& [body, key] : std::vector<std::pair<std::string, std::string>>{
           {R"({"k":3,"vector":[1,2],"refine_factor":0})", "refine_factor must be >= 1"},
           {R"({"k":3,"vector":[1,2],"refine_factor":1001})", "refine_factor must be in [1, 1000]"},
           {R"({"k":3,"vector":[1,2],"nprobes":0})", "nprobes must be >= 1"},
           {R"({"k":3,"vector":[1,2],"nprobes":20,"maximum_nprobes":5})", "maximum_nprobes (5)"},
       }) {
    auto bad = ParseQueryRequest(body);
    ASSERT_FALSE(bad.ok()) << body;
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << body;
    EXPECT_NE(bad.status().message().find(key), std::string::npos) << bad.status().message();
  }
}

TEST(QueryRequestTest, LegacyFullTextQuery) {
  auto r = ParseQueryRequest(
      R"({"version":null,"k":10,"prefilter":true,"vector":[],"with_row_id":true,)"
      R"("columns":["id"],"filter":"id = 3",)"
      R"("full_text_query":{"columns":["text","title"],"query":"Running cafe"}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(std::holds_alternative<query::FtsSearchOptions>(r->plan));
  const auto& f = std::get<query::FtsSearchOptions>(r->plan);
  EXPECT_EQ(f.query.kind, index::FtsQuery::Kind::kMatch);
  EXPECT_FALSE(f.query.require_all);
  EXPECT_EQ(f.query.text, "Running cafe");
  EXPECT_EQ(f.columns, (std::vector<std::string>{"text", "title"}));
  EXPECT_EQ(f.k, 10);
  ASSERT_EQ(f.columns_out.size(), 1u);
  EXPECT_EQ(f.columns_out[0].name, "id");
  ASSERT_TRUE(f.filter.has_value());
  EXPECT_EQ(*f.filter, "id = 3");
  EXPECT_TRUE(f.with_row_id);

  // columns [] = every FTS column; no k = the FTS default 10.
  auto all = ParseQueryRequest(R"({"vector":[],"full_text_query":{"columns":[],"query":"x"}})");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE(std::get<query::FtsSearchOptions>(all->plan).columns.empty());
  EXPECT_EQ(std::get<query::FtsSearchOptions>(all->plan).k, 10);
}

// The LanceDB client's select(["id", "_distance"]) / select(["id", "_score"]) (LanceDB OSS
// accepts both): the appended column is dropped from the projection, not refused.
TEST(QueryRequestTest, SelectingTheAppendedColumnIsAccepted) {
  auto vs = ParseQueryRequest(R"({"k":2,"vector":[1,0],"columns":["id","_distance"]})");
  ASSERT_TRUE(vs.ok()) << vs.status().ToString();
  const auto& v = std::get<query::VectorSearchOptions>(vs->plan);
  ASSERT_EQ(v.columns.size(), 1u);
  EXPECT_EQ(v.columns[0].name, "id");

  auto fts =
      ParseQueryRequest(R"({"k":3,"vector":[],"columns":{"synset":"synset","_score":"_score"},)"
                        R"("full_text_query":{"columns":[],"query":"x"}})");
  ASSERT_TRUE(fts.ok()) << fts.status().ToString();
  const auto& f = std::get<query::FtsSearchOptions>(fts->plan);
  ASSERT_EQ(f.columns_out.size(), 1u);
  EXPECT_EQ(f.columns_out[0].name, "synset");

  // Nothing but the appended column: an empty list would mean "every column", so refuse.
  auto only = ParseQueryRequest(R"({"k":2,"vector":[1,0],"columns":["_distance"]})");
  ASSERT_FALSE(only.ok());
  EXPECT_NE(only.status().message().find("besides the columns the query appends"),
            std::string::npos);
  // An alias onto the appended name still clashes.
  auto alias = ParseQueryRequest(R"({"k":2,"vector":[1,0],"columns":{"_distance":"id"}})");
  EXPECT_FALSE(alias.ok());
}

TEST(QueryRequestTest, StructuredFullTextQueries) {
  auto m = ParseQueryRequest(
      R"({"k":5,"offset":2,"vector":[],"full_text_query":{"query":{"match":{"terms":"big cat",)"
      R"("column":"text","boost":1,"fuzziness":0,"max_expansions":50,"operator":"And",)"
      R"("prefix_length":0}}}})");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto& f = std::get<query::FtsSearchOptions>(m->plan);
  EXPECT_EQ(f.query.kind, index::FtsQuery::Kind::kMatch);
  EXPECT_TRUE(f.query.require_all);
  EXPECT_EQ(f.query.text, "big cat");
  EXPECT_EQ(f.columns, (std::vector<std::string>{"text"}));
  EXPECT_EQ(f.k, 5);
  EXPECT_EQ(f.offset, 2);

  auto any = ParseQueryRequest(
      R"({"vector":[],"full_text_query":{"query":{"match":{"terms":"cat","column":null,)"
      R"("operator":"Or"}}}})");
  ASSERT_TRUE(any.ok()) << any.status().ToString();
  EXPECT_TRUE(std::get<query::FtsSearchOptions>(any->plan).columns.empty());
  EXPECT_FALSE(std::get<query::FtsSearchOptions>(any->plan).query.require_all);

  auto p = ParseQueryRequest(
      R"({"vector":[],"full_text_query":{"query":{"phrase":{"terms":"big cat","column":"text",)"
      R"("slop":0}}}})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const auto& ph = std::get<query::FtsSearchOptions>(p->plan);
  EXPECT_EQ(ph.query.kind, index::FtsQuery::Kind::kPhrase);
  EXPECT_EQ(ph.query.text, "big cat");
  EXPECT_EQ(ph.columns, (std::vector<std::string>{"text"}));
}

TEST(QueryRequestTest, CountRowsAndDescribeBodies) {
  auto c = ParseCountRowsRequest("");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->predicate.has_value());
  c = ParseCountRowsRequest(R"({"predicate":"id = 3","version":null})");
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->predicate.has_value());
  EXPECT_EQ(*c->predicate, "id = 3");
  c = ParseCountRowsRequest(R"({"predicate":"  "})");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->predicate.has_value());  // blank = no filter
  EXPECT_FALSE(ParseCountRowsRequest(R"({"predicate":7})").ok());

  EXPECT_FALSE(ParseDescribeRequest("")->has_value());
  EXPECT_FALSE(ParseDescribeRequest(R"({"version":null})")->has_value());
  EXPECT_EQ(ParseDescribeRequest(R"({"version":7})")->value(), 7u);
  EXPECT_FALSE(ParseDescribeRequest(R"({"version":"7"})").ok());
}

}  // namespace
}  // namespace strata::server
