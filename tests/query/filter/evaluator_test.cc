#include "query/filter/evaluator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "arrow/builder.h"
#include "query/filter/parser.h"

namespace strata::query::filter {
namespace {

using arrow::ArrayBuilder;
using arrow::ArrayDataPtr;

constexpr int64_t kRows = 10;
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

// Days since the epoch of 2024-01-01 and microseconds of a day.
constexpr int64_t kJan1 = 19723;
constexpr int64_t kDayUs = 86400LL * 1000000;

std::shared_ptr<arrow::Schema> TestSchema() {
  using namespace arrow;  // NOLINT
  return std::make_shared<Schema>(std::vector<FieldPtr>{
      field("id", int64()),
      field("i32", int32()),
      field("u64", uint64()),
      field("price", float64()),
      field("f32", float32()),
      field("name", utf8()),
      field("flag", boolean()),
      field("day", date32()),
      field("ts", timestamp(TimeUnit::kMicro)),
      field("tags", list(field("item", int64()))),
      field("info", struct_({field("city", utf8()), field("zip", int32())})),
      field("vec", fixed_size_list(field("item", float32()), 2)),
  });
}

// The fixed batch every table case runs on (values listed per row in the comments).
std::shared_ptr<arrow::RecordBatch> TestBatch() {
  arrow::RecordBatchBuilder b(TestSchema());
  auto check = [](const Status& s) { ASSERT_TRUE(s.ok()) << s.ToString(); };
  const std::optional<int64_t> i32[] = {10,           std::nullopt, 30, -5, 50,
                                        std::nullopt, 70,           80, 90, 100};
  const std::optional<uint64_t> u64[] = {1, 2, kU64Max, 4, 5, std::nullopt, 7, 8, 9, 10};
  const std::optional<double> price[] = {1.5,  10.0, std::nullopt, 25.5, 100.0,
                                         7.25, -3.0, 0.0,          50.0, std::nullopt};
  const std::optional<double> f32[] = {0.5, 1.5, 2.5, -1.0, 0.0, 3.25, std::nullopt, 7.5, 8.5, 9.5};
  const std::optional<std::string> name[] = {"apple",   "Banana",   "cherry", std::nullopt,
                                             "Ünïcødé", "ünïcødé",  "",       "a_b%c",
                                             "日本語",  "apple pie"};
  const std::optional<bool> flag[] = {true, false,        std::nullopt, true, false,
                                      true, std::nullopt, false,        true, std::nullopt};
  const std::optional<int64_t> day[] = {kJan1,       kJan1 + 1,   kJan1 + 59, std::nullopt,
                                        kJan1 - 1,   kJan1 + 14,  kJan1,      kJan1 + 181,
                                        kJan1 + 366, std::nullopt};
  const int64_t t0 = kJan1 * kDayUs;
  const std::optional<int64_t> ts[] = {
      t0,           t0 + kDayUs / 2,   t0 + 60 * kDayUs + 500000,
      std::nullopt, t0 - 1000000,      t0 + 14 * kDayUs + (8 * 3600 + 1800) * 1000000LL,
      t0,           t0 + 181 * kDayUs, t0 + 366 * kDayUs,
      t0 + 1};
  // tags: [1,2] [] null [3,null] [4] [5,1] [1] [null] [8,9,10] []
  const std::vector<std::vector<std::optional<int64_t>>> tags = {
      {1, 2}, {}, {}, {3, std::nullopt}, {4}, {5, 1}, {1}, {std::nullopt}, {8, 9, 10}, {}};
  // info: {Paris,75001} {Berlin,null} null {Paris,75002} {null,10115} {Rome,100}
  //       {Paris,75003} {Lyon,69001} {Tokyo,100} {Paris,null}
  const std::optional<std::string> city[] = {"Paris", "Berlin", std::nullopt, "Paris", std::nullopt,
                                             "Rome",  "Paris",  "Lyon",       "Tokyo", "Paris"};
  const std::optional<int64_t> zip[] = {75001, std::nullopt, std::nullopt, 75002, 10115,
                                        100,   75003,        69001,        100,   std::nullopt};
  for (int64_t i = 0; i < kRows; ++i) {
    check(b.column(0)->AppendInt(i));
    check(i32[i] ? b.column(1)->AppendInt(*i32[i]) : b.column(1)->AppendNull());
    check(u64[i] ? b.column(2)->AppendUInt(*u64[i]) : b.column(2)->AppendNull());
    check(price[i] ? b.column(3)->AppendDouble(*price[i]) : b.column(3)->AppendNull());
    check(f32[i] ? b.column(4)->AppendDouble(*f32[i]) : b.column(4)->AppendNull());
    check(name[i] ? b.column(5)->AppendBytes(*name[i]) : b.column(5)->AppendNull());
    check(flag[i] ? b.column(6)->AppendBool(*flag[i]) : b.column(6)->AppendNull());
    check(day[i] ? b.column(7)->AppendInt(*day[i]) : b.column(7)->AppendNull());
    check(ts[i] ? b.column(8)->AppendInt(*ts[i]) : b.column(8)->AppendNull());
    if (i == 2) {
      check(b.column(9)->AppendNull());
    } else {
      for (const auto& v : tags[static_cast<size_t>(i)]) {
        check(v ? b.column(9)->child(0)->AppendInt(*v) : b.column(9)->child(0)->AppendNull());
      }
      check(b.column(9)->AppendListEnd());
    }
    if (i == 2) {
      check(b.column(10)->AppendNull());
    } else {
      ArrayBuilder* s = b.column(10);
      check(city[i] ? s->child(0)->AppendBytes(*city[i]) : s->child(0)->AppendNull());
      check(zip[i] ? s->child(1)->AppendInt(*zip[i]) : s->child(1)->AppendNull());
      check(s->AppendValid());
    }
    const float v[2] = {static_cast<float>(i), 1.0f};
    check(b.column(11)->AppendFloats(v, 2));
  }
  auto batch = b.Finish();
  EXPECT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_TRUE((*batch)->Validate().ok());
  return *batch;
}

struct Hidden {
  std::vector<uint64_t> ids, offsets;
  Hidden() {
    for (int64_t i = 0; i < kRows; ++i) {
      ids.push_back(1000 + static_cast<uint64_t>(i));
      offsets.push_back(static_cast<uint64_t>(i));
    }
  }
};

// Rows where `sql` is TRUE over `batch` with _rowid = 1000 + row and _rowoffset = row (`base`
// is the row number of batch row 0).
Result<std::vector<int64_t>> Select(const std::string& sql, const arrow::RecordBatch& batch,
                                    int64_t base = 0) {
  STRATA_ASSIGN_OR_RETURN(BoundExprPtr e, ParseAndBind(sql, *batch.schema()));
  Hidden h;
  RowContext ctx{h.ids.data() + base, h.offsets.data() + base};
  std::vector<uint8_t> mask;
  STRATA_RETURN_IF_ERROR(EvaluateMask(*e, batch, ctx, &mask));
  std::vector<int64_t> rows;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i]) rows.push_back(base + static_cast<int64_t>(i));
  }
  return rows;
}

