// The REST server in-process on port 0 with a temporary data directory, driven by
// httplib::Client the way the LanceDB client drives it (chunked LZ4 Arrow uploads, bodiless
// POSTs, IPC file answers).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "arrow/builder.h"
#include "arrow/ipc/reader.h"
#include "arrow/ipc/writer.h"
#include "server/http_server.h"

namespace strata::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kDim = 4;

arrow::SchemaPtr TableSchema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64()),
      arrow::field("vector",
                   arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
}

// Rows ids [first, first + n) with vector (id, 0, 0, 0).
arrow::RecordBatchPtr Rows(int64_t first, int64_t n) {
  arrow::RecordBatchBuilder b(TableSchema());
  for (int64_t i = first; i < first + n; ++i) {
    EXPECT_TRUE(b.column(0)->AppendInt(i).ok());
    const float v[kDim] = {static_cast<float>(i), 0, 0, 0};
    EXPECT_TRUE(b.column(1)->child(0)->AppendFloats(v, kDim).ok());
    EXPECT_TRUE(b.column(1)->AppendValid().ok());
  }
  return b.Finish().value();
}

std::string ArrowStream(const std::vector<arrow::RecordBatchPtr>& batches) {
  arrow::ipc::WriteOptions o;
  o.compression = arrow::ipc::Compression::kLz4Frame;  // as the LanceDB client uploads
  auto s = arrow::ipc::WriteStream(*TableSchema(), batches, o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata-server-test-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
    Start();
  }
  void TearDown() override {
    server_.reset();
    fs::remove_all(dir_);
  }

  void Start(int64_t max_body = 256 << 20) {
    ServerOptions o;
    o.data_dir = dir_.string();
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = 4;
    o.max_body_bytes = max_body;
    auto s = HttpServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    ASSERT_GT(server_->port(), 0);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  void Restart() {
    server_->Stop();
    server_.reset();
    Start();
  }

  // POST with a chunked body (no Content-Length), as the LanceDB client sends Arrow.
  httplib::Result PostChunked(
      const std::string& path, const std::string& body,
      const std::string& content_type = "application/vnd.apache.arrow.stream") {
    return client_->Post(
        path,
        [&body](size_t offset, httplib::DataSink& sink) {
          const size_t n = std::min<size_t>(1000, body.size() - offset);
          if (n > 0) sink.write(body.data() + offset, n);
          if (offset + n >= body.size()) sink.done();
          return true;
        },
        content_type);
  }
  httplib::Result PostJson(const std::string& path, const std::string& body) {
    return client_->Post(path, body, "application/json");
  }

  void CreateTable(const std::string& name, int64_t rows) {
    auto r =
        PostChunked("/v1/table/" + name + "/create/",
                    ArrowStream(rows > 0 ? std::vector{Rows(0, rows)} : std::vector{Rows(0, 0)}));
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
  }

  int64_t CountRows(const std::string& name, const std::string& body = "{\"version\":null}") {
    auto r = PostJson("/v1/table/" + name + "/count_rows/", body);
    EXPECT_TRUE(r);
    if (!r) return -1;
    EXPECT_EQ(r->status, 200) << r->body;
    json j = json::parse(r->body);
    EXPECT_TRUE(j.is_number_integer()) << r->body;  // a bare integer
    return j.get<int64_t>();
  }

  arrow::ipc::ReadResult Query(const std::string& name, const std::string& body) {
    auto r = PostJson("/v1/table/" + name + "/query/", body);
    EXPECT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->body.substr(0, 6), "ARROW1");
    auto read = arrow::ipc::ReadFile(arrow::Buffer::CopyFrom(r->body.data(), r->body.size()));
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    return read.ok() ? *read : arrow::ipc::ReadResult{};
  }

  static void ExpectError(const httplib::Result& r, int status, const std::string& code,
                          const std::string& needle) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, status) << r->body;
    json j = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r->body;
    EXPECT_EQ(j["error"], code) << r->body;
    EXPECT_NE(j["message"].get<std::string>().find(needle), std::string::npos) << r->body;
  }

  fs::path dir_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ServerTest, HealthAndUnknownRoutes) {
  auto r = client_->Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "ok");
  ExpectError(client_->Get("/nope"), 404, "not_found", "/nope");
  ExpectError(PostJson("/v1/other", "{}"), 404, "not_found", "/v1/other");
  ExpectError(PostJson("/v1/table/t/frobnicate/", "{}"), 404, "not_found", "frobnicate");
  ExpectError(PostJson("/v1/table/t/update_field_metadata/", "{}"), 400, "invalid_input",
              "not supported yet");
  EXPECT_TRUE(r->get_header_value("phalanx-version").empty());
}

