// S3ObjectStore against a scripted HTTP server: retries with backoff, truncated bodies,
// put-if-absent outcome resolution, status mapping. No radosgw needed.
#include <gtest/gtest.h>

#include "io/s3_object_store.h"
#include "scripted_http_server.h"

namespace strata::io {
namespace {

using strata::testing::ScriptedHttpServer;

std::shared_ptr<S3ObjectStore> OpenOn(ScriptedHttpServer& server, int max_attempts) {
  server.Push(ScriptedHttpServer::Response(200, ""));  // HEAD bucket
  S3Options o;
  o.endpoint = server.endpoint();
  o.bucket = "b";
  o.prefix = "p";
  o.access_key = "AK";
  o.secret_key = "SK";
  o.max_attempts = max_attempts;
  o.retry_base_ms = 1;
  o.retry_max_ms = 4;
  auto opened = S3ObjectStore::Open(o);
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  return opened.ok() ? *opened : nullptr;
}

const std::string kInternalError =
    "<?xml version=\"1.0\"?><Error><Code>InternalError</Code><Message>boom</Message></Error>";

TEST(S3Faults, RetriesServerErrorsOnPutThenSucceeds) {
  ScriptedHttpServer server;
  auto s = OpenOn(server, 5);
  ASSERT_NE(s, nullptr);
  server.Push(ScriptedHttpServer::Response(500, kInternalError));
  server.Push(ScriptedHttpServer::Response(503, ""));
  server.Push(ScriptedHttpServer::Response(200, ""));
  ASSERT_TRUE(s->Put("k/x", "data").ok());
  EXPECT_EQ(server.requests(),
            (std::vector<std::string>{"HEAD /b HTTP/1.1", "PUT /b/p/k/x HTTP/1.1",
                                      "PUT /b/p/k/x HTTP/1.1", "PUT /b/p/k/x HTTP/1.1"}));
}

TEST(S3Faults, PutsSignTheirPayloadHashAndSendThePutIfAbsentCondition) {
  ScriptedHttpServer server;
  auto s = OpenOn(server, 1);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Put("k/x", "data").ok());
  ASSERT_TRUE(s->PutIfAbsent("k/y", "").ok());
  ASSERT_TRUE(s->Get("k/x").ok());
  auto heads = server.heads();
  ASSERT_EQ(heads.size(), 4u);
  auto has = [](const std::string& head, const std::string& line) {
    return (head + "\r\n").find("\r\n" + line + "\r\n") != std::string::npos;
  };