struct FilterCase {
  const char* sql;
  std::vector<int64_t> rows;
};

const std::vector<int64_t> kAll = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

const FilterCase kCases[] = {
    // Comparison operators on int64.
    {"id = 3", {3}},
    {"id != 3", {0, 1, 2, 4, 5, 6, 7, 8, 9}},
    {"id <> 3", {0, 1, 2, 4, 5, 6, 7, 8, 9}},
    {"id < 3", {0, 1, 2}},
    {"id <= 3", {0, 1, 2, 3}},
    {"id > 7", {8, 9}},
    {"id >= 7", {7, 8, 9}},
    {"3 < id AND id < 6", {4, 5}},
    {"ID = 2", {2}},
    {"`name` = 'cherry'", {2}},
    // Nulls and three-valued logic.
    {"i32 != 10", {2, 3, 4, 6, 7, 8, 9}},
    {"i32 > 50", {6, 7, 8, 9}},
    {"i32 = NULL", {}},
    {"NOT (i32 = NULL)", {}},
    {"i32 IS NULL", {1, 5}},
    {"i32 IS NOT NULL", {0, 2, 3, 4, 6, 7, 8, 9}},
    {"NULL = NULL", {}},
    {"NULL IS NULL", kAll},
    {"NULL OR TRUE", kAll},
    {"NULL AND FALSE", {}},
    {"NOT (NULL AND FALSE)", kAll},
    {"NULL OR FALSE", {}},
    {"NOT (NULL OR FALSE)", {}},
    {"flag", {0, 3, 5, 8}},
    {"flag = TRUE", {0, 3, 5, 8}},
    {"NOT flag", {1, 4, 7}},
    {"flag IS NULL", {2, 6, 9}},
    {"flag OR id = 2", {0, 2, 3, 5, 8}},
    {"flag AND id = 2", {}},
    {"(flag OR NULL) IS NULL", {1, 2, 4, 6, 7, 9}},
    {"NOT (flag AND i32 > 20)", {0, 1, 3, 4, 7}},
    {"TRUE", kAll},
    {"FALSE", {}},
    {"1 = 1", kAll},
    {"NULL", {}},
    // Unsigned and mixed signedness.
    {"u64 > 9223372036854775807", {2}},
    {"u64 = 18446744073709551615", {2}},
    {"u64 > -1", {0, 1, 2, 3, 4, 6, 7, 8, 9}},
    {"u64 < id + 3", {0, 1, 3, 4, 6, 7, 8, 9}},
    {"u64 - 1 >= 8", {2, 8, 9}},
    // Floats.
    {"price > 10", {3, 4, 8}},
    {"price >= 10", {1, 3, 4, 8}},
    {"price = 10", {1}},
    {"f32 > 2.4", {2, 5, 7, 8, 9}},
    {"f32 = 1.5", {1}},
    // Strings (bytewise).
    {"name = 'apple'", {0}},
    {"name > 'b'", {2, 4, 5, 8}},
    {"name != 'apple'", {1, 2, 4, 5, 6, 7, 8, 9}},
    // IN / NOT IN / BETWEEN.
    {"id IN (1, 3, 5)", {1, 3, 5}},
    {"id NOT IN (1, 3, 5)", {0, 2, 4, 6, 7, 8, 9}},
    {"id IN (1, 2.5, 3)", {1, 3}},
    {"name IN ('apple', 'cherry', NULL)", {0, 2}},
    {"name NOT IN ('apple', 'cherry')", {1, 4, 5, 6, 7, 8, 9}},
    {"name NOT IN ('apple', NULL)", {}},
    {"id IN (i32, 5)", {5}},
    {"id NOT IN (i32, 5)", {0, 2, 3, 4, 6, 7, 8, 9}},
    {"id BETWEEN 2 AND 4", {2, 3, 4}},
    {"id NOT BETWEEN 2 AND 4", {0, 1, 5, 6, 7, 8, 9}},
    {"price BETWEEN 0 AND 10", {0, 1, 5, 7}},
    // LIKE.
    {"name LIKE 'app%'", {0, 9}},
    {"name LIKE '%pie'", {9}},
    {"name LIKE '%an%'", {1}},
    {"name LIKE '_anana'", {1}},
    {"name LIKE 'banana'", {}},
    {"name LIKE 'a_b%c'", {7}},
    {"name LIKE '%'", {0, 1, 2, 4, 5, 6, 7, 8, 9}},
    {"name LIKE ''", {6}},
    {"name LIKE '___'", {8}},
    {"name LIKE '_nïcødé'", {4, 5}},
    {"name LIKE 'a%e'", {0, 9}},
    {"name LIKE '%a%a%a'", {1}},
    {"name LIKE '%%e'", {0, 9}},
    {"name NOT LIKE '%e%'", {1, 4, 5, 6, 7, 8}},
    // Functions.
    {"lower(name) = 'banana'", {1}},
    {"upper(name) = 'ÜNÏCØDÉ'", {4, 5}},
    {"lower(name) = 'ünïcødé'", {4, 5}},
    {"length(name) = 7", {4, 5}},
    {"char_length(name) = 3", {8}},
    {"character_length(name) = 0", {6}},
    {"starts_with(name, 'app')", {0, 9}},
    {"regexp_match(name, '^[a-c]')", {0, 2, 7, 9}},
    {"regexp_match(name, 'an+a$')", {1}},
    {"array_has(tags, 1)", {0, 5, 6}},
    {"array_contains(tags, 9)", {8}},
    {"NOT array_has(tags, 1)", {1, 3, 4, 7, 8, 9}},
    // Struct fields.
    {"info.city = 'Paris'", {0, 3, 6, 9}},
    {"info.zip IS NULL", {1, 2, 9}},
    {"info.city IS NULL", {2, 4}},
    {"info.zip > 70000", {0, 3, 6}},
    // Dates and timestamps.
    {"day = date '2024-01-01'", {0, 6}},
    {"day >= '2024-01-15'", {2, 5, 7, 8}},
    {"day < date '2024-01-01'", {4}},
    {"day = timestamp '2024-01-01 00:00:00'", {0, 6}},
    {"day BETWEEN date '2024-01-01' AND date '2024-01-31'", {0, 1, 5, 6}},
    {"ts > timestamp '2024-01-01 00:00:00'", {1, 2, 5, 7, 8, 9}},
    {"ts = '2024-03-01 00:00:00.5'", {2}},
    {"ts < date '2024-01-01'", {4}},
    {"ts >= day", {0, 2, 4, 5, 6, 7, 8}},
    // Arithmetic.
    {"id + 1 = 4", {3}},
    {"id * 2 > 14", {8, 9}},
    {"id - 10 = -7", {3}},
    {"id / 2 = 2", {4, 5}},
    {"id % 3 = 0", {0, 3, 6, 9}},
    {"10 / (id - 3) = 5", {5}},
    {"(10 / (id - 3)) IS NULL", {3}},
    {"price / 2 > 20", {4, 8}},
    {"price * 2 = 3", {0}},
    {"-id = -2", {2}},
    {"-price > 0", {6}},
    {"i32 + id > 100", {9}},
    {"f32 * 2 = 5", {2}},
    // CAST.
    {"CAST(id AS varchar) = '7'", {7}},
    {"CAST(price AS bigint) = 25", {3}},
    {"CAST(price AS bigint) = -3", {6}},
    {"CAST('2024-01-02' AS date) = day", {1}},
    {"CAST(day AS varchar) = '2024-02-29'", {2}},
    {"CAST(ts AS date) = date '2024-01-01'", {0, 1, 6, 9}},
    {"CAST(i32 AS tinyint) > 60", {6, 7, 8, 9}},
    {"CAST(flag AS int) = 1", {0, 3, 5, 8}},
    {"CAST(f32 AS double) > 9", {9}},
    {"CAST('12' AS int) + id = 15", {3}},
    // Hidden columns.
    {"_rowid = 1005", {5}},
    {"_rowoffset >= 8", {8, 9}},
    {"_rowid IN (1001, 1003, 99)", {1, 3}},
    {"_rowid > 1006 AND _rowoffset < 9", {7, 8}},
};

