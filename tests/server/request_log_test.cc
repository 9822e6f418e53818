#include "server/request_log.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace strata::server
