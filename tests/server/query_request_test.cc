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
  EXPECT_EQ(vs.filter->value.string_value, "x");
  EXPECT_EQ(r->version, 4u);
}

TEST(QueryRequestTest, RejectsWhatIsNotSupported) {
  struct Case {
    const char* body;
    const char* needle;
    StatusCode code;
  };
  for (const Case& c : {
           Case{R"({"k":-1,"vector":[]})", "k must be >= 0", StatusCode::kInvalidArgument},
           Case{R"({"k":"ten","vector":[]})", "k must be an integer", StatusCode::kInvalidArgument},
           Case{R"({"k":1,"vector":[1,"a"]})", "element 1 must be a number",
                StatusCode::kInvalidArgument},
           Case{R"({"k":1,"vector":[[1,2],[3,4]]})", "multi-vector", StatusCode::kNotSupported},
           Case{R"({"k":1,"vector":[],"filter":"a > 1"})", "not supported yet",
                StatusCode::kInvalidArgument},
           Case{R"({"k":1,"vector":[],"columns":{"x":"a + 1"}})", "dynamic projection",
                StatusCode::kNotSupported},
           Case{R"({"k":1,"vector":[],"full_text_query":{"columns":[],"query":"hi"}})", "full-text",
                StatusCode::kNotSupported},
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

TEST(QueryRequestTest, CountRowsAndDescribeBodies) {
  auto c = ParseCountRowsRequest("");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->predicate.has_value());
  c = ParseCountRowsRequest(R"({"predicate":"id = 3","version":null})");
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->predicate.has_value());
  EXPECT_EQ(c->predicate->value.int_value, 3);
  EXPECT_FALSE(ParseCountRowsRequest(R"({"predicate":"id < 3"})").ok());

  EXPECT_FALSE(ParseDescribeRequest("")->has_value());
  EXPECT_FALSE(ParseDescribeRequest(R"({"version":null})")->has_value());
  EXPECT_EQ(ParseDescribeRequest(R"({"version":7})")->value(), 7u);
  EXPECT_FALSE(ParseDescribeRequest(R"({"version":"7"})").ok());
}

}  // namespace
}  // namespace strata::server