TEST(FilterEvaluatorTest, TableOfFilters) {
  auto batch = TestBatch();
  for (const FilterCase& c : kCases) {
    auto rows = Select(c.sql, *batch);
    ASSERT_TRUE(rows.ok()) << c.sql << ": " << rows.status().ToString();
    EXPECT_EQ(*rows, c.rows) << c.sql;
  }
}

// The same table over a slice (rows 3..8): offsets not a multiple of 8 in every buffer.
TEST(FilterEvaluatorTest, TableOfFiltersOnSlice) {
  auto batch = TestBatch();
  const int64_t from = 3, len = 6;
  auto slice = batch->Slice(from, len);
  for (const FilterCase& c : kCases) {
    auto rows = Select(c.sql, *slice, from);
    ASSERT_TRUE(rows.ok()) << c.sql << ": " << rows.status().ToString();
    std::vector<int64_t> want;
    for (int64_t r : c.rows) {
      if (r >= from && r < from + len) want.push_back(r);
    }
    EXPECT_EQ(*rows, want) << c.sql;
  }
}

struct ErrorCase {
  const char* sql;
  StatusCode code;
  std::vector<const char*> substrings;
};

TEST(FilterEvaluatorTest, BindErrorsNameTokenAndPosition) {
  auto schema = TestSchema();
  const ErrorCase cases[] = {
      {"x = 1",
       StatusCode::kInvalidArgument,
       {"filter: unknown column 'x' at position 0; columns are: id, i32, u64"}},
      {"id = 1 AND nope > 2",
       StatusCode::kInvalidArgument,
       {"unknown column 'nope' at position 11"}},
      {"name = 3",
       StatusCode::kInvalidArgument,
       {"filter: cannot compare utf8 column 'name' with integer 3 at position 7"}},
      {"id = 'a'",
       StatusCode::kInvalidArgument,
       {"cannot compare int64 column 'id' with string 'a' at position 5"}},
      {"foo(id)", StatusCode::kInvalidArgument, {"filter: unknown function 'foo' at position 0"}},
      {"id + 1", StatusCode::kInvalidArgument, {"WHERE clause must be boolean", "is int64"}},
      {"vec = 1", StatusCode::kNotSupported, {"column 'vec'", "at position 0"}},
      {"tags = 1", StatusCode::kNotSupported, {"column 'tags'"}},
      {"info.nope = 1",
       StatusCode::kInvalidArgument,
       {"unknown field 'nope' of struct column 'info' at position 0; fields are: city, zip"}},
      {"id.x = 1", StatusCode::kInvalidArgument, {"not a struct", "position 0"}},
      {"day = 'notadate'", StatusCode::kInvalidArgument, {"date32 column 'day'", "position 6"}},
      {"regexp_match(name, '(')",
       StatusCode::kInvalidArgument,
       {"invalid regular expression '('", "at position 19"}},
      {"regexp_match(name, name)", StatusCode::kInvalidArgument, {"constant pattern"}},
      {"lower(id) = 'a'",
       StatusCode::kInvalidArgument,
       {"function 'lower' needs a string argument, got int64 column 'id' at position 6"}},
      {"lower(name, name) = 'a'", StatusCode::kInvalidArgument, {"takes 1 argument, got 2"}},
      {"CAST(id AS blob) = 1", StatusCode::kInvalidArgument, {"unknown type 'blob'", "position 0"}},
      {"CAST(vec AS int) = 1", StatusCode::kNotSupported, {"cannot cast"}},
      {"CAST('abc' AS int) = 1", StatusCode::kInvalidArgument, {"'abc'", "int32"}},
      {"name LIKE 3", StatusCode::kInvalidArgument, {"LIKE needs strings", "position 10"}},
      {"NOT id", StatusCode::kInvalidArgument, {"NOT needs a boolean", "position 4"}},
      {"day + 1 > 0", StatusCode::kInvalidArgument, {"cannot apply '+' to date32 column 'day'"}},
      {"array_has(tags, 'a')", StatusCode::kInvalidArgument, {"array_has", "position 16"}},
      {"array_has(name, 1)", StatusCode::kInvalidArgument, {"needs a list"}},
      {"id = ", StatusCode::kInvalidArgument, {"filter: "}},  // parser error passes through
  };
  for (const ErrorCase& c : cases) {
    auto r = ParseAndBind(c.sql, *schema);
    ASSERT_FALSE(r.ok()) << c.sql;
    EXPECT_EQ(r.status().code(), c.code) << c.sql << ": " << r.status().ToString();
    for (const char* s : c.substrings) {
      EXPECT_NE(r.status().message().find(s), std::string::npos)
          << c.sql << ": '" << r.status().message() << "' lacks '" << s << "'";
    }
  }
}

