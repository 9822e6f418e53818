// server/write_limits.h: each limit at, and one past, its value; messages name the limit,
// its value and the flag.
#include "server/write_limits.h"

#include <gtest/gtest.h>

#include <limits>

#include "arrow/builder.h"

namespace strata::server {
namespace {

void ExpectLimit(const Status& st, const std::vector<std::string>& needles) {
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(st.IsInvalid()) << st.ToString();
  for (const auto& n : needles) {
    EXPECT_NE(st.message().find(n), std::string::npos)
        << "missing '" << n << "' in " << st.message();
  }
}

arrow::RecordBatchPtr StringRows(const std::vector<std::string>& values) {
  auto schema = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64()), arrow::field("s", arrow::utf8())});
  arrow::RecordBatchBuilder b(schema);
  int64_t id = 0;
  for (const auto& v : values) {
    EXPECT_TRUE(b.column(0)->AppendInt(id++).ok());
    EXPECT_TRUE(b.column(1)->AppendBytes(v).ok());
  }
  return b.Finish().value();
}

TEST(WriteLimits, RowsPerWrite) {
  RequestLimits l;
  l.max_rows_per_write = 5;
  EXPECT_TRUE(CheckRowsPerWrite(l, 5, "insert").ok());
  ExpectLimit(CheckRowsPerWrite(l, 6, "insert"),
              {"insert: 6 rows exceed the limit of 5 rows per write",
               "(strata serve --max-rows-per-write)"});
  // Counted across batches.
  auto b = StringRows({"a", "b", "c"});
  EXPECT_TRUE(CheckWrite(l, nullptr, {b}, "insert").ok());
  ExpectLimit(CheckWrite(l, nullptr, {b, b}, "merge_insert"), {"merge_insert: 6 rows"});
}

TEST(WriteLimits, VectorDimensionIncludingNestedAndTheHardCap) {
  RequestLimits l;
  l.max_vector_dim = 8;
  auto vec = [](int n) {
    return arrow::fixed_size_list(arrow::field("item", arrow::float32()), n);
  };
  arrow::Schema ok({arrow::field("v", vec(8))});
  EXPECT_TRUE(CheckSchemaLimits(l, ok, "create").ok());
  arrow::Schema wide({arrow::field("id", arrow::int64()), arrow::field("v", vec(9))});
  ExpectLimit(CheckSchemaLimits(l, wide, "create"),
              {"create: column 'v' has 9 dimensions; the vector dimension limit is 8",
               "(strata serve --max-vector-dim)"});
  arrow::Schema nested({arrow::field("s", arrow::struct_({arrow::field("emb", vec(9))}))});
  ExpectLimit(CheckSchemaLimits(l, nested, "insert"), {"column 's.emb' has 9 dimensions"});
  // A configured value above the hard maximum is capped.
  l.max_vector_dim = int64_t{1} << 30;
  arrow::Schema huge({arrow::field("v", vec(65537))});
  ExpectLimit(CheckSchemaLimits(l, huge, "create"), {"limit is 65536"});
  arrow::Schema at_cap({arrow::field("v", vec(65536))});
  EXPECT_TRUE(CheckSchemaLimits(l, at_cap, "create").ok());
}

TEST(WriteLimits, StringValueSizeNamesRowAndColumn) {
  RequestLimits l;
  l.max_string_bytes = 4;
  EXPECT_TRUE(CheckStringValues(l, {StringRows({"abcd", "", "xy"})}, "insert").ok());
  // Row numbers count across batches.
  ExpectLimit(CheckStringValues(l, {StringRows({"a", "b"}), StringRows({"ok", "abcde"})}, "insert"),
              {"insert: row 3, column 's' holds a value of 5 bytes; the limit is 4 bytes",
               "(strata serve --max-string-bytes)"});
  // A sliced batch: offsets honored (row 0 of the slice is "toolong").
  auto big = StringRows({"x", "toolong", "y"});
  auto slice = big->Slice(1, 2);
  ExpectLimit(CheckStringValues(l, {slice}, "insert"), {"row 0, column 's' holds a value of 7"});
  EXPECT_TRUE(CheckStringValues(l, {big->Slice(2, 1)}, "insert").ok());
}

TEST(WriteLimits, StringsInsideListsAndNullsSkipped) {
  RequestLimits l;
  l.max_string_bytes = 3;
  auto schema = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("tags", arrow::list(arrow::field("item", arrow::utf8())))});
  arrow::RecordBatchBuilder b(schema);
  auto* tags = b.column(0);
  ASSERT_TRUE(tags->child(0)->AppendBytes("abc").ok());
  ASSERT_TRUE(tags->AppendListEnd().ok());
  ASSERT_TRUE(tags->AppendNull().ok());
  ASSERT_TRUE(tags->child(0)->AppendBytes("a").ok());
  ASSERT_TRUE(tags->child(0)->AppendBytes("abcd").ok());
  ASSERT_TRUE(tags->AppendListEnd().ok());
  auto batch = b.Finish().value();
  ExpectLimit(CheckStringValues(l, {batch}, "insert"),
              {"row 2, column 'tags' holds a value of 4 bytes"});
  l.max_string_bytes = 4;
  EXPECT_TRUE(CheckStringValues(l, {batch}, "insert").ok());
}

TEST(WriteLimits, FilterBytes) {
  RequestLimits l;
  l.max_filter_bytes = 10;
  EXPECT_TRUE(CheckFilterBytes(l, "id = 12345", "filter").ok());
  ExpectLimit(CheckFilterBytes(l, "id = 123456", "delete: predicate"),
              {"delete: predicate is 11 bytes long; the filter length limit is 10 bytes",
               "(strata serve --max-filter-bytes)"});
  // Never above the parser's own 64 KiB limit.
  l.max_filter_bytes = 1 << 20;
  ExpectLimit(CheckFilterBytes(l, std::string(65537, 'a'), "filter"), {"limit is 65536 bytes"});
}

TEST(WriteLimits, KOfVectorAndFtsQueriesButNotPlainScans) {
  RequestLimits l;
  l.max_k = 100;
  auto parse = [](const std::string& body) {
    auto r = ParseQueryRequest(body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return *r;
  };
  EXPECT_TRUE(CheckQueryLimits(l, parse(R"({"vector": [1, 2], "k": 100})")).ok());
  ExpectLimit(CheckQueryLimits(l, parse(R"({"vector": [1, 2], "k": 101})")),
              {"k of 101 for a vector search exceeds the limit of 100", "(strata serve --max-k)"});
  ExpectLimit(
      CheckQueryLimits(l, parse(R"({"full_text_query": {"columns": [], "query": "x"}, "k": 500})")),
      {"k of 500 for a full-text search exceeds the limit of 100"});
  // The LanceDB client's "no limit" for plain scans, with an offset.
  EXPECT_TRUE(
      CheckQueryLimits(l, parse(R"({"vector": [], "k": 9223372036854775807, "offset": 5})")).ok());
  l.max_filter_bytes = 5;
  ExpectLimit(CheckQueryLimits(l, parse(R"({"vector": [], "filter": "id > 100"})")),
              {"filter is 8 bytes long"});
}

}  // namespace
}  // namespace strata::server
