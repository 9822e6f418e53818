#include "index/vector/distance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace strata::index {
namespace {

TEST(DistanceTest, HandComputedValues) {
  const float a[] = {1, 2, 3};
  const float b[] = {4, 6, 8};
  // (1-4)^2 + (2-6)^2 + (3-8)^2 = 9 + 16 + 25
  EXPECT_FLOAT_EQ(L2Squared(a, b, 3), 50.0f);
  // dot = 4 + 12 + 24 = 40 -> 1 - 40
  EXPECT_FLOAT_EQ(Dot(a, b, 3), 40.0f);
  EXPECT_FLOAT_EQ(DotDistance(a, b, 3), -39.0f);
  // cos = 40 / (sqrt(14) * sqrt(116)) = 0.993808...
  const float a_norm = std::sqrt(SquaredNorm(a, 3));
  EXPECT_FLOAT_EQ(a_norm * a_norm, 14.0f);
  EXPECT_NEAR(CosineDistance(a, a_norm, b, 3), 1.0 - 40.0 / std::sqrt(14.0 * 116.0), 1e-6);
}

TEST(DistanceTest, CosineEdgeCases) {
  const float x[] = {1, 0};
  const float y[] = {0, 5};
  const float neg[] = {-2, 0};
  const float zero[] = {0, 0};
  EXPECT_NEAR(CosineDistance(x, 1.0f, y, 2), 1.0f, 1e-7);    // orthogonal
  EXPECT_NEAR(CosineDistance(x, 1.0f, neg, 2), 2.0f, 1e-7);  // opposite
  EXPECT_NEAR(CosineDistance(x, 1.0f, x, 2), 0.0f, 1e-7);    // same
  EXPECT_EQ(CosineDistance(x, 1.0f, zero, 2), 1.0f);         // zero norm: defined as 1
}

// Long vectors exercise the 16-lane body and the scalar tail against a float64 reference.
TEST(DistanceTest, MatchesDoubleReferenceForManyDimensions) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int dim : {1, 15, 16, 17, 37, 128, 784}) {
    std::vector<float> a(dim), b(dim);
    for (int i = 0; i < dim; ++i) {
      a[i] = u(rng);
      b[i] = u(rng);
    }
    double l2 = 0, dot = 0, na = 0, nb = 0;
    for (int i = 0; i < dim; ++i) {
      l2 += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
      dot += double(a[i]) * b[i];
      na += double(a[i]) * a[i];
      nb += double(b[i]) * b[i];
    }
    const double tol = 1e-4 * std::max(1.0, l2);
    EXPECT_NEAR(L2Squared(a.data(), b.data(), dim), l2, tol) << dim;
    EXPECT_NEAR(DotDistance(a.data(), b.data(), dim), 1.0 - dot, 1e-4 * std::max(1.0, nb)) << dim;
    EXPECT_NEAR(CosineDistance(a.data(), float(std::sqrt(na)), b.data(), dim),
                1.0 - dot / std::sqrt(na * nb), 1e-5)
        << dim;
    EXPECT_EQ(Distance(DistanceType::kL2, a.data(), 0, b.data(), dim),
              L2Squared(a.data(), b.data(), dim));
  }
}

TEST(DistanceTest, ParseDistanceType) {
  EXPECT_EQ(*ParseDistanceType("l2"), DistanceType::kL2);
  EXPECT_EQ(*ParseDistanceType("L2"), DistanceType::kL2);
  EXPECT_EQ(*ParseDistanceType("cosine"), DistanceType::kCosine);
  EXPECT_EQ(*ParseDistanceType("dot"), DistanceType::kDot);
  auto hamming = ParseDistanceType("hamming");
  ASSERT_FALSE(hamming.ok());
  EXPECT_EQ(hamming.status().code(), StatusCode::kNotSupported);
  auto bad = ParseDistanceType("manhattan");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("manhattan"), std::string::npos);
  EXPECT_STREQ(DistanceTypeName(DistanceType::kCosine), "cosine");
}

}  // namespace
}  // namespace strata::index