TEST_F(ServerTest, CreateDescribeInsertCountQuery) {
  CreateTable("t", 3);
  // create again: 400 "already exists"; exist_ok: 200.
  auto again = PostChunked("/v1/table/t/create/?mode=create", ArrowStream({Rows(0, 1)}));
  ExpectError(again, 400, "invalid_input", "already exists");
  auto ok = PostChunked("/v1/table/t/create/?mode=exist_ok", ArrowStream({Rows(0, 1)}));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(CountRows("t"), 3);

  auto d = client_->Post("/v1/table/t/describe/", "", "application/json");
  ASSERT_TRUE(d);
  ASSERT_EQ(d->status, 200) << d->body;
  json desc = json::parse(d->body);
  EXPECT_EQ(desc["schema"].dump(),
            R"({"fields":[{"name":"id","nullable":true,"type":{"type":"int64"}},)"
            R"({"name":"vector","nullable":true,"type":{"fields":[{"name":"item","nullable":true,)"
            R"("type":{"type":"float"}}],"length":4,"type":"fixed_size_list"}}]})");
  const uint64_t v0 = desc["version"].get<uint64_t>();

  auto ins = PostChunked("/v1/table/t/insert/", ArrowStream({Rows(3, 5), Rows(8, 2)}));
  ASSERT_TRUE(ins);
  ASSERT_EQ(ins->status, 200) << ins->body;
  const uint64_t v1 = json::parse(ins->body)["version"].get<uint64_t>();
  EXPECT_GT(v1, v0);
  EXPECT_EQ(CountRows("t"), 10);
  EXPECT_EQ(CountRows("t", R"({"predicate":"id = 7"})"), 1);
  EXPECT_EQ(CountRows("t", R"({"predicate":"id = 70"})"), 0);
  EXPECT_EQ(CountRows("t", R"({"predicate":"id > 7"})"), 2);
  EXPECT_EQ(CountRows("t", R"x({"predicate":"id BETWEEN 2 AND 5 OR id IN (9, 11)"})x"), 5);
  ExpectError(PostJson("/v1/table/t/count_rows/", R"({"predicate":"idd > 7"})"), 400,
              "invalid_input", "unknown column 'idd' at position 0");

  d = PostJson("/v1/table/t/describe/", "{\"version\":" + std::to_string(v1) + "}");
  ASSERT_TRUE(d);
  EXPECT_EQ(json::parse(d->body)["version"].get<uint64_t>(), v1);
  ExpectError(PostJson("/v1/table/t/describe/", R"({"version":999})"), 404, "table_not_found",
              "version 999");

  // Vector search: nearest to (6.2, 0, 0, 0) by l2 are 6, 7, 5.
  auto res = Query("t", R"({"k":3,"vector":[6.2,0,0,0],"prefilter":true,"version":null,)"
                        R"("columns":["id"],"nprobes":20,"ef":null,"refine_factor":null})");
  ASSERT_EQ(res.batches.size(), 1u);
  const auto& b = *res.batches[0];
  ASSERT_EQ(b.schema()->num_fields(), 2);
  EXPECT_EQ(b.schema()->field(1)->name, "_distance");
  ASSERT_EQ(b.num_rows(), 3);
  EXPECT_EQ(b.column(0).Value<int64_t>(0), 6);
  EXPECT_EQ(b.column(0).Value<int64_t>(1), 7);
  EXPECT_EQ(b.column(0).Value<int64_t>(2), 5);
  EXPECT_NEAR(b.column(1).Value<float>(0), 0.04f, 1e-5);
  EXPECT_NEAR(b.column(1).Value<float>(2), 1.44f, 1e-5);

  // Plain scan with the i64-max limit, offset and row ids.
  res = Query("t", R"({"k":9223372036854775807,"vector":[],"offset":8,"with_row_id":true})");
  int64_t rows = 0;
  std::vector<int64_t> ids;
  for (const auto& batch : res.batches) {
    rows += batch->num_rows();
    for (int64_t i = 0; i < batch->num_rows(); ++i)
      ids.push_back(batch->column(0).Value<int64_t>(i));
    EXPECT_EQ(batch->schema()->field(2)->name, "_rowid");
  }
  EXPECT_EQ(rows, 2);
  EXPECT_EQ(ids, (std::vector<int64_t>{8, 9}));

  // Filtered vector search.
  res = Query("t", R"({"k":5,"vector":[0,0,0,0],"filter":"id = 9","distance_type":"dot"})");
  ASSERT_EQ(res.batches[0]->num_rows(), 1);
  EXPECT_EQ(res.batches[0]->column(0).Value<int64_t>(0), 9);

  // Errors.
  ExpectError(PostJson("/v1/table/t/query/", R"({"k":3,"vector":[1,2]})"), 400, "invalid_input",
              "dimension 2 but column 'vector' has dimension 4");
  ExpectError(PostJson("/v1/table/t/query/", R"({"k":3,"vector":[],"filter":"id > > 1"})"), 400,
              "invalid_input", "at position 5");
  ExpectError(PostJson("/v1/table/t/query/", R"({"k":3,"vector":[],"columns":["nope"]})"), 400,
              "invalid_input", "'nope'");
  ExpectError(PostJson("/v1/table/missing/query/", R"({"k":3,"vector":[]})"), 404,
              "table_not_found", "missing");
}