  // sha256("data") and sha256("").
  EXPECT_TRUE(has(heads[1],
                  "x-amz-content-sha256: "
                  "3a6eb0790f39ac87c94f3856b2dd2c5d110e6811602261a9a923d3bb23adc8b7"))
      << heads[1];
  EXPECT_FALSE(has(heads[1], "If-None-Match: *")) << heads[1];
  EXPECT_TRUE(has(heads[2],
                  "x-amz-content-sha256: "
                  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
      << heads[2];
  EXPECT_TRUE(has(heads[2], "If-None-Match: *")) << heads[2];
  EXPECT_TRUE(has(heads[3], "x-amz-content-sha256: UNSIGNED-PAYLOAD")) << heads[3];
  EXPECT_NE(heads[1].find("Authorization: AWS4-HMAC-SHA256 Credential=AK/"), std::string::npos)
      << heads[1];
}

TEST(S3Faults, GivesUpAfterMaxAttemptsNamingKeyAndStatus) {
  ScriptedHttpServer server;
  auto s = OpenOn(server, 4);
  ASSERT_NE(s, nullptr);
  for (int i = 0; i < 4; ++i) server.Push(ScriptedHttpServer::Response(500, kInternalError));
  auto got = s->Get("k/x");
  ASSERT_EQ(got.status().code(), StatusCode::kIOError);
  EXPECT_NE(got.status().message().find("'k/x'"), std::string::npos) << got.status().message();
  EXPECT_NE(got.status().message().find("HTTP 500 InternalError: boom"), std::string::npos)
      << got.status().message();
  EXPECT_EQ(server.requests().size(), 5u);  // HEAD + 4 attempts
}

TEST(S3Faults, TruncatedBodyIsAnErrorNeverData) {
  ScriptedHttpServer server;
  auto s = OpenOn(server, 3);
  ASSERT_NE(s, nullptr);
  const std::string half =
      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n" + std::string(50, 'x');
  for (int i = 0; i < 3; ++i) server.Push(half);
  auto got = s->Get("k/x");
  EXPECT_EQ(got.status().code(), StatusCode::kIOError) << got.status().ToString();
  EXPECT_EQ(server.requests().size(), 4u);
  // A truncated answer followed by a complete one: the retry returns the complete bytes.
  server.Push(half);
  server.Push(ScriptedHttpServer::Response(200, std::string(100, 'y')));
  EXPECT_EQ(*s->Get("k/x"), std::string(100, 'y'));
}

TEST(S3Faults, RangedBodyShorterThanItsContentRangeIsAnError) {
  ScriptedHttpServer server;
  auto s = OpenOn(server, 2);
  ASSERT_NE(s, nullptr);
  // Content-Length agrees with the 5 bytes sent, Content-Range promises 10.
  const std::string short_range =
      "HTTP/1.1 206 Partial\r\nContent-Range: bytes 0-9/100\r\nContent-Length: 5\r\n"
      "Connection: close\r\n\r\n01234";
  for (int i = 0; i < 2; ++i) server.Push(short_range);
  auto got = s->GetRange("k/x", 0, 10);
  ASSERT_EQ(got.status().code(), StatusCode::kIOError) << got.status().ToString();
  EXPECT_NE(got.status().message().find("truncated"), std::string::npos) << got.status().message();
  // A range answered from another offset is refused too.
  server.Push(
      "HTTP/1.1 206 Partial\r\nContent-Range: bytes 5-9/100\r\nContent-Length: 5\r\n"
      "Connection: close\r\n\r\n56789");
  EXPECT_EQ(s->GetRange("k/x", 0, 10).status().code(), StatusCode::kIOError);
  // 416: the range starts at or after the end of an existing object.
  server.Push(ScriptedHttpServer::Response(416, ""));
  EXPECT_EQ(*s->GetRange("k/x", 500, 10), "");
}

TEST(S3Faults, StatusMapping) {
  ScriptedHttpServer server;
  auto s = OpenOn(server, 3);
  ASSERT_NE(s, nullptr);
  server.Push(ScriptedHttpServer::Response(404, ""));
  EXPECT_TRUE(s->Get("k/x").status().IsNotFound());
  server.Push(ScriptedHttpServer::Response(404, ""));
  EXPECT_TRUE(s->Head("k/x").status().IsNotFound());
  server.Push(ScriptedHttpServer::Response(412, ""));
  EXPECT_TRUE(s->PutIfAbsent("k/x", "a").IsAlreadyExists());
  server.Push(ScriptedHttpServer::Response(404, ""));
  EXPECT_TRUE(s->Remove("k/x").ok());
  server.Push(ScriptedHttpServer::Response(
      403, "<Error><Code>SignatureDoesNotMatch</Code><Message>no</Message></Error>"));
  Status denied = s->Put("k/x", "a");
  EXPECT_EQ(denied.code(), StatusCode::kIOError);
  EXPECT_NE(denied.message().find("S3 PUT 'k/x' -> HTTP 403 SignatureDoesNotMatch"),
            std::string::npos)
      << denied.message();
  EXPECT_EQ(server.requests().size(), 6u);  // 4xx are answers, never retried
}

TEST(S3Faults, PutIfAbsentWithUnknownOutcomeReadsBack) {
  ScriptedHttpServer server;
  auto s = OpenOn(server, 4);
  ASSERT_NE(s, nullptr);
  // 500 on the put, then the read-back finds this writer's bytes: OK.
  server.Push(ScriptedHttpServer::Response(500, kInternalError));
  server.Push(ScriptedHttpServer::Response(200, "mine"));
  EXPECT_TRUE(s->PutIfAbsent("k/x", "mine").ok());
  // ... finds other bytes: AlreadyExists.
  server.Push(ScriptedHttpServer::Response(500, kInternalError));
  server.Push(ScriptedHttpServer::Response(200, "theirs"));
  EXPECT_TRUE(s->PutIfAbsent("k/x", "mine").IsAlreadyExists());
  // ... finds nothing: the put is sent again (and wins).
  server.Push(ScriptedHttpServer::Response(500, kInternalError));
  server.Push(ScriptedHttpServer::Response(404, ""));
  server.Push(ScriptedHttpServer::Response(200, ""));
  EXPECT_TRUE(s->PutIfAbsent("k/x", "mine").ok());
  const std::string put = "PUT /b/p/k/x HTTP/1.1", get = "GET /b/p/k/x HTTP/1.1";
  EXPECT_EQ(server.requests(),
            (std::vector<std::string>{"HEAD /b HTTP/1.1", put, get, put, get, put, get, put}));
}

TEST(S3Faults, PutIfAbsentIsNeverResentWithoutAReadBack) {
  ScriptedHttpServer server;
  auto s = OpenOn(server, 3);
  ASSERT_NE(s, nullptr);
  for (int i = 0; i < 3; ++i) {
    server.Push(ScriptedHttpServer::Response(503, ""));
    server.Push(ScriptedHttpServer::Response(404, ""));
  }
  Status st = s->PutIfAbsent("k/x", "mine");
  EXPECT_EQ(st.code(), StatusCode::kIOError);
  EXPECT_NE(st.message().find("no definite outcome after 3 attempts"), std::string::npos)
      << st.message();
  const std::string put = "PUT /b/p/k/x HTTP/1.1", get = "GET /b/p/k/x HTTP/1.1";
  EXPECT_EQ(server.requests(),
            (std::vector<std::string>{"HEAD /b HTTP/1.1", put, get, put, get, put, get}));
}

TEST(S3Faults, UnreachableEndpointIsIOError) {
  int port = 0;
  {
    ScriptedHttpServer server;  // a port that was just free, and is closed again
    port = std::stoi(server.endpoint().substr(17));
  }
  S3Options o;
  o.endpoint = "http://127.0.0.1:" + std::to_string(port);
  o.bucket = "b";
  o.access_key = "AK";
  o.secret_key = "SK";
  o.max_attempts = 2;
  o.retry_base_ms = 1;
  auto opened = S3ObjectStore::Open(o);
  EXPECT_EQ(opened.status().code(), StatusCode::kIOError) << opened.status().ToString();
}

TEST(S3Options, FromUrlAndEnvironment) {
  S3Options o;
  ASSERT_TRUE(ParseS3Url("s3://bkt/some/prefix/", &o).ok());
  EXPECT_EQ(o.bucket, "bkt");
  EXPECT_EQ(o.prefix, "some/prefix");
  ASSERT_TRUE(ParseS3Url("s3://only", &o).ok());
  EXPECT_EQ(o.bucket, "only");
  EXPECT_EQ(o.prefix, "");
  EXPECT_TRUE(ParseS3Url("http://x/y", &o).IsInvalid());
  EXPECT_TRUE(ParseS3Url("s3:///p", &o).IsInvalid());

  S3Options base;
  base.endpoint = "http://e:1";
  base.bucket = "given";
  base.access_key = "AK";
  base.secret_key = "SK";
  base.region = "eu-west-1";
  auto filled = S3OptionsFromEnv(base);  // everything given: the environment is not needed
  ASSERT_TRUE(filled.ok()) << filled.status().ToString();
  EXPECT_EQ(filled->bucket, "given");
  EXPECT_EQ(filled->region, "eu-west-1");
  S3Options bad;
  bad.endpoint = "ftp://x";
  bad.bucket = "b";
  bad.access_key = bad.secret_key = "k";
  EXPECT_TRUE(S3ObjectStore::Open(bad).status().IsInvalid());
}

}  // namespace
}  // namespace strata::io