TEST(FilterEvaluatorTest, BindReportsColumnsAndHiddenUse) {
  auto schema = TestSchema();
  auto e = ParseAndBind("price > 1 AND (id = 2 OR info.city = 'x') AND _rowid > 3", *schema);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ((*e)->columns(), (std::vector<int>{0, 3, 10}));
  EXPECT_TRUE((*e)->uses_row_id());
  EXPECT_FALSE((*e)->uses_row_offset());
  EXPECT_EQ((*e)->type()->id(), arrow::TypeId::kBool);
  BindOptions proj;
  proj.require_bool = false;
  auto p = ParseAndBind("price * 2", *schema, proj);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)->type()->id(), arrow::TypeId::kFloat64);
}

TEST(FilterEvaluatorTest, EvaluationErrors) {
  auto batch = TestBatch();
  for (const char* sql :
       {"id * 9223372036854775807 > 0", "u64 + 1 > 0", "-(id - 9223372036854775807 - 2) > 0"}) {
    auto r = Select(sql, *batch);
    ASSERT_FALSE(r.ok()) << sql;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("integer overflow in '"), std::string::npos)
        << r.status().message();
  }
  // The message names the overflowing expression.
  auto r = Select("id * 9223372036854775807 > 0", *batch);
  EXPECT_NE(r.status().message().find("(id * 9223372036854775807)"), std::string::npos)
      << r.status().message();
  // Overflow in a null row is no error: row 5 of i32 is null.
  auto ok = Select("i32 IS NULL AND CAST(i32 AS bigint) * 1 = 0", *batch);
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
  // A referenced hidden column without values.
  auto e = ParseAndBind("_rowid = 1", *batch->schema());
  ASSERT_TRUE(e.ok());
  std::vector<uint8_t> mask;
  Status st = EvaluateMask(**e, *batch, RowContext{}, &mask);
  EXPECT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("_rowid"), std::string::npos) << st.message();
  // Constant overflow is found while binding.
  auto c = ParseAndBind("9223372036854775807 + 1 > 0", *batch->schema());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("integer overflow"), std::string::npos);
}

