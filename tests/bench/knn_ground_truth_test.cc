// Exact k-NN ground truth kernel (bench/knn_ground_truth.h) against a naive double-precision
// brute force: same ids in the same order (ties by smaller id) and the same distances.
#include "../../bench/knn_ground_truth.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "../index/fashion_mnist.h"

namespace strata::bench {
namespace {

// Naive reference: every candidate's distance in double, sorted by (distance, id).
std::vector<std::pair<double, int32_t>> Naive(const uint8_t* train,
                                              const std::vector<int32_t>& candidates,
                                              const uint8_t* query, int64_t dim, int64_t k) {
  std::vector<std::pair<double, int32_t>> all;
  for (int32_t id : candidates) {
    double d = 0;
    for (int64_t i = 0; i < dim; ++i) {
      const double x = static_cast<double>(train[id * dim + i]) - static_cast<double>(query[i]);
      d += x * x;
    }
    all.emplace_back(d, id);
  }
  std::sort(all.begin(), all.end());
  all.resize(static_cast<size_t>(k));
  return all;
}

void ExpectMatchesNaive(const uint8_t* train, const std::vector<int32_t>& candidates,
                        const uint8_t* queries, int64_t nq, int64_t dim, int64_t k, int threads) {
  const KnnGroundTruth gt = ExactKnnL2U8(train, candidates, queries, nq, dim, k, threads);
  ASSERT_EQ(gt.queries, nq);
  ASSERT_EQ(gt.k, k);
  ASSERT_EQ(gt.ids.size(), static_cast<size_t>(nq * k));
  ASSERT_EQ(gt.dist.size(), static_cast<size_t>(nq * k));
  for (int64_t q = 0; q < nq; ++q) {
    const auto want = Naive(train, candidates, queries + q * dim, dim, k);
    for (int64_t j = 0; j < k; ++j) {
      const size_t at = static_cast<size_t>(q * k + j);
      ASSERT_EQ(gt.ids[at], want[static_cast<size_t>(j)].second) << "query " << q << " rank " << j;
      ASSERT_EQ(static_cast<double>(gt.dist[at]), want[static_cast<size_t>(j)].first)
          << "query " << q << " rank " << j;
    }
  }
}

TEST(KnnGroundTruthTest, SmallValueRangeWithManyTiesMatchesNaive) {
  // Pixels in {0, 1, 2} over 37 dimensions (not a multiple of 16): many equal distances, so the
  // id tie-break is exercised; odd row and query counts exercise the tile tails.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pix(0, 2);
  const int64_t dim = 37, n = 301, nq = 13;
  std::vector<uint8_t> train(static_cast<size_t>(n * dim)), queries(static_cast<size_t>(nq * dim));
  for (auto& b : train) b = static_cast<uint8_t>(pix(rng));
  for (auto& b : queries) b = static_cast<uint8_t>(pix(rng));
  std::vector<int32_t> all(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
  ExpectMatchesNaive(train.data(), all, queries.data(), nq, dim, 25, 3);
  ExpectMatchesNaive(train.data(), all, queries.data(), nq, dim, n, 1);  // k = every row
}

TEST(KnnGroundTruthTest, CandidateSubsetInAnyOrderMatchesNaive) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> pix(0, 255);
  const int64_t dim = 64, n = 500, nq = 9;
  std::vector<uint8_t> train(static_cast<size_t>(n * dim)), queries(static_cast<size_t>(nq * dim));
  for (auto& b : train) b = static_cast<uint8_t>(pix(rng));
  for (auto& b : queries) b = static_cast<uint8_t>(pix(rng));
  std::vector<int32_t> subset;
  for (int32_t i = 0; i < n; i += 3) subset.push_back(i);
  std::shuffle(subset.begin(), subset.end(), rng);
  ExpectMatchesNaive(train.data(), subset, queries.data(), nq, dim, 10, 2);
  // Extreme pixels: the largest distances (255^2 per dimension) stay exact in int32.
  std::vector<uint8_t> black(static_cast<size_t>(dim), 0), white(static_cast<size_t>(2 * dim), 255);
  const KnnGroundTruth gt = ExactKnnL2U8(white.data(), {0, 1}, black.data(), 1, dim, 2, 1);
  EXPECT_EQ(gt.dist[0], 255 * 255 * dim);
  EXPECT_EQ(gt.ids[0], 0);
  EXPECT_EQ(gt.ids[1], 1);
}

TEST(KnnGroundTruthTest, FashionMnistMatchesNaive) {
  if (!testing::FashionMnistAvailable()) GTEST_SKIP() << "Fashion-MNIST not installed";
  const int64_t n = 2000, nq = 20;
  testing::IdxBytes train, test, labels;
  std::string error;
  ASSERT_TRUE(testing::ReadIdxUbyte(testing::FashionMnistTrainPath(), 3, n, &train, &error))
      << error;
  ASSERT_TRUE(testing::ReadIdxUbyte(testing::FashionMnistTestPath(), 3, nq, &test, &error))
      << error;
  ASSERT_EQ(train.item_size, 784);
  std::vector<int32_t> all(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
  ExpectMatchesNaive(train.bytes.data(), all, test.bytes.data(), nq, 784, 100, 2);

  ASSERT_TRUE(testing::ReadIdxUbyte(testing::FashionMnistTrainLabelsPath(), 1, n, &labels, &error))
      << error;
  ASSERT_EQ(labels.count, n);
  ASSERT_EQ(labels.item_size, 1);
  std::vector<int32_t> shirts;
  for (int32_t i = 0; i < n; ++i) {
    ASSERT_LE(labels.bytes[static_cast<size_t>(i)], 9);
    if (labels.bytes[static_cast<size_t>(i)] == 6) shirts.push_back(i);
  }
  ASSERT_GT(shirts.size(), 100u);  // ~10% of the rows per class
  ASSERT_LT(shirts.size(), 400u);
  ExpectMatchesNaive(train.bytes.data(), shirts, test.bytes.data(), nq, 784, 50, 2);
}

TEST(KnnGroundTruthTest, IdxReaderRejectsWrongDimensionCount) {
  if (!testing::FashionMnistAvailable()) GTEST_SKIP() << "Fashion-MNIST not installed";
  testing::IdxBytes out;
  std::string error;
  EXPECT_FALSE(testing::ReadIdxUbyte(testing::FashionMnistTrainPath(), 1, 10, &out, &error));
  EXPECT_NE(error.find("0x00000801"), std::string::npos) << error;
  EXPECT_FALSE(
      testing::ReadIdxUbyte(testing::FashionMnistDir() + "/missing.gz", 3, 10, &out, &error));
  EXPECT_NE(error.find("short IDX header"), std::string::npos) << error;
}

}  // namespace
}  // namespace strata::bench
