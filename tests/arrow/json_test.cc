#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "arrow/array.h"
#include "arrow/json/rows_json.h"
#include "arrow/json/schema_json.h"
#include "type_cases.h"

namespace strata::arrow::json {
namespace {

using nlohmann::json;
using testing::Repr;

struct SpellingCase {
  std::string type_json;
  DataTypePtr type;
};

std::vector<SpellingCase> AllSpellings() {
  auto item = [](DataTypePtr t) { return field("item", std::move(t), true); };
  return {
      {R"({"type":"null"})", null()},
      {R"({"type":"bool"})", boolean()},
      {R"({"type":"int8"})", int8()},
      {R"({"type":"int16"})", int16()},
      {R"({"type":"int32"})", int32()},
      {R"({"type":"int64"})", int64()},
      {R"({"type":"uint8"})", uint8()},
      {R"({"type":"uint16"})", uint16()},
      {R"({"type":"uint32"})", uint32()},
      {R"({"type":"uint64"})", uint64()},
      {R"({"type":"halffloat"})", float16()},
      {R"({"type":"float"})", float32()},
      {R"({"type":"double"})", float64()},
      {R"({"type":"string"})", utf8()},
      {R"({"type":"large_string"})", large_utf8()},
      {R"({"type":"binary"})", binary()},
      {R"({"type":"large_binary"})", large_binary()},
      {R"({"type":"fixed_size_binary","length":16})", fixed_size_binary(16)},
      {R"({"type":"date32:day"})", date32()},
      {R"({"type":"date64:ms"})", date64()},
      {R"({"type":"time32:s"})", time32(TimeUnit::kSecond)},
      {R"({"type":"time32:ms"})", time32(TimeUnit::kMilli)},
      {R"({"type":"time64:us"})", time64(TimeUnit::kMicro)},
      {R"({"type":"time64:ns"})", time64(TimeUnit::kNano)},
      {R"({"type":"timestamp:s:-"})", timestamp(TimeUnit::kSecond)},
      {R"({"type":"timestamp:ms:Europe/Paris"})", timestamp(TimeUnit::kMilli, "Europe/Paris")},
      {R"({"type":"timestamp:us:UTC"})", timestamp(TimeUnit::kMicro, "UTC")},
      {R"({"type":"timestamp:ns:-"})", timestamp(TimeUnit::kNano)},
      {R"({"type":"timestamp:us:+05:30"})", timestamp(TimeUnit::kMicro, "+05:30")},
      {R"({"type":"duration:s"})", duration(TimeUnit::kSecond)},
      {R"({"type":"duration:ms"})", duration(TimeUnit::kMilli)},
      {R"({"type":"duration:us"})", duration(TimeUnit::kMicro)},
      {R"({"type":"duration:ns"})", duration(TimeUnit::kNano)},
      {R"({"type":"decimal:128:38:10"})", decimal128(38, 10)},
      {R"({"type":"decimal:128:5:0"})", decimal128(5, 0)},
      {R"({"type":"list","fields":[{"name":"item","nullable":true,"type":{"type":"int32"}}]})",
       list(item(int32()))},
      {R"({"type":"large_list","fields":[{"name":"item","nullable":false,"type":{"type":"string"}}]})",
       large_list(field("item", utf8(), false))},
      {R"({"type":"fixed_size_list","length":128,"fields":[{"name":"item","nullable":true,"type":{"type":"uint8"}}]})",
       fixed_size_list(item(uint8()), 128)},
      {R"({"type":"struct","fields":[{"name":"a","nullable":true,"type":{"type":"double"}},{"name":"b","nullable":false,"type":{"type":"list","fields":[{"name":"item","nullable":true,"type":{"type":"halffloat"}}]}}]})",
       struct_({field("a", float64()), field("b", list(item(float16())), false)})},
      {R"({"type":"struct","fields":[]})", struct_({})},
  };
}

TEST(SchemaJson, EverySpellingRoundTrips) {
  for (const auto& c : AllSpellings()) {
    const json tj = json::parse(c.type_json);
    auto t = DataTypeFromJson(tj, "col");
    ASSERT_TRUE(t.ok()) << c.type_json << ": " << t.status().ToString();
    EXPECT_TRUE((*t)->Equals(*c.type)) << c.type_json << " -> " << (*t)->ToString();
    EXPECT_EQ(DataTypeToJson(*c.type), tj) << c.type->ToString();
    // And inside a schema, through text.
    const std::string schema_text =
        R"({"fields":[{"name":"col","nullable":false,"type":)" + c.type_json + "}]}";
    auto s = ParseSchemaJson(schema_text);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_FALSE((*s)->field(0)->nullable);
    EXPECT_TRUE((*s)->field(0)->type->Equals(*c.type));
    EXPECT_EQ(json::parse(SchemaToJsonString(**s)), json::parse(schema_text));
  }
}

TEST(SchemaJson, JsonIsReadAsLargeBinary) {
  auto t = DataTypeFromJson(json::parse(R"({"type":"json"})"), "doc");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->id(), TypeId::kLargeBinary);
  EXPECT_EQ(DataTypeToJson(**t)["type"], "large_binary");
}

TEST(SchemaJson, NodeClientVectorColumn) {
  const std::string text =
      R"({"name":"vector","nullable":true,"type":{"type":"fixed_size_list","length":4,)"
      R"("fields":[{"name":"item","nullable":true,"type":{"type":"float"}}]}})";
  auto f = FieldFromJson(json::parse(text));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const Field expected{"vector", fixed_size_list(field("item", float32(), true), 4), true, {}};
  EXPECT_TRUE((*f)->Equals(expected)) << (*f)->ToString();
  EXPECT_EQ((*f)->type->ToString(), "fixed_size_list<item: float32>[4]");
  EXPECT_EQ(FieldToJson(expected), json::parse(text));
  // Compact output with sorted keys, as the client sends JSON.
  EXPECT_EQ(FieldToJson(expected).dump(),
            R"({"name":"vector","nullable":true,"type":{"fields":[{"name":"item","nullable":true,)"
            R"("type":{"type":"float"}}],"length":4,"type":"fixed_size_list"}})");
}

TEST(SchemaJson, MetadataRoundTrips) {
  const std::string text = R"({"fields":[{"name":"id","nullable":false,"type":{"type":"int64"},)"
                           R"("metadata":{"primary_key":"true","k":"v"}},)"
                           R"({"name":"t","nullable":true,"type":{"type":"timestamp:us:UTC"}}],)"
                           R"("metadata":{"lance:version":"2","owner":"me"}})";
  auto s = ParseSchemaJson(text);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_NE((*s)->field(0)->metadata.Get("primary_key"), nullptr);
  EXPECT_EQ(*(*s)->field(0)->metadata.Get("primary_key"), "true");
  EXPECT_EQ(*(*s)->field(0)->metadata.Get("k"), "v");
  EXPECT_TRUE((*s)->field(1)->metadata.empty());
  EXPECT_EQ(*(*s)->metadata().Get("owner"), "me");
  EXPECT_EQ((*s)->metadata().size(), 2u);
  const json back = SchemaToJson(**s);
  EXPECT_EQ(back, json::parse(text));
  EXPECT_FALSE(back["fields"][1].contains("metadata"));
}

void ExpectInvalid(const std::string& schema_text, const std::vector<std::string>& needles) {
  auto s = ParseSchemaJson(schema_text);
  ASSERT_FALSE(s.ok()) << schema_text;
  EXPECT_TRUE(s.status().IsInvalid()) << s.status().ToString();
  for (const auto& n : needles) {
    EXPECT_NE(s.status().message().find(n), std::string::npos)
        << "'" << n << "' not in: " << s.status().message();
  }
}

std::string OneField(const std::string& name, const std::string& type_json) {
  return R"({"fields":[{"name":")" + name + R"(","nullable":true,"type":)" + type_json + "}]}";
}

TEST(SchemaJson, UnsupportedSpellingsNameFieldAndSpelling) {
  for (const std::string sp :
       {"float32", "boolean", "utf8", "int", "float64", "dict:string:int32:false", "string_view",
        "binary_view", "decimal:256:40:2", "timestamp:xs:UTC", "timestamp:us", "time32:us",
        "time64:s", "duration:h", "date32", "decimal:128:39:2", "decimal:128:10:11", ""}) {
    ExpectInvalid(OneField("col_x", R"({"type":")" + sp + R"("})"), {"'col_x'"});
    if (sp.rfind("decimal:128", 0) != 0) {
      ExpectInvalid(OneField("col_x", R"({"type":")" + sp + R"("})"), {"'" + sp + "'"});
    }
  }
  ExpectInvalid(OneField("v", R"({"type":"float32"})"), {"Unsupported type", "'float32'", "'v'"});
  ExpectInvalid(OneField("d", R"({"type":"dict:string:int32:false"})"), {"dictionary"});
  ExpectInvalid(OneField("d", R"({"type":"decimal:256:40:2"})"), {"decimal256"});
  // Nested children are named by their path.
  ExpectInvalid(
      OneField(
          "s",
          R"({"type":"struct","fields":[{"name":"inner","nullable":true,"type":{"type":"utf8"}}]})"),
      {"'s.inner'", "'utf8'"});
  ExpectInvalid(
      OneField(
          "v",
          R"({"type":"fixed_size_list","length":4,"fields":[{"name":"item","nullable":true,"type":{"type":"float32"}}]})"),
      {"'v.item'", "'float32'"});
}

TEST(SchemaJson, StructuralErrors) {
  ExpectInvalid(R"({"fields":[{"name":"a","type":{"type":"int64"}}]})", {"'a'", "nullable"});
  ExpectInvalid(R"({"fields":[{"name":"a","nullable":"yes","type":{"type":"int64"}}]})",
                {"nullable"});
  ExpectInvalid(R"({"fields":[{"nullable":true,"type":{"type":"int64"}}]})", {"name"});
  ExpectInvalid(R"({"fields":[{"name":"a","nullable":true}]})", {"'a'", "type"});
  ExpectInvalid(R"({"fields":[{"name":"a","nullable":true,"type":"int64"}]})", {"'a'"});
  ExpectInvalid(
      OneField(
          "v",
          R"({"type":"fixed_size_list","fields":[{"name":"item","nullable":true,"type":{"type":"float"}}]})"),
      {"'v'", "length"});
  ExpectInvalid(
      OneField(
          "v",
          R"({"type":"fixed_size_list","length":0,"fields":[{"name":"item","nullable":true,"type":{"type":"float"}}]})"),
      {"'v'", "length", "got 0"});
  ExpectInvalid(OneField("l", R"({"type":"list"})"), {"'l'", "fields"});
  ExpectInvalid(OneField("l", R"({"type":"list","fields":[]})"), {"exactly one child"});
  ExpectInvalid(OneField("b", R"({"type":"fixed_size_binary"})"), {"'b'", "length"});
  ExpectInvalid(
      R"({"fields":[{"name":"a","nullable":true,"type":{"type":"int64"},"metadata":{"k":1}}]})",
      {"'a'", "'k'"});
  ExpectInvalid(R"({"fields":[{"name":"a","nullable":true,"type":{"type":"int64"}},)"
                R"({"name":"a","nullable":true,"type":{"type":"int32"}}]})",
                {"two fields named 'a'"});
  ExpectInvalid(R"({"field":[]})", {"fields"});
  ExpectInvalid(R"([1,2])", {"object"});
  ExpectInvalid(R"({"fields":[)", {"not valid JSON"});
  // Deep nesting is bounded.
  std::string deep = R"({"type":"int32"})";
  for (int i = 0; i < 100; ++i) {
    deep = R"({"type":"list","fields":[{"name":"item","nullable":true,"type":)" + deep + "}]}";
  }
  ExpectInvalid(OneField("deep", deep), {"nesting deeper than 64"});
}

// --- Rows ---------------------------------------------------------------------------------------

SchemaPtr MakeSchema(std::vector<FieldPtr> fields) {
  return std::make_shared<const Schema>(std::move(fields));
}

TEST(RowsJson, ConvertsEveryType) {
  auto schema = MakeSchema({
      field("n", null()),
      field("b", boolean()),
      field("i8", int8()),
      field("i16", int16()),
      field("i32", int32(), false),
      field("i64", int64()),
      field("u8", uint8()),
      field("u16", uint16()),
      field("u32", uint32()),
      field("u64", uint64()),
      field("h", float16()),
      field("f", float32()),
      field("d", float64()),
      field("s", utf8()),
      field("ls", large_utf8()),
      field("bin", binary()),
      field("lbin", large_binary()),
      field("fsb", fixed_size_binary(2)),
      field("d32", date32()),
      field("d64", date64()),
      field("t32", time32(TimeUnit::kMilli)),
      field("t64", time64(TimeUnit::kNano)),
      field("ts", timestamp(TimeUnit::kMicro, "UTC")),
      field("dur", duration(TimeUnit::kSecond)),
      field("dec", decimal128(10, 2)),
      field("l", list(field("item", int32()))),
      field("ll", large_list(field("item", utf8()))),
      field("vector", fixed_size_list(field("item", float32()), 3)),
      field("st", struct_({field("x", int64()), field("y", utf8())})),
  });
  const std::string rows = R"([
    {"n":null,"b":true,"i8":-128,"i16":300,"i32":7,"i64":-9007199254740993,"u8":255,"u16":65535,
     "u32":4294967295,"u64":18446744073709551615,"h":1.5,"f":0.25,"d":-1e300,"s":"héllo",
     "ls":"big","bin":"ab","lbin":[0,255,7],"fsb":[1,2],"d32":19000,"d64":86400000,"t32":1000,
     "t64":5,"ts":1700000000000000,"dur":-3,"dec":"-12.34","l":[1,null,3],"ll":["a",""],
     "vector":[1,2.5,-3],"st":{"x":42,"y":"z"}},
    {"i32":-7,"d32":"2024-02-29","d64":"1970-01-02","ts":"2024-01-31T12:00:00.5Z","dec":15,
     "l":[],"vector":[0,null,1],"st":{"x":1},"f":3.0,"i8":5.0},
    {"i32":0,"ts":"2024-01-31T12:00:00+01:00","dec":"0.05","st":null,"vector":null}
  ])";
  auto r = ParseRowsJson(rows, schema);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const RecordBatch& b = **r;
  STRATA_ASSERT_OK(b.Validate());
  ASSERT_EQ(b.num_rows(), 3);
  auto col = [&](const char* name) { return Array(b.GetColumnByName(name)); };
  EXPECT_EQ(col("n").null_count(), 3);
  EXPECT_TRUE(col("b").BoolValue(0));
  EXPECT_TRUE(col("b").IsNull(1));
  EXPECT_EQ(col("i8").Value<int8_t>(0), -128);
  EXPECT_EQ(col("i8").Value<int8_t>(1), 5);
  EXPECT_EQ(col("i16").Value<int16_t>(0), 300);
  EXPECT_EQ(col("i32").Value<int32_t>(1), -7);
  EXPECT_EQ(col("i64").Value<int64_t>(0), -9007199254740993LL);
  EXPECT_EQ(col("u8").Value<uint8_t>(0), 255);
  EXPECT_EQ(col("u16").Value<uint16_t>(0), 65535);
  EXPECT_EQ(col("u32").Value<uint32_t>(0), 4294967295u);
  EXPECT_EQ(col("u64").Value<uint64_t>(0), UINT64_MAX);
  EXPECT_EQ(col("h").Value<uint16_t>(0), 0x3E00);
  EXPECT_FLOAT_EQ(col("f").Value<float>(0), 0.25f);
  EXPECT_FLOAT_EQ(col("f").Value<float>(1), 3.0f);
  EXPECT_DOUBLE_EQ(col("d").Value<double>(0), -1e300);
  EXPECT_EQ(col("s").GetView(0), "héllo");
  EXPECT_EQ(col("ls").GetView(0), "big");
  EXPECT_EQ(col("bin").GetView(0), "ab");
  EXPECT_EQ(col("lbin").GetView(0), std::string("\0\xff\x07", 3));
  EXPECT_EQ(col("fsb").GetView(0), std::string("\x01\x02", 2));
  EXPECT_EQ(col("d32").Value<int32_t>(0), 19000);
  EXPECT_EQ(col("d32").Value<int32_t>(1), 19782);  // 2024-02-29
  EXPECT_EQ(col("d64").Value<int64_t>(1), 86400000);
  EXPECT_EQ(col("t32").Value<int32_t>(0), 1000);
  EXPECT_EQ(col("t64").Value<int64_t>(0), 5);
  EXPECT_EQ(col("ts").Value<int64_t>(0), 1700000000000000LL);
  EXPECT_EQ(col("ts").Value<int64_t>(1), 1706702400500000LL);  // 2024-01-31T12:00:00.5Z
  EXPECT_EQ(col("ts").Value<int64_t>(2), 1706698800000000LL);  // 11:00Z
  EXPECT_EQ(col("dur").Value<int64_t>(0), -3);
  EXPECT_EQ(Repr(col("dec"), 0), "d-1234");
  EXPECT_EQ(Repr(col("dec"), 1), "d1500");
  EXPECT_EQ(Repr(col("dec"), 2), "d5");
  EXPECT_EQ(Repr(col("l"), 0), "[1, null, 3]");
  EXPECT_EQ(Repr(col("l"), 1), "[]");
  EXPECT_TRUE(col("l").IsNull(2));
  EXPECT_EQ(Repr(col("ll"), 0), "['a', '']");
  EXPECT_EQ(Repr(col("vector"), 0), "[1, 2.5, -3]");
  EXPECT_EQ(Repr(col("vector"), 1), "[0, null, 1]");
  EXPECT_TRUE(col("vector").IsNull(2));
  EXPECT_EQ(Repr(col("st"), 0), "{x: 42, y: 'z'}");
  EXPECT_EQ(Repr(col("st"), 1), "{x: 1, y: null}");
  EXPECT_TRUE(col("st").IsNull(2));

  // Back to JSON and through the parser again: the same values.
  const json back = RowsToJson(b);
  EXPECT_EQ(back[0]["dec"], "-12.34");
  EXPECT_EQ(back[2]["dec"], "0.05");
  EXPECT_EQ(back[0]["lbin"], json::parse("[0,255,7]"));
  EXPECT_EQ(back[0]["u64"].get<uint64_t>(), UINT64_MAX);
  EXPECT_EQ(back[1]["st"], json::parse(R"({"x":1,"y":null})"));
  EXPECT_EQ(back[0]["h"].get<double>(), 1.5);
  auto again = RowsFromJson(back, schema);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(RowsToJson(**again), back);
  EXPECT_EQ(ValueToJson(*b.GetColumnByName("vector"), 0), json::parse("[1.0,2.5,-3.0]"));
}

