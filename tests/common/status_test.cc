#include "common/status.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::Invalid("x must be even, got " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  STRATA_ASSIGN_OR_RETURN(int h, Half(x));
  STRATA_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(StatusTest, OkAndErrorCarryCodeAndMessage) {
  EXPECT_TRUE(Status::OK().ok());
  Status s = Status::NotFound("table 't' not found");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NotFound: table 't' not found");
  EXPECT_EQ(s.WithContext("describe").message(), "describe: table 't' not found");
}

TEST(StatusTest, ResultPropagatesFirstError) {
  EXPECT_EQ(*Quarter(12), 3);
  auto r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "x must be even, got 3");
  EXPECT_EQ(Quarter(7).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata
