// The request limits over HTTP (server/write_limits.h, ServerOptions::limits): each violation
// answers its 4xx with a message naming the limit, its value and the flag, and the table is
// unchanged afterwards (count_rows, version and values checked).
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "arrow/builder.h"
#include "arrow/ipc/writer.h"
#include "server/http_server.h"

namespace strata::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kDim = 4;

arrow::SchemaPtr Schema(int dim = kDim) {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
      arrow::field("v", arrow::fixed_size_list(arrow::field("item", arrow::float32()), dim))});
}

/// Rows first..first+n-1: name "n{id}" (or `name` when given), v = [id, id, ...].
std::string Stream(int64_t first, int64_t n, int dim = kDim, const std::string& name = "") {
  auto schema = Schema(dim);
  arrow::RecordBatchBuilder b(schema);
  for (int64_t id = first; id < first + n; ++id) {
    EXPECT_TRUE(b.column(0)->AppendInt(id).ok());
    EXPECT_TRUE(b.column(1)->AppendBytes(name.empty() ? "n" + std::to_string(id) : name).ok());
    std::vector<float> v(static_cast<size_t>(dim), static_cast<float>(id));
    EXPECT_TRUE(b.column(2)->child(0)->AppendFloats(v.data(), dim).ok());
    EXPECT_TRUE(b.column(2)->AppendValid().ok());
  }
  auto batch = b.Finish().value();
  return arrow::ipc::WriteStream(*schema, {batch}, {}).value();
}

/// Percent-encodes every byte but [A-Za-z0-9] (RFC 3986 §2.1) for a query parameter.
std::string PercentEncode(const std::string& s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

class LimitsRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata-limits-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
    ServerOptions o;
    o.data_dir = dir_.string();
    o.port = 0;
    o.threads = 2;
    o.max_body_bytes = 64 << 10;
    o.limits.max_rows_per_write = 10;
    o.limits.max_vector_dim = 8;
    o.limits.max_k = 50;
    o.limits.max_filter_bytes = 100;
    o.limits.max_string_bytes = 64;
    auto s = HttpServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    auto r = Post("/v1/table/t/create/", Stream(0, 3), kArrow);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    version_ = Version();
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
    fs::remove_all(dir_);
  }

  static constexpr const char* kArrow = "application/vnd.apache.arrow.stream";
  httplib::Result Post(const std::string& path, const std::string& body,
                       const char* type = "application/json") {
    return client_->Post(path, body, type);
  }
  int64_t Count(const std::string& predicate = "") {
    auto r = Post("/v1/table/t/count_rows/",
                  predicate.empty() ? "{}" : json{{"predicate", predicate}}.dump());
    EXPECT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
    return r->status == 200 ? std::stoll(r->body) : -1;
  }
  uint64_t Version() {
    auto r = Post("/v1/table/t/describe/", "{}");
    EXPECT_TRUE(r && r->status == 200);
    return json::parse(r->body)["version"].get<uint64_t>();
  }
  static void ExpectRefused(const httplib::Result& r, int status, const std::string& code,
                            const std::vector<std::string>& needles) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, status) << r->body;
    json j = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r->body;
    EXPECT_EQ(j["error"], code) << r->body;
    const std::string msg = j["message"].get<std::string>();
    for (const auto& n : needles) {
      EXPECT_NE(msg.find(n), std::string::npos) << "missing '" << n << "' in " << msg;
    }
  }
  /// The table still holds exactly rows 0..2 at the version of SetUp (plus `extra` rows).
  void ExpectUnchanged(int64_t rows = 3) {
    EXPECT_EQ(Count(), rows);
    EXPECT_EQ(Version(), version_);
  }

  fs::path dir_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
  uint64_t version_ = 0;
};

