// common/json_fast_parse.h: the simdjson fast path gives nlohmann's tree (values, number
// kinds, key order, repeated keys) for every document it accepts, declines what only nlohmann
// accepts or what is malformed or too deep, and reads a top-level numeric array into floats.
#include "common/json_fast_parse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata {
namespace {

using ordered_json = nlohmann::ordered_json;

// Same value and, recursively, the same nlohmann number kind (unsigned / integer / float).
void ExpectSameTree(const ordered_json& got, const ordered_json& want, const std::string& doc) {
  ASSERT_EQ(got.type(), want.type()) << doc << " at " << want.dump();
  if (got.is_object()) {
    ASSERT_EQ(got.size(), want.size()) << doc;
    auto g = got.begin();
    for (auto w = want.begin(); w != want.end(); ++w, ++g) {
      EXPECT_EQ(g.key(), w.key()) << doc;
      ExpectSameTree(g.value(), w.value(), doc);
    }
  } else if (got.is_array()) {
    ASSERT_EQ(got.size(), want.size()) << doc;
    for (size_t i = 0; i < got.size(); ++i) ExpectSameTree(got[i], want[i], doc);
  } else {
    EXPECT_EQ(got, want) << doc;
  }
}

TEST(JsonFastParseTest, SameTreeAsNlohmann) {
  const std::vector<std::string> docs = {
      R"({"vector":[0.5,-1,2,3e2,-0.25],"k":10,"ef":null,"prefilter":true,"columns":["id","v"]})",
      R"({"b":1,"a":2,"c":{"z":[],"y":{}},"d":""})",
      R"({"a":1,"b":2,"a":3})",  // repeated key: first position, last value
      R"({"n":-9223372036854775808,"u":18446744073709551615,"i":9223372036854775807})",
      R"({"s":"tab\t quote\" slash\\ unicode \u00e9 \ud83d\ude00 nul\u0000"})",
      R"([1,[2,[3,[4]]],{"x":false},null,-0.0,1.5e-300])",
      R"("just a string")",
      "  \n\t{\"spaces\" : [ 1 , 2 ] }  \n",
  };
  for (const std::string& doc : docs) {
    auto fast = FastParseOrderedJson(doc);
    ASSERT_TRUE(fast.has_value()) << doc;
    ExpectSameTree(*fast, ordered_json::parse(doc), doc);
  }
}

TEST(JsonFastParseTest, DeclinesMalformedOutOfRangeAndTooDeep) {
  const std::vector<std::string> docs = {
      R"({"a":})",
      R"({"a":1} trailing)",
      R"({"a":18446744073709551616})",  // beyond 64 bits: nlohmann reads a float
      R"({"a":1e400})",
      "{\"a\":\"\xff\"}",  // invalid UTF-8
      "",
      R"({"a":[1,2,]})",
  };
  for (const std::string& doc : docs) EXPECT_FALSE(FastParseOrderedJson(doc).has_value()) << doc;

  // Depth as CheckJsonDepth counts it: the root object is level 1.
  const auto nested = [](int levels) {
    return std::string(static_cast<size_t>(levels), '[') +
           std::string(static_cast<size_t>(levels), ']');
  };
  EXPECT_TRUE(FastParseOrderedJson(nested(kMaxJsonDepth)).has_value());
  EXPECT_FALSE(FastParseOrderedJson(nested(kMaxJsonDepth + 1)).has_value());
  EXPECT_TRUE(FastParseOrderedJson(nested(3), 3).has_value());
  EXPECT_FALSE(FastParseOrderedJson(nested(4), 3).has_value());
  EXPECT_TRUE(CheckJsonDepth(nested(3), "x", 3).ok());
  EXPECT_FALSE(CheckJsonDepth(nested(4), "x", 3).ok());
}

TEST(JsonFastParseTest, ReadsTheNamedNumericArrayIntoFloats) {
  std::vector<float> f = {42};
  auto j =
      FastParseOrderedJsonWithFloats(R"({"k":3,"vector":[1,-2,0.5,1e10],"x":[1]})", "vector", &f);
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(f, (std::vector<float>{1.0f, -2.0f, 0.5f, 1e10f}));
  EXPECT_EQ((*j)["vector"], ordered_json::array({0}));
  EXPECT_TRUE((*j)["k"].is_number_unsigned());
  EXPECT_EQ((*j)["x"], ordered_json::array({1}));
  EXPECT_EQ(j->begin().key(), "k");  // key order kept

  // Not a flat array of numbers: the tree holds it as sent and no floats are read.
  for (const std::string doc :
       {R"({"vector":[1,"a"]})", R"({"vector":[[1,2]]})", R"({"vector":[]})", R"({"vector":null})",
        R"({"vector":[1,2],"vector":"x"})", R"({"other":[1,2]})"}) {
    auto t = FastParseOrderedJsonWithFloats(doc, "vector", &f);
    ASSERT_TRUE(t.has_value()) << doc;
    EXPECT_TRUE(f.empty()) << doc;
    ExpectSameTree(*t, ordered_json::parse(doc), doc);
  }
  // A repeated key: the last one counts.
  auto last = FastParseOrderedJsonWithFloats(R"({"vector":"x","vector":[7,8]})", "vector", &f);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(f, (std::vector<float>{7, 8}));
  // A root that is not an object: a plain parse.
  auto arr = FastParseOrderedJsonWithFloats("[1,2]", "vector", &f);
  ASSERT_TRUE(arr.has_value());
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(*arr, ordered_json::parse("[1,2]"));
  // Declined documents leave no floats behind... for the caller that clears them (see
  // query_request.cc); the function itself returns nullopt.
  EXPECT_FALSE(
      FastParseOrderedJsonWithFloats(R"({"vector":[1,2],"k":1e400})", "vector", &f).has_value());
}

TEST(JsonFastParseTest, LargeBodiesUseTheirOwnParser) {
  std::string doc = "{\"vector\":[";
  for (int i = 0; i < 300000; ++i) doc += (i ? ",0." : "0.") + std::to_string(i % 10);
  doc += "]}";
  ASSERT_GT(doc.size(), size_t{1} << 20);
  std::vector<float> f;
  auto j = FastParseOrderedJsonWithFloats(doc, "vector", &f);
  ASSERT_TRUE(j.has_value());
  ASSERT_EQ(f.size(), 300000u);
  EXPECT_FLOAT_EQ(f[299999], 0.9f);
  // And the reused per-thread parser still works afterwards.
  auto small = FastParseOrderedJson(R"({"a":[1,2,3]})");
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ((*small)["a"].size(), 3u);
}

}  // namespace
}  // namespace strata