std::string RowsError(const SchemaPtr& schema, const std::string& rows) {
  auto r = ParseRowsJson(rows, schema);
  EXPECT_FALSE(r.ok()) << rows;
  if (r.ok()) return "";
  EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
  return r.status().message();
}

TEST(RowsJson, ErrorsNameRowAndColumn) {
  auto schema =
      MakeSchema({field("id", int64(), false), field("small", int8()), field("name", utf8()),
                  field("vector", fixed_size_list(field("item", float32()), 4)),
                  field("st", struct_({field("x", int32(), false)})),
                  field("tags", list(field("item", utf8(), false)))});
  const std::string ok_row = R"({"id":1,"vector":[1,2,3,4]})";
  EXPECT_EQ(RowsError(schema, "[" + ok_row + "," + ok_row + "," + ok_row +
                                  R"(,{"id":4,"vector":[1,2,3]}])"),
            "row 3, column 'vector': expected 4 values, got 3");
  EXPECT_EQ(RowsError(schema, R"([{"id":1,"small":300}])"),
            "row 0, column 'small': value 300 is out of range for int8 [-128, 127]");
  EXPECT_EQ(RowsError(schema, R"([{"small":1}])"),
            "row 0, column 'id': missing value for a non-nullable column");
  EXPECT_EQ(RowsError(schema, R"([{"id":null}])"),
            "row 0, column 'id': null for a non-nullable field");
  EXPECT_EQ(RowsError(schema, R"([{"id":1},{"id":2,"bogus":1}])"),
            "row 1, column 'bogus': no such column in the table schema");
  EXPECT_NE(RowsError(schema, R"([{"id":"7"}])").find("row 0, column 'id': expected an integer"),
            std::string::npos);
  EXPECT_NE(RowsError(schema, R"([{"id":1.5}])").find("expected an integer"), std::string::npos);
  EXPECT_NE(
      RowsError(schema, R"([{"id":1,"name":5}])").find("row 0, column 'name': expected a string"),
      std::string::npos);
  EXPECT_NE(RowsError(schema, R"([{"id":1,"vector":[1,"x",3,4]}])")
                .find("row 0, column 'vector': element 1: expected a number"),
            std::string::npos);
  EXPECT_NE(
      RowsError(schema, R"([{"id":1,"vector":[1,2,3,1e39]}])").find("out of range for float32"),
      std::string::npos);
  EXPECT_EQ(RowsError(schema, R"([{"id":1,"st":{}}])"),
            "row 0, column 'st': field 'x': null for a non-nullable field");
  EXPECT_EQ(RowsError(schema, R"([{"id":1,"st":{"x":1,"w":2}}])"),
            "row 0, column 'st': field 'w' is not in struct<x: int32 not null>");
  EXPECT_EQ(RowsError(schema, R"([{"id":1,"tags":["a",null]}])"),
            "row 0, column 'tags': element 1: null for a non-nullable field");
  EXPECT_EQ(RowsError(schema, R"([{"id":1},[1]])"), "row 1: expected an object, got array of 1");
  EXPECT_NE(RowsError(schema, R"({"id":1})").find("expected a JSON array"), std::string::npos);
  EXPECT_NE(RowsError(schema, R"([{"id":1})").find("not valid JSON"), std::string::npos);
  EXPECT_NE(RowsError(schema, R"([{"id":18446744073709551615}])").find("out of range for int64"),
            std::string::npos);

  auto temporal = MakeSchema({field("d", date32()), field("ts", timestamp(TimeUnit::kNano)),
                              field("dec", decimal128(4, 2)), field("b", fixed_size_binary(2)),
                              field("bin", binary())});
  EXPECT_NE(
      RowsError(temporal, R"([{"d":"2023-02-29"}])").find("row 0, column 'd': expected a date"),
      std::string::npos);
  EXPECT_NE(RowsError(temporal, R"([{"ts":"3000-01-01T00:00:00Z"}])").find("out of range"),
            std::string::npos);
  EXPECT_NE(RowsError(temporal, R"([{"ts":"yesterday"}])").find("ISO 8601"), std::string::npos);
  EXPECT_NE(RowsError(temporal, R"([{"dec":"123.4"}])").find("integer digits"), std::string::npos);
  EXPECT_NE(RowsError(temporal, R"([{"dec":"1.234"}])").find("fraction digits"), std::string::npos);
  EXPECT_NE(RowsError(temporal, R"([{"dec":"1.2.3"}])").find("decimal string"), std::string::npos);
  EXPECT_NE(RowsError(temporal, R"([{"b":"abc"}])").find("expected 2 bytes"), std::string::npos);
  EXPECT_NE(RowsError(temporal, R"([{"bin":[1,256]}])").find("byte 1"), std::string::npos);
}