TEST_F(LimitsRoutesTest, RowsPerWriteOnEveryWriteRoute) {
  const std::vector<std::string> names{"rows exceed the limit of 10 rows per write",
                                       "--max-rows-per-write"};
  ExpectRefused(Post("/v1/table/t/insert/", Stream(100, 11), kArrow), 400, "invalid_input", [&] {
    auto n = names;
    n.push_back("insert: 11 rows");
    return n;
  }());
  ExpectUnchanged();
  json rows = json::array();
  for (int i = 0; i < 11; ++i) {
    rows.push_back({{"id", 100 + i}, {"name", "j"}, {"v", {1, 2, 3, 4}}});
  }
  ExpectRefused(Post("/v1/table/t/insert/", rows.dump()), 400, "invalid_input", names);
  ExpectUnchanged();
  ExpectRefused(Post("/v1/table/t/merge_insert/?on=id&when_not_matched_insert_all=true",
                     Stream(100, 11), kArrow),
                400, "invalid_input", names);
  ExpectUnchanged();
  ExpectRefused(Post("/v1/table/t/insert/?mode=overwrite", Stream(100, 11), kArrow), 400,
                "invalid_input", names);
  ExpectUnchanged();
  ExpectRefused(Post("/v1/table/t/create/?mode=overwrite", Stream(100, 11), kArrow), 400,
                "invalid_input", names);
  ExpectUnchanged();
  ExpectRefused(Post("/v1/table/u/create/", Stream(100, 11), kArrow), 400, "invalid_input", names);
  EXPECT_EQ(Post("/v1/table/u/count_rows/", "{}")->status, 404);
  // At the limit: accepted.
  auto ok = Post("/v1/table/t/insert/", Stream(100, 10), kArrow);
  ASSERT_EQ(ok->status, 200) << ok->body;
  EXPECT_EQ(Count(), 13);
}

TEST_F(LimitsRoutesTest, UpdateCountsTheRowsItRewrites) {
  ASSERT_EQ(Post("/v1/table/t/insert/", Stream(10, 8), kArrow)->status, 200);  // 11 rows now
  const uint64_t before = Version();
  ExpectRefused(Post("/v1/table/t/update/",
                     json{{"updates", json::array({json::array({"name", "'changed'"})})},
                          {"predicate", nullptr}}
                         .dump()),
                400, "invalid_input",
                {"update: 11 rows exceed the limit of 10 rows per write", "--max-rows-per-write"});
  EXPECT_EQ(Count(), 11);
  EXPECT_EQ(Count("name = 'changed'"), 0);
  EXPECT_EQ(Version(), before);
  // 10 rows (the predicate picks them) are fine.
  auto ok = Post(
      "/v1/table/t/update/",
      json{{"updates", json::array({json::array({"name", "'changed'"})})}, {"predicate", "id > 0"}}
          .dump());
  ASSERT_EQ(ok->status, 200) << ok->body;
  EXPECT_EQ(Count("name = 'changed'"), 10);
}

TEST_F(LimitsRoutesTest, VectorDimensionAtCreateAndOverwrite) {
  const std::vector<std::string> names{"column 'v' has 9 dimensions",
                                       "the vector dimension limit is 8", "--max-vector-dim"};
  ExpectRefused(Post("/v1/table/w/create/", Stream(0, 1, 9), kArrow), 400, "invalid_input", names);
  EXPECT_EQ(Post("/v1/table/w/count_rows/", "{}")->status, 404);
  ExpectRefused(Post("/v1/table/t/create/?mode=overwrite", Stream(0, 1, 9), kArrow), 400,
                "invalid_input", names);
  ExpectUnchanged();
  ExpectRefused(Post("/v1/table/t/insert/?mode=overwrite", Stream(0, 1, 9), kArrow), 400,
                "invalid_input", names);
  ExpectUnchanged();
  // Dimension 8 is accepted.
  auto ok = Post("/v1/table/w/create/", Stream(0, 2, 8), kArrow);
  EXPECT_EQ(ok->status, 200) << ok->body;
}

TEST_F(LimitsRoutesTest, KOfVectorAndFtsQueriesNotPlainScans) {
  ExpectRefused(Post("/v1/table/t/query/", json{{"vector", {1, 1, 1, 1}}, {"k", 51}}.dump()), 400,
                "invalid_input",
                {"k of 51 for a vector search exceeds the limit of 50", "--max-k"});
  ExpectRefused(
      Post("/v1/table/t/query/",
           json{{"full_text_query", {{"columns", {"name"}}, {"query", "n1"}}}, {"k", 51}}.dump()),
      400, "invalid_input", {"k of 51 for a full-text search", "--max-k"});
  ExpectRefused(Post("/v1/table/t/explain_plan/",
                     json{{"query", {{"vector", {1, 1, 1, 1}}, {"k", 1000}}}}.dump()),
                400, "invalid_input", {"--max-k"});
  auto v = Post("/v1/table/t/query/", json{{"vector", {1, 1, 1, 1}}, {"k", 50}}.dump());
  EXPECT_EQ(v->status, 200) << v->body;
  // The client's plain scan without a limit: i64 max, with an offset.
  auto scan =
      Post("/v1/table/t/query/", R"({"vector": [], "k": 9223372036854775807, "offset": 1})");
  EXPECT_EQ(scan->status, 200) << scan->body;
}

