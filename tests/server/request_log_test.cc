#include "server/request_log.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

namespace strata::server {
namespace {

RequestLogEntry Sample() {
  RequestLogEntry e;
  e.request_id = "r-1";
  e.method = "POST";
  e.route = "delete";
  e.database = "default";
  e.table = "my table";
  e.status = 400;
  e.duration_ms = 3.456;
  e.bytes_in = 24;
  e.bytes_out = 80;
  e.error = "invalid_input: bad \"x\"\nline";
  return e;
}

TEST(RequestLog, TextIsKeyValueWithQuotedValues) {
  EXPECT_EQ(FormatRequestLine(Sample(), LogFormat::kText),
            "request_id=r-1 method=POST route=delete db=default table=\"my table\" status=400 "
            "duration_ms=3.46 bytes_in=24 bytes_out=80 "
            "error=\"invalid_input: bad \\\"x\\\"\\nline\"");
  RequestLogEntry health;
  health.request_id = "h";
  health.method = "GET";
  health.route = "/healthz";
  health.status = 200;
  // Empty database/table/error are left out.
  EXPECT_EQ(FormatRequestLine(health, LogFormat::kText),
            "request_id=h method=GET route=/healthz status=200 duration_ms=0.00 bytes_in=0 "
            "bytes_out=0");
}

TEST(RequestLog, JsonMembersParseBack) {
  const std::string members = FormatRequestLine(Sample(), LogFormat::kJson);
  auto j = nlohmann::json::parse("{" + members + "}");
  EXPECT_EQ(j["request_id"], "r-1");
  EXPECT_EQ(j["route"], "delete");
  EXPECT_EQ(j["db"], "default");
  EXPECT_EQ(j["table"], "my table");
  EXPECT_EQ(j["status"], 400);
  EXPECT_DOUBLE_EQ(j["duration_ms"].get<double>(), 3.46);
  EXPECT_EQ(j["bytes_in"], 24);
  EXPECT_EQ(j["bytes_out"], 80);
  EXPECT_EQ(j["error"], "invalid_input: bad \"x\"\nline");
}

TEST(RequestLog, ParseLogFormatAndNewRequestId) {
  EXPECT_EQ(*ParseLogFormat("text"), LogFormat::kText);
  EXPECT_EQ(*ParseLogFormat("json"), LogFormat::kJson);
  auto bad = ParseLogFormat("xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--log-format"), std::string::npos);
  const std::string a = NewRequestId(), b = NewRequestId();
  EXPECT_EQ(a.size(), 36u);
  EXPECT_NE(a, b);
}

// Request lines below warn are buffered (a write per line cost ~100 us of a query's server
// time); a warn line writes everything before it at once, in order; the rest reaches stderr
// within about a second.
TEST(RequestLog, InfoLinesAreBufferedWarnLinesWriteEverything) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("strata-log-test-" + std::to_string(::getpid()) + ".txt"))
                               .string();
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::dup2(fd, STDERR_FILENO), STDERR_FILENO);
  ::close(fd);
  auto read_all = [&] {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const auto previous = spdlog::default_logger();
  ASSERT_TRUE(ConfigureLogging(LogFormat::kText, "info").ok());
  RequestLogEntry ok = Sample();
  ok.status = 200;
  ok.error.clear();
  ok.request_id = "first";
  LogRequest(ok);
  const std::string after_info = read_all();
  RequestLogEntry bad = Sample();
  bad.request_id = "second";
  LogRequest(bad);  // 400: warn
  const std::string after_warn = read_all();
  ok.request_id = "third";
  LogRequest(ok);
  std::string later;
  for (int i = 0; i < 40 && later.find("request_id=third") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    later = read_all();
  }
  spdlog::default_logger()->flush();
  // Back to the loggers the other tests of this binary expect.
  spdlog::drop("request");
  spdlog::drop("strata");
  spdlog::set_default_logger(previous);
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::filesystem::remove(path);

  EXPECT_EQ(after_info.find("request_id=first"), std::string::npos) << after_info;
  const size_t first = after_warn.find("request_id=first");
  const size_t second = after_warn.find("request_id=second");
  ASSERT_NE(first, std::string::npos) << after_warn;
  ASSERT_NE(second, std::string::npos) << after_warn;
  EXPECT_LT(first, second);
  EXPECT_EQ(after_warn.find("request_id=third"), std::string::npos);
  EXPECT_NE(later.find("request_id=third"), std::string::npos) << later;
}

// A reader that does not read (a full pipe on stderr) never blocks a request: lines wait in
// the buffer, beyond 4 MiB they are dropped and counted, and the count is written once the
// pipe drains (a break test found every worker stalled behind a blocked write).
TEST(RequestLog, AFullPipeNeverBlocksAndDropsAreCounted) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  ASSERT_EQ(::dup2(p[1], STDERR_FILENO), STDERR_FILENO);
  ::close(p[1]);
  const auto previous = spdlog::default_logger();
  ASSERT_TRUE(ConfigureLogging(LogFormat::kText, "info").ok());
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 30000; ++i) {
      RequestLogEntry e = Sample();  // 400: warn, each line flushes
      e.request_id = "x" + std::to_string(i);
      LogRequest(e);
    }
    done = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const bool finished = done.load();
  // Drain the pipe (this also frees the writer if it was blocked), flushing as it empties.
  ASSERT_EQ(::fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
  std::string got;
  char buf[65536];
  const auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (got.find("log lines dropped") == std::string::npos &&
         std::chrono::steady_clock::now() < drain_deadline) {
    const ssize_t n = ::read(p[0], buf, sizeof(buf));
    if (n > 0) {
      got.append(buf, static_cast<size_t>(n));
    } else {
      spdlog::get("request")->flush();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  writer.join();
  spdlog::drop("request");
  spdlog::drop("strata");
  spdlog::set_default_logger(previous);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(p[0]);

  EXPECT_TRUE(finished) << "logging blocked on a full pipe";
  const size_t x0 = got.find("request_id=x0 ");
  const size_t x1 = got.find("request_id=x1 ");
  ASSERT_NE(x0, std::string::npos);
  ASSERT_NE(x1, std::string::npos);
  EXPECT_LT(x0, x1);
  const size_t notice = got.find("log lines dropped");
  ASSERT_NE(notice, std::string::npos);
  // "[request log] N log lines dropped": 30,000 lines of ~250 bytes exceed 64 KiB of pipe and
  // 4 MiB of buffer, so some were dropped, and never all.
  const size_t num = got.rfind("] ", notice);
  const long dropped = std::atol(got.c_str() + num + 2);
  EXPECT_GT(dropped, 0);
  EXPECT_LT(dropped, 30000);
}

}  // namespace
}  // namespace strata::server