TEST(FilterEvaluatorTest, EmptyBatchAndSingleRowSlices) {
  auto batch = TestBatch();
  auto empty = batch->Slice(0, 0);
  for (const char* sql : {"id = 3", "name LIKE 'a%' OR flag", "price * 2 > 1", "TRUE",
                          "array_has(tags, 1)", "info.city = 'Paris'", "_rowid > 3"}) {
    auto rows = Select(sql, *empty);
    ASSERT_TRUE(rows.ok()) << sql << ": " << rows.status().ToString();
    EXPECT_TRUE(rows->empty()) << sql;
  }
  // Every single-row slice agrees with the full batch.
  for (const FilterCase& c : kCases) {
    for (int64_t r = 0; r < kRows; ++r) {
      auto rows = Select(c.sql, *batch->Slice(r, 1), r);
      ASSERT_TRUE(rows.ok()) << c.sql;
      const bool want = std::find(c.rows.begin(), c.rows.end(), r) != c.rows.end();
      EXPECT_EQ(!rows->empty(), want) << c.sql << " row " << r;
    }
  }
}

// ---- Projections ----------------------------------------------------------------------------

Result<ArrayDataPtr> Project(const std::string& sql, const arrow::RecordBatch& batch) {
  BindOptions o;
  o.require_bool = false;
  STRATA_ASSIGN_OR_RETURN(BoundExprPtr e, ParseAndBind(sql, *batch.schema(), o));
  Hidden h;
  return Evaluate(*e, batch, RowContext{h.ids.data(), h.offsets.data()});
}