TEST(RowsJson, EmptyArrayAndAllNullable) {
  auto schema =
      MakeSchema({field("a", int32()), field("v", fixed_size_list(field("item", float32()), 2))});
  auto r = ParseRowsJson("[]", schema);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->num_rows(), 0);
  STRATA_ASSERT_OK((*r)->Validate());
  auto r2 = ParseRowsJson("[{},{}]", schema);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ((*r2)->num_rows(), 2);
  EXPECT_EQ((*r2)->column(0).null_count(), 2);
  EXPECT_EQ((*r2)->column(1).null_count(), 2);
  STRATA_ASSERT_OK((*r2)->Validate());
  EXPECT_EQ(RowsToJsonString(**r2), R"([{"a":null,"v":null},{"a":null,"v":null}])");
}

// Every generated test type renders to JSON and parses back to the same values.
class EveryTypeRowsJson : public ::testing::TestWithParam<testing::TypeCase> {};

TEST_P(EveryTypeRowsJson, RoundTrip) {
  const auto& c = GetParam();
  ArrayDataPtr d = testing::BuildCase(c, 23, true);
  auto schema = MakeSchema({field("c", c.type)});
  RecordBatch batch(schema, 23, {d});
  const json rows = RowsToJson(batch);
  ASSERT_EQ(rows.size(), 23u);
  auto back = RowsFromJson(rows, schema);
  ASSERT_TRUE(back.ok()) << c.name << ": " << back.status().ToString();
  STRATA_ASSERT_OK((*back)->Validate());
  for (int64_t i = 0; i < 23; ++i) {
    EXPECT_EQ(Repr((*back)->column(0), i), testing::Expected(c, i, true)) << c.name << " " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Arrow, EveryTypeRowsJson, ::testing::ValuesIn(testing::AllTypeCases()),
                         testing::CaseName);

}  // namespace
}  // namespace strata::arrow::json
