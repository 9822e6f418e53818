#include "server/request_context.h"

#include <gtest/gtest.h>

#include "server/http_errors.h"

namespace strata::server {
namespace {

TEST(RequestContextTest, PercentDecode) {
  EXPECT_EQ(*PercentDecode("my%20table"), "my table");
  EXPECT_EQ(*PercentDecode("t%C3%A4"), "t\xC3\xA4");
  EXPECT_EQ(*PercentDecode("a+b"), "a+b");
  EXPECT_FALSE(PercentDecode("bad%2").ok());
  EXPECT_FALSE(PercentDecode("bad%zz").ok());
}

TEST(RequestContextTest, ParseTableRoute) {
  auto r = ParseTableRoute("/v1/table/t/describe/");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->table, "t");
  EXPECT_EQ(r->action, "describe");

  r = ParseTableRoute("/v1/table/my%20table/count_rows");  // no trailing slash
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->table, "my table");
  EXPECT_EQ(r->action, "count_rows");

  r = ParseTableRoute("/v1/table/a/b/create/");  // '/' inside the id
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->table, "a/b");
  EXPECT_EQ(r->action, "create");

  r = ParseTableRoute("/v1/table/ns1$t/index/list/");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->table, "ns1$t");
  EXPECT_EQ(r->action, "index/list");

  r = ParseTableRoute("/v1/table/t/index/vec%20idx/stats/");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->table, "t");
  EXPECT_EQ(r->action, "index/{n}/stats");
  EXPECT_EQ(r->index_name, "vec idx");

  EXPECT_TRUE(ParseTableRoute("/v1/table/t/").status().IsNotFound());
  EXPECT_TRUE(ParseTableRoute("/v2/x/y").status().IsNotFound());
  EXPECT_TRUE(ParseTableRoute("/v1/table//describe/").status().IsNotFound());
}

TEST(HttpErrorsTest, MapsStatusCodes) {
  EXPECT_EQ(MapStatus(Status::Invalid("x")).status, 400);
  EXPECT_STREQ(MapStatus(Status::AlreadyExists("x")).code, "invalid_input");
  EXPECT_EQ(MapStatus(Status::NotFound("x")).status, 404);
  EXPECT_STREQ(MapStatus(Status::NotFound("x")).code, "table_not_found");
  EXPECT_EQ(MapStatus(Status::PayloadTooLarge("x")).status, 413);
  EXPECT_EQ(MapStatus(Status::Backpressure("x")).status, 503);
  EXPECT_EQ(MapStatus(Status::Fenced("x")).status, 409);
  EXPECT_EQ(MapStatus(Status::Timeout("x")).status, 504);
  EXPECT_EQ(MapStatus(Status::IOError("x")).status, 500);
  EXPECT_EQ(ErrorBody("invalid_input", "k must be >= 1"),
            R"({"error":"invalid_input","message":"k must be >= 1"})");
}

}  // namespace
}  // namespace strata::server