TEST(FilterEvaluatorTest, Projections) {
  auto batch = TestBatch();
  {
    auto r = Project("price * 2", *batch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    arrow::Array a(*r);
    ASSERT_EQ(a.type_id(), arrow::TypeId::kFloat64);
    ASSERT_EQ(a.length(), kRows);
    const std::optional<double> want[] = {3,  20, std::nullopt, 51,          200, 14.5,
                                          -6, 0,  100,          std::nullopt};
    for (int64_t i = 0; i < kRows; ++i) {
      ASSERT_EQ(a.IsNull(i), !want[i].has_value()) << i;
      if (want[i]) {
        EXPECT_EQ(a.Value<double>(i), *want[i]) << i;
      }
    }
    EXPECT_EQ(a.null_count(), 2);
  }
  {
    auto r = Project("lower(name)", *batch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    arrow::Array a(*r);
    ASSERT_EQ(a.type_id(), arrow::TypeId::kUtf8);
    const std::optional<std::string> want[] = {"apple",   "banana",   "cherry", std::nullopt,
                                               "ünïcødé", "ünïcødé",  "",       "a_b%c",
                                               "日本語",  "apple pie"};
    for (int64_t i = 0; i < kRows; ++i) {
      ASSERT_EQ(a.IsNull(i), !want[i].has_value()) << i;
      if (want[i]) {
        EXPECT_EQ(a.GetView(i), *want[i]) << i;
      }
    }
    EXPECT_TRUE(arrow::ValidateArray(**r).ok());
  }
  {
    auto r = Project("CAST(id AS varchar)", *batch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    arrow::Array a(*r);
    ASSERT_EQ(a.type_id(), arrow::TypeId::kUtf8);
    for (int64_t i = 0; i < kRows; ++i) EXPECT_EQ(a.GetView(i), std::to_string(i));
  }
  {
    auto r = Project("info.city", *batch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    arrow::Array a(*r);
    EXPECT_EQ(a.GetView(0), "Paris");
    EXPECT_TRUE(a.IsNull(2));
    EXPECT_TRUE(a.IsNull(4));
    EXPECT_EQ(a.GetView(8), "Tokyo");
    EXPECT_EQ(a.null_count(), 2);
  }
  {
    auto r = Project("_rowid + 1", *batch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    arrow::Array a(*r);
    ASSERT_EQ(a.type_id(), arrow::TypeId::kUInt64);
    for (int64_t i = 0; i < kRows; ++i) EXPECT_EQ(a.Value<uint64_t>(i), 1001u + i);
  }
  {
    auto r = Project("1 + 2", *batch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    arrow::Array a(*r);
    ASSERT_EQ(a.length(), kRows);
    for (int64_t i = 0; i < kRows; ++i) EXPECT_EQ(a.Value<int64_t>(i), 3);
  }
  {
    auto r = Project("CAST(ts AS varchar)", *batch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    arrow::Array a(*r);
    EXPECT_EQ(a.GetView(1), "2024-01-01 12:00:00");
    EXPECT_EQ(a.GetView(2), "2024-03-01 00:00:00.500000");
    EXPECT_EQ(a.GetView(4), "2023-12-31 23:59:59");
  }
}

// ---- CastArray --------------------------------------------------------------------------------

TEST(FilterEvaluatorTest, CastArray) {
  using arrow::MakeInt64Array;
  using arrow::MakeUtf8Array;
  {
    auto r =
        CastArray(MakeInt64Array({1, 3000000000LL, std::nullopt}), arrow::int32(), "column 'n'");
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().IsInvalid());
    EXPECT_NE(r.status().message().find("3000000000"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("int32"), std::string::npos);
    EXPECT_NE(r.status().message().find("column 'n'"), std::string::npos);
  }
  {
    auto r = CastArray(MakeInt64Array({1, -2, std::nullopt}), arrow::int32(), "v");
    ASSERT_TRUE(r.ok());
    arrow::Array a(*r);
    EXPECT_EQ(a.Value<int32_t>(0), 1);
    EXPECT_EQ(a.Value<int32_t>(1), -2);
    EXPECT_TRUE(a.IsNull(2));
  }
  {
    // A null row's value is never checked.
    arrow::ArrayBuilder b(arrow::int64());
    ASSERT_TRUE(b.AppendInt(5).ok());
    ASSERT_TRUE(b.AppendNull().ok());
    auto in = *b.Finish();
    auto r = CastArray(in, arrow::int8(), "v");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(arrow::Array(*r).Value<int8_t>(0), 5);
  }
  {
    auto r = CastArray(MakeUtf8Array({"2024-01-31", std::nullopt, "1970-01-01", "1969-12-31"}),
                       arrow::date32(), "v");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    arrow::Array a(*r);
    EXPECT_EQ(a.Value<int32_t>(0), kJan1 + 30);
    EXPECT_TRUE(a.IsNull(1));
    EXPECT_EQ(a.Value<int32_t>(2), 0);
    EXPECT_EQ(a.Value<int32_t>(3), -1);
  }
  {
    auto r = CastArray(MakeUtf8Array({"2024-13-01"}), arrow::date32(), "column 'd'");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("'2024-13-01'"), std::string::npos);
  }
  {
    auto r = CastArray(MakeUtf8Array({"12", " -3 ", "+4"}), arrow::int32(), "v");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    arrow::Array a(*r);
    EXPECT_EQ(a.Value<int32_t>(0), 12);
    EXPECT_EQ(a.Value<int32_t>(1), -3);
    EXPECT_EQ(a.Value<int32_t>(2), 4);
  }
  {
    arrow::ArrayBuilder b(arrow::float64());
    for (double v : {1.9, -1.9, 0.0}) ASSERT_TRUE(b.AppendDouble(v).ok());
    ASSERT_TRUE(b.AppendNull().ok());
    auto r = CastArray(*b.Finish(), arrow::int64(), "v");
    ASSERT_TRUE(r.ok());
    arrow::Array a(*r);
    EXPECT_EQ(a.Value<int64_t>(0), 1);
    EXPECT_EQ(a.Value<int64_t>(1), -1);
    EXPECT_EQ(a.Value<int64_t>(2), 0);
    EXPECT_TRUE(a.IsNull(3));
  }
  for (double bad : {std::nan(""), 1e20}) {
    arrow::ArrayBuilder b(arrow::float64());
    ASSERT_TRUE(b.AppendDouble(bad).ok());
    auto r = CastArray(*b.Finish(), arrow::int64(), "v");
    EXPECT_TRUE(r.status().IsInvalid()) << bad;
  }
  {
    auto r = CastArray(MakeUtf8Array({"a"}),
                       arrow::fixed_size_list(arrow::field("item", arrow::float32()), 2), "v");
    EXPECT_EQ(r.status().code(), StatusCode::kNotSupported);
  }
  {
    auto in = MakeInt64Array({1});
    auto r = CastArray(in, arrow::int64(), "v");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->get(), in.get());  // same type: no copy
  }
  {
    arrow::ArrayBuilder b(arrow::timestamp(arrow::TimeUnit::kSecond));
    ASSERT_TRUE(b.AppendInt(86400).ok());
    auto r = CastArray(*b.Finish(), arrow::timestamp(arrow::TimeUnit::kMicro), "v");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(arrow::Array(*r).Value<int64_t>(0), 86400LL * 1000000);
    arrow::ArrayBuilder c(arrow::timestamp(arrow::TimeUnit::kMicro));
    ASSERT_TRUE(c.AppendInt(-1).ok());
    auto d = CastArray(*c.Finish(), arrow::date32(), "v");
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(arrow::Array(*d).Value<int32_t>(0), -1);  // floor to the previous day
  }
  {
    arrow::ArrayBuilder b(arrow::float32());
    ASSERT_TRUE(b.AppendDouble(0.1).ok());
    auto r = CastArray(*b.Finish(), arrow::utf8(), "v");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(arrow::Array(*r).GetView(0), "0.1");  // shortest float32 text
  }
}

// ---- Throughput sanity check (reported, not timed against a limit) ------------------------

TEST(FilterEvaluatorTest, ThroughputOneMillionRows) {
  const int64_t n = 1000000;
  auto schema = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("price", arrow::float64()), arrow::field("cat", arrow::utf8())});
  arrow::RecordBatchBuilder b(schema);
  b.column(0)->Reserve(n);
  b.column(1)->Reserve(n);
  const char* cats[] = {"a", "b", "c"};
  int64_t want = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double price = static_cast<double>((i * 7919) % 100);
    ASSERT_TRUE(b.column(0)->AppendDouble(price).ok());
    ASSERT_TRUE(b.column(1)->AppendBytes(cats[i % 3]).ok());
    want += price > 10 && i % 3 == 0;
  }
  auto batch = *b.Finish();
  auto e = ParseAndBind("price > 10 AND cat = 'a'", *schema);
  ASSERT_TRUE(e.ok());
  std::vector<uint8_t> mask;
  const int reps = 5;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) ASSERT_TRUE(EvaluateMask(**e, *batch, {}, &mask).ok());
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int64_t got = 0;
  for (uint8_t m : mask) got += m;
  EXPECT_EQ(got, want);
  std::printf("[ perf ] price > 10 AND cat = 'a': %.1f M rows/s\n",
              static_cast<double>(n) * reps / secs / 1e6);
}

// An IN list as long as the 64 KiB filter limit allows (12,000 items) binds in linear time.
// Binding used to rebuild the whole IN expression's text once per item (quadratic: ~16 s for
// this list on the server, holding a worker thread).
TEST(FilterEvaluatorTest, LongInListBindsInLinearTime) {
  auto batch = TestBatch();
  std::string sql = "id IN (3,7";
  for (int i = 100; i < 12100; ++i) sql += "," + std::to_string(i);
  sql += ")";
  ASSERT_LE(sql.size(), 64u * 1024);
  const auto start = std::chrono::steady_clock::now();
  auto rows = Select(sql, *batch);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (std::vector<int64_t>{3, 7}));
  EXPECT_LT(secs, 1.0) << "binding a 12,002-item IN list took " << secs << " s";
}

