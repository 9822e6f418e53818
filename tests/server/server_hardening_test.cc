// Regression tests for hostile or sloppy requests found by a fresh-user test of `strata serve`:
// deeply nested JSON (used to overflow the stack while echoing the value into the error),
// oversized/malformed Content-Length (used to hold a worker until the body arrived), error log
// lines of gzip-compressed responses, and consistent JSON/k error messages.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "arrow/builder.h"
#include "arrow/ipc/writer.h"
#include "server/http_server.h"

namespace strata::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

arrow::SchemaPtr TableSchema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64()),
      arrow::field("vector", arrow::fixed_size_list(arrow::field("item", arrow::float32()), 4))});
}

std::string OneRowStream() {
  arrow::RecordBatchBuilder b(TableSchema());
  EXPECT_TRUE(b.column(0)->AppendInt(7).ok());
  const float v[4] = {1, 0, 0, 0};
  EXPECT_TRUE(b.column(1)->child(0)->AppendFloats(v, 4).ok());
  EXPECT_TRUE(b.column(1)->AppendValid().ok());
  auto s = arrow::ipc::WriteStream(*TableSchema(), {b.Finish().value()}, {});
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

// Collects formatted log lines; text() may be read while server threads log.
class CaptureSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::string text() {
    std::lock_guard<std::mutex> lock(mutex_);
    return text_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    text_.append(line.data(), line.size());
  }
  void flush_() override {}

 private:
  std::string text_;
};

std::string Nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

class ServerHardeningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata-hardening-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
    Start();
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
    fs::remove_all(dir_);
  }
  void Start(int threads = 4, int read_timeout_s = 30) {
    ServerOptions o;
    o.data_dir = dir_.string();
    o.port = 0;
    o.threads = threads;
    o.max_body_bytes = 1 << 20;
    o.read_timeout_s = read_timeout_s;
    auto s = HttpServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    auto r = client_->Post("/v1/table/t/create/?mode=exist_ok", OneRowStream(),
                           "application/vnd.apache.arrow.stream");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
  }

  httplib::Result PostJson(const std::string& path, const std::string& body) {
    return client_->Post(path, body, "application/json");
  }

  // Asserts status, error code and an exact message (or a prefix ending in "*").
  static void ExpectError(const httplib::Result& r, int status, const std::string& code,
                          const std::string& message) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, status) << r->body;
    json j = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r->body.substr(0, 300);
    EXPECT_EQ(j["error"], code) << r->body.substr(0, 300);
    const std::string got = j["message"].get<std::string>();
    if (!message.empty() && message.back() == '*') {
      EXPECT_EQ(got.substr(0, message.size() - 1), message.substr(0, message.size() - 1));
    } else {
      EXPECT_EQ(got, message);
    }
    EXPECT_LT(r->body.size(), 600u) << "error bodies must not echo request data whole";
  }

  // Sends raw bytes on a fresh connection and returns what the server answers within
  // `wait_ms` (until it closes the connection or `stop_after` is seen).
  std::string Raw(const std::string& request, int wait_ms, const std::string& stop_after) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
    timeval tv{wait_ms / 1000, (wait_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    std::string got;
    char buf[4096];
    while (got.find(stop_after) == std::string::npos) {
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return got;
  }

  fs::path dir_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

constexpr const char* kDepthError = "JSON nesting is deeper than the limit of 64 levels";

// 100,000 levels used to crash the server (recursive dump() of the value into the message).
TEST_F(ServerHardeningTest, DeeplyNestedJsonIs400OnEveryJsonRoute) {
  const std::string deep = Nested(100000);
  // The first '[' past the limit: byte offset of the body where depth 65 opens.
  const std::string pred = "{\"predicate\": " + deep + "}";
  ExpectError(PostJson("/v1/table/t/count_rows/", pred), 400, "invalid_input",
              std::string("count_rows/: ") + kDepthError + " (at byte 77)");
  ExpectError(PostJson("/v1/table/t/query/", "{\"vector\":[1,0,0,0],\"k\":" + deep + "}"), 400,
              "invalid_input", std::string("query/: ") + kDepthError + " (at byte 87)");
  ExpectError(PostJson("/v1/table/t/insert/", deep), 400, "invalid_input",
              std::string("insert/: ") + kDepthError + " (at byte 64)");
  ExpectError(PostJson("/v1/table/t/describe/", "{\"version\":" + deep + "}"), 400, "invalid_input",
              std::string("describe/: ") + kDepthError + " (at byte 74)");
  ExpectError(PostJson("/v1/table/t/delete/", pred), 400, "invalid_input",
              std::string("delete/: ") + kDepthError + " (at byte 77)");
  ExpectError(PostJson("/v1/table/t/flush/", "{\"timeout_ms\":" + deep + "}"), 400, "invalid_input",
              std::string("flush/: ") + kDepthError + " (at byte 77)");
  // Still serving, and nothing was written.
  auto r = PostJson("/v1/table/t/count_rows/", "{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "1");
}

TEST_F(ServerHardeningTest, DepthLimitBoundary) {
  // {"predicate": <63 arrays>} nests 64 levels: parsed, and the value is named by its type.
  ExpectError(PostJson("/v1/table/t/count_rows/", "{\"predicate\": " + Nested(63) + "}"), 400,
              "invalid_input", "predicate must be a string, got array");
  ExpectError(PostJson("/v1/table/t/count_rows/", "{\"predicate\": " + Nested(64) + "}"), 400,
              "invalid_input", std::string("count_rows/: ") + kDepthError + " (at byte 77)");
  // 50,000 levels used to answer 400 with the whole 100 KB value echoed.
  auto r = PostJson("/v1/table/t/query/", "{\"vector\":[1,0,0,0],\"k\":" + Nested(50000) + "}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_LT(r->body.size(), 300u);
}

TEST_F(ServerHardeningTest, InvalidValuesAreNotEchoedWhole) {
  std::string big = "[";
  for (int i = 0; i < 20000; ++i) big += (i ? ",1" : "1");
  big += "]";
  ExpectError(PostJson("/v1/table/t/query/", "{\"k\":" + big + "}"), 400, "invalid_input",
              "k must be an integer, got array");
  ExpectError(PostJson("/v1/table/t/query/", "{\"columns\":[" + big + "]}"), 400, "invalid_input",
              "columns must be an array of column names, got array");
  std::string long_str(10002, 'x');
  long_str.front() = long_str.back() = '"';
  ExpectError(PostJson("/v1/table/t/query/", "{\"with_row_id\":" + long_str + "}"), 400,
              "invalid_input",
              std::string("with_row_id must be true or false, got \"").append(99, 'x') +
                  "... (10002 bytes)");
  // JSON insert: a nested value in a scalar column is named by type and size.
  ExpectError(PostJson("/v1/table/t/insert/", "[{\"id\": " + big + "}]"), 400, "invalid_input",
              "insert: row 0, column 'id': expected an integer for int64, got array of 20000");
}

TEST_F(ServerHardeningTest, InvalidJsonNamesBytePosition) {
  ExpectError(PostJson("/v1/table/t/count_rows/", "{\"predicate\": }"), 400, "invalid_input",
              "count_rows: the request body is not valid JSON at byte 15: syntax error while "
              "parsing value*");
  ExpectError(PostJson("/v1/table/t/query/", "{\"k\":"), 400, "invalid_input",
              "query: the request body is not valid JSON at byte 6: syntax error*");
  ExpectError(PostJson("/v1/table/t/describe/", "{x"), 400, "invalid_input",
              "describe: the request body is not valid JSON at byte 2: syntax error*");
  ExpectError(PostJson("/v1/table/t/insert/", "[{\"id\": 1,}]"), 400, "invalid_input",
              "insert: rows are not valid JSON at byte 11: syntax error*");
}

TEST_F(ServerHardeningTest, KLimitsNamePlan) {
  const std::string vec = "\"vector\":[1,0,0,0]";
  ExpectError(PostJson("/v1/table/t/query/", "{" + vec + ",\"k\":0}"), 400, "invalid_input",
              "k must be >= 1 for a vector search, got 0");
  ExpectError(PostJson("/v1/table/t/query/", "{" + vec + ",\"k\":-1}"), 400, "invalid_input",
              "k must be >= 1 for a vector search, got -1");
  ExpectError(PostJson("/v1/table/t/query/", "{\"k\":-1}"), 400, "invalid_input",
              "k must be >= 0 for a plain scan (0 returns no rows), got -1");
  auto ok = PostJson("/v1/table/t/query/", "{\"k\":0}");  // schema only
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  ok = PostJson("/v1/table/t/query/", "{" + vec + ",\"k\":1}");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
}

TEST_F(ServerHardeningTest, OversizedContentLengthIs413BeforeTheBody) {
  const auto start = std::chrono::steady_clock::now();
  const std::string got =
      Raw("POST /v1/table/t/insert/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          "Content-Length: 10000000000\r\n\r\n",
          3000, "}");
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  EXPECT_EQ(got.rfind("HTTP/1.1 413", 0), 0u) << got;
  EXPECT_NE(got.find("Connection: close"), std::string::npos) << got;
  EXPECT_NE(got.find("{\"error\":\"payload_too_large\",\"message\":\"request body of 10000000000 "
                     "bytes exceeds the limit of 1048576 bytes (strata serve --max-body-bytes)\"}"),
            std::string::npos)
      << got;
  EXPECT_LT(ms, 1000);
}

TEST_F(ServerHardeningTest, MalformedContentLengthIs400) {
  for (const std::string value : {"-5", "abc", "12x", "99999999999999999999999"}) {
    const std::string got =
        Raw("POST /v1/table/t/count_rows/ HTTP/1.1\r\nHost: x\r\n"
            "Content-Length: " +
                value + "\r\n\r\n",
            3000, "}");
    EXPECT_EQ(got.rfind("HTTP/1.1 400", 0), 0u) << value << ": " << got;
    EXPECT_NE(got.find("{\"error\":\"invalid_input\",\"message\":\"Content-Length must be a "
                       "non-negative decimal integer, got '" +
                       value + "'\"}"),
              std::string::npos)
        << got;
  }
}

// 10 connections announcing oversized bodies no longer hold a pool of 2 workers while the
// body would arrive: each is answered at once and released when the client closes (as asked
// by Connection: close), or by the 2 s keep-alive idle timeout when it does not.
TEST_F(ServerHardeningTest, OversizedUploadsDoNotHoldWorkers) {
  client_.reset();
  server_.reset();
  Start(/*threads=*/2);
  auto open_and_get_413 = [this](int i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    const std::string req =
        "POST /v1/table/t/insert/ HTTP/1.1\r\nHost: x\r\nContent-Length: 500000000\r\n\r\n";
    EXPECT_EQ(::send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
    timeval tv{3, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char buf[16] = {};
    EXPECT_EQ(::recv(fd, buf, 12, MSG_WAITALL), 12) << "connection " << i;
    EXPECT_EQ(std::string(buf, 12), "HTTP/1.1 413") << "connection " << i;
    return fd;  // the body is never sent
  };
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) ::close(open_and_get_413(i));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));

  // Both workers parked on connections that stay open: released by the keep-alive timeout.
  const int a = open_and_get_413(10);
  const int b = open_and_get_413(11);
  start = std::chrono::steady_clock::now();
  auto r = client_->Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(3500));
  ::close(a);
  ::close(b);
}

// A client that announces a body and stalls is dropped after --read-timeout-s.
TEST_F(ServerHardeningTest, StalledBodyIsDroppedAfterReadTimeout) {
  client_.reset();
  server_.reset();
  Start(/*threads=*/2, /*read_timeout_s=*/1);
  const auto start = std::chrono::steady_clock::now();
  const std::string got =
      Raw("POST /v1/table/t/count_rows/ HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"ver",
          8000, "}");
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  EXPECT_GE(ms, 900) << got;
  EXPECT_LT(ms, 2500) << "the worker must give up on the stalled body; got: " << got;
  EXPECT_EQ(got.rfind("HTTP/1.1 400", 0), 0u) << got;
  EXPECT_NE(got.find("{\"error\":\"invalid_input\",\"message\":\"the request body could not be "
                     "read (the client stopped sending)\"}"),
            std::string::npos)
      << got;
}

// Error log lines carry code and message, not the (gzip-compressed) response body.
TEST_F(ServerHardeningTest, ErrorLogHasMessageNotCompressedBody) {
  auto sink = std::make_shared<CaptureSink>();
  auto logger = std::make_shared<spdlog::logger>("hardening-test", sink);
  auto previous = spdlog::default_logger();
  // spdlog's default logger may only be swapped while no thread logs: stop the fixture's
  // server, swap, and start a fresh one (and stop it again before swapping back).
  client_.reset();
  server_.reset();
  spdlog::set_default_logger(logger);
  logger->set_level(spdlog::level::warn);
  Start();
  httplib::Headers headers = {{"Accept-Encoding", "gzip"}};
  client_->set_decompress(false);
  auto r =
      client_->Post("/v1/table/t/count_rows/", headers, "{\"predicate\": }", "application/json");
  // The request is logged after the response is sent: wait for the line.
  for (int i = 0; i < 200 && sink->text().find("count_rows") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(r);
  const int status = r->status;
  const std::string encoding = r->get_header_value("Content-Encoding");
  client_.reset();
  server_.reset();
  spdlog::set_default_logger(previous);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(encoding, "gzip");  // the body really is compressed
  const std::string text = sink->text();
  // The structured request line (server/request_log.h).
  EXPECT_NE(text.find("method=POST route=count_rows db=default table=t status=400 duration_ms="),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" bytes_in=15 bytes_out="), std::string::npos) << text;
  EXPECT_NE(text.find("error=\"invalid_input: count_rows: the request body is not valid JSON at "
                      "byte 15: syntax error"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find('\x1f'), std::string::npos) << "gzip magic in the log: " << text;
}

}  // namespace
}  // namespace strata::server