TEST_F(ServerTest, EmptyTableFromZeroRowBatchAndJsonInsert) {
  CreateTable("e", 0);
  EXPECT_EQ(CountRows("e"), 0);
  auto res = Query("e", R"({"k":10,"vector":[1,0,0,0]})");
  ASSERT_EQ(res.batches.size(), 1u);
  EXPECT_EQ(res.batches[0]->num_rows(), 0);
  EXPECT_EQ(res.schema->num_fields(), 3);

  auto r =
      PostJson("/v1/table/e/insert/", R"([{"id":1,"vector":[1,2,3,4]},{"id":2,"vector":null}])");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_TRUE(json::parse(r->body)["version"].is_number_unsigned());
  EXPECT_EQ(CountRows("e"), 2);
  ExpectError(PostJson("/v1/table/e/insert/", R"([{"id":1,"vector":[1,2]}])"), 400, "invalid_input",
              "row 0");
  EXPECT_EQ(CountRows("e"), 2);  // a bad insert changes nothing

  // Overwrite replaces the rows.
  r = PostChunked("/v1/table/e/insert/?mode=overwrite", ArrowStream({Rows(100, 3)}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(CountRows("e"), 3);
}

TEST_F(ServerTest, ListTablesDatabasesAndEncodedNames) {
  CreateTable("b", 1);
  CreateTable("a", 1);
  CreateTable("my%20table", 1);
  auto r = client_->Get("/v1/table/");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["tables"], json({"a", "b", "my table"}));
  r = client_->Get("/v1/table/?limit=1&page_token=a");
  ASSERT_TRUE(r);
  json page = json::parse(r->body);
  EXPECT_EQ(page["tables"], json({"b"}));
  EXPECT_EQ(page["page_token"], "b");
  r = client_->Get("/v1/table?limit=5&page_token=b");  // no trailing slash
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body)["tables"], json({"my table"}));
  EXPECT_EQ(CountRows("my%20table"), 1);

  // Another database is a separate namespace.
  httplib::Headers other = {{"x-lancedb-database", "other"}};
  r = client_->Get("/v1/table/", other);
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body)["tables"], json::array());
  r = client_->Post("/v1/table/a/count_rows/", other, "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);

  // drop: 200, then missing (404 on describe, 200 on a second drop as LanceDB Cloud does).
  r = client_->Post("/v1/table/a/drop/", "", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  ExpectError(PostJson("/v1/table/a/describe/", ""), 404, "table_not_found", "a");
  r = client_->Post("/v1/table/a/drop/", "", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

// A POST with neither Content-Length nor Transfer-Encoding (a bodiless request) is answered at
// once, not after a read timeout.
TEST_F(ServerTest, BodilessPostWithoutContentLength) {
  CreateTable("t", 2);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const std::string req = "POST /v1/table/t/describe/ HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  const auto start = std::chrono::steady_clock::now();
  std::string got;
  char buf[4096];
  while (got.find("\"version\"") == std::string::npos) {
    timeval tv{3, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  EXPECT_EQ(got.rfind("HTTP/1.1 200", 0), 0u) << got;
  EXPECT_NE(got.find("\"schema\""), std::string::npos) << got;
  EXPECT_LT(ms, 1000);
}

TEST_F(ServerTest, BodyLimitGives413) {
  Restart();
  server_.reset();
  Start(/*max_body=*/2048);
  const std::string big = ArrowStream({Rows(0, 500)});
  ASSERT_GT(big.size(), 2048u);
  ExpectError(PostChunked("/v1/table/t/create/", big), 413, "payload_too_large", "2048 bytes");
  auto fresh = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  auto r = fresh->Post("/v1/table/t/create/", big, "application/vnd.apache.arrow.stream");
  ExpectError(r, 413, "payload_too_large", "2048 bytes");
  client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  auto list = client_->Get("/v1/table/");
  ASSERT_TRUE(list);
  EXPECT_EQ(json::parse(list->body)["tables"], json::array());  // nothing was created
}

TEST_F(ServerTest, BadBodiesAre400) {
  ExpectError(PostChunked("/v1/table/t/create/", "not arrow at all"), 400, "invalid_input",
              "not a valid Arrow IPC stream");
  ExpectError(client_->Post("/v1/table/t/create/", "", "application/vnd.apache.arrow.stream"), 400,
              "invalid_input", "empty");
  ExpectError(PostChunked("/v1/table/t/create/?mode=bogus", ArrowStream({Rows(0, 1)})), 400,
              "invalid_input", "mode");
  CreateTable("t", 1);
  ExpectError(PostJson("/v1/table/t/query/", "{\"k\":"), 400, "invalid_input", "not valid JSON");
}

TEST_F(ServerTest, RestartKeepsData) {
  CreateTable("keep", 4);
  auto ins = PostChunked("/v1/table/keep/insert/", ArrowStream({Rows(4, 6)}));
  ASSERT_TRUE(ins);
  ASSERT_EQ(ins->status, 200);
  const uint64_t version = json::parse(ins->body)["version"].get<uint64_t>();
  Restart();
  EXPECT_EQ(CountRows("keep"), 10);
  auto d = PostJson("/v1/table/keep/describe/", "{\"version\":null}");
  ASSERT_TRUE(d);
  EXPECT_EQ(json::parse(d->body)["version"].get<uint64_t>(), version);
  auto res = Query("keep", R"({"k":1,"vector":[9,0,0,0]})");
  ASSERT_EQ(res.batches[0]->num_rows(), 1);
  EXPECT_EQ(res.batches[0]->column(0).Value<int64_t>(0), 9);
}

}  // namespace
}  // namespace strata::server