// update/ stores `NULL` in a column through CastArray: the result must be a valid all-null
// array of every layout. Nested types used to get a values buffer and no children (500
// "storage rows: ... has 2 buffers, expected 1" for `update vector = NULL`).
TEST(FilterEvaluatorTest, CastNullToEveryLayout) {
  using namespace arrow;  // NOLINT
  const std::vector<DataTypePtr> types = {
      int64(),
      utf8(),
      binary(),
      large_binary(),
      fixed_size_list(field("item", float32()), 4),
      list(field("item", utf8())),
      large_list(field("item", int32())),
      struct_({field("a", utf8()), field("b", fixed_size_list(field("item", float32()), 2))}),
  };
  for (const auto& type : types) {
    for (int64_t n : {0, 1, 5}) {
      auto nulls = std::make_shared<ArrayData>();
      nulls->type = null();
      nulls->length = n;
      nulls->null_count = n;
      auto r = CastArray(nulls, type, "column 'c'");
      ASSERT_TRUE(r.ok()) << type->ToString() << ": " << r.status().ToString();
      const Status valid = ValidateArray(**r);
      EXPECT_TRUE(valid.ok()) << type->ToString() << " n=" << n << ": " << valid.ToString();
      EXPECT_TRUE((*r)->type->Equals(*type)) << (*r)->type->ToString();
      EXPECT_EQ((*r)->length, n) << type->ToString();
      EXPECT_EQ((*r)->null_count, n) << type->ToString();
    }
  }
}

}  // namespace
}  // namespace strata::query::filter