TEST_F(LimitsRoutesTest, FilterLengthOnEveryFilterRoute) {
  std::string long_filter = "id >= 0";
  while (long_filter.size() <= 100) long_filter += " AND id >= 0";
  const std::vector<std::string> names{"the filter length limit is 100 bytes",
                                       "--max-filter-bytes"};
  ExpectRefused(Post("/v1/table/t/count_rows/", json{{"predicate", long_filter}}.dump()), 400,
                "invalid_input", names);
  ExpectRefused(
      Post("/v1/table/t/query/", json{{"vector", json::array()}, {"filter", long_filter}}.dump()),
      400, "invalid_input", names);
  ExpectRefused(Post("/v1/table/t/delete/", json{{"predicate", long_filter}}.dump()), 400,
                "invalid_input", names);
  ExpectUnchanged();
  ExpectRefused(
      Post("/v1/table/t/update/", json{{"updates", json::array({json::array({"name", "'x'"})})},
                                       {"predicate", long_filter}}
                                      .dump()),
      400, "invalid_input", names);
  ExpectUnchanged();
  ExpectRefused(
      Post("/v1/table/t/merge_insert/?on=id&when_matched_update_all=true&"
           "when_not_matched_by_source_delete=true&when_not_matched_by_source_delete_filt=" +
               PercentEncode(long_filter),
           Stream(0, 1), kArrow),
      400, "invalid_input", names);
  ExpectUnchanged();
  // The same filter under the limit works.
  EXPECT_EQ(Count("id >= 0 AND id >= 1"), 2);
}

TEST_F(LimitsRoutesTest, StringValueSize) {
  const std::string big(65, 'x');
  ExpectRefused(Post("/v1/table/t/insert/", Stream(100, 2, kDim, big), kArrow), 400,
                "invalid_input",
                {"row 0, column 'name' holds a value of 65 bytes; the limit is 64 bytes",
                 "--max-string-bytes"});
  ExpectUnchanged();
  json rows = json::array({{{"id", 7}, {"name", "ok"}, {"v", {1, 2, 3, 4}}},
                           {{"id", 8}, {"name", big}, {"v", {1, 2, 3, 4}}}});
  ExpectRefused(Post("/v1/table/t/insert/", rows.dump()), 400, "invalid_input",
                {"row 1, column 'name'", "--max-string-bytes"});
  ExpectUnchanged();
  ExpectRefused(Post("/v1/table/t/merge_insert/?on=id&when_matched_update_all=true",
                     Stream(0, 1, kDim, big), kArrow),
                400, "invalid_input", {"--max-string-bytes"});
  ExpectUnchanged();
  EXPECT_EQ(Count("name = 'n0'"), 1);
  // update/ producing a too-large value.
  ExpectRefused(Post("/v1/table/t/update/",
                     json{{"updates", json::array({json::array({"name", "'" + big + "'"})})},
                          {"predicate", "id = 1"}}
                         .dump()),
                400, "invalid_input", {"update: row 0, column 'name'", "--max-string-bytes"});
  ExpectUnchanged();
  EXPECT_EQ(Count("name = 'n1'"), 1);
  auto ok = Post("/v1/table/t/insert/", Stream(100, 1, kDim, std::string(64, 'y')), kArrow);
  EXPECT_EQ(ok->status, 200) << ok->body;
}

TEST_F(LimitsRoutesTest, OversizedBodyIs413AndWritesNothing) {
  // ~80 KB of rows (64 KiB limit), under the row limit: only the body size is over.
  const std::string body = Stream(100, 10, kDim, std::string(60, 'z')) + std::string(80000, '\0');
  ExpectRefused(Post("/v1/table/t/insert/", body, kArrow), 413, "payload_too_large",
                {"exceeds the limit of 65536 bytes", "(strata serve --max-body-bytes)"});
  ExpectUnchanged();
}

}  // namespace
}  // namespace strata::server
