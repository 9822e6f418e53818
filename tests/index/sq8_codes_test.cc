// 8-bit codes (index/vector/sq8_codes.h) and their cache (index/vector/sq8_cache.h): the bounds
// contain the float kernels' distance for every metric and data shape, rows without a usable
// vector get no code, lossless data gets zero residuals, and the cache builds once, hits,
// evicts within its budget and forgets freed batches.
#include "index/vector/sq8_codes.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "arrow/builder.h"
#include "index/vector/sq8_cache.h"

namespace strata::index {
namespace {

// A fixed_size_list<float32>[dim] column of `rows` (row-major); rows in `null_rows` are null.
arrow::Array MakeColumn(const std::vector<float>& rows, int dim,
                        const std::vector<int64_t>& null_rows = {}) {
  arrow::ArrayBuilder b(arrow::fixed_size_list(arrow::field("item", arrow::float32()), dim));
  const int64_t n = static_cast<int64_t>(rows.size()) / dim;
  for (int64_t i = 0; i < n; ++i) {
    if (std::find(null_rows.begin(), null_rows.end(), i) != null_rows.end()) {
      EXPECT_TRUE(b.AppendNull().ok());
    } else {
      EXPECT_TRUE(b.child(0)->AppendFloats(&rows[static_cast<size_t>(i * dim)], dim).ok());
      EXPECT_TRUE(b.AppendValid().ok());
    }
  }
  return arrow::Array(b.Finish().value());
}

enum class Shape { kUniform, kScaledDims, kPixels, kConstantDims, kOffset };

std::vector<float> Data(Shape shape, int dim, int64_t rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> out(static_cast<size_t>(rows * dim));
  for (int64_t i = 0; i < rows; ++i) {
    for (int j = 0; j < dim; ++j) {
      float& x = out[static_cast<size_t>(i * dim + j)];
      switch (shape) {
        case Shape::kUniform:
          x = u(rng);
          break;
        case Shape::kScaledDims:  // dimension j spans about 10^(j % 7 - 3)
          x = g(rng) * std::pow(10.0f, static_cast<float>(j % 7 - 3));
          break;
        case Shape::kPixels:
          x = static_cast<float>(rng() % 256);
          break;
        case Shape::kConstantDims:
          x = j % 2 == 0 ? 0.25f : u(rng);
          break;
        case Shape::kOffset:  // far from the origin: a cancellation-prone l2
          x = 1000.0f + u(rng) * 0.01f;
          break;
      }
    }
  }
  return out;
}

TEST(Sq8Codes, BoundsContainTheFloatDistanceForEveryMetricAndShape) {
  for (Shape shape : {Shape::kUniform, Shape::kScaledDims, Shape::kPixels, Shape::kConstantDims,
                      Shape::kOffset}) {
    for (int dim : {16, 33, 128}) {
      const int64_t rows = 300;
      const std::vector<float> data = Data(shape, dim, rows, 7 + dim);
      const arrow::Array column = MakeColumn(data, dim);
      auto codes = Sq8Codes::Build(column, dim);
      ASSERT_NE(codes, nullptr);
      ASSERT_EQ(codes->rows(), rows);
      // Queries: rows of the data (distance near 0), fresh points and far points.
      std::vector<std::vector<float>> queries;
      for (int64_t r : {0, 17, 299}) {
        queries.emplace_back(data.begin() + r * dim, data.begin() + (r + 1) * dim);
      }
      const std::vector<float> fresh = Data(shape, dim, 3, 99);
      for (int r = 0; r < 3; ++r) {
        queries.emplace_back(fresh.begin() + r * dim, fresh.begin() + (r + 1) * dim);
      }
      queries.push_back(std::vector<float>(static_cast<size_t>(dim), -50.0f));
      for (DistanceType type : {DistanceType::kL2, DistanceType::kCosine, DistanceType::kDot}) {
        SCOPED_TRACE("shape " + std::to_string(static_cast<int>(shape)) + " dim " +
                     std::to_string(dim) + " " + DistanceTypeName(type));
        int64_t checked = 0;
        for (const auto& q : queries) {
          const float qn = std::sqrt(SquaredNorm(q.data(), dim));
          Sq8Query sq(type, q.data(), qn, dim);
          sq.Bind(*codes);
          for (int64_t r = 0; r < rows; ++r) {
            ASSERT_TRUE(codes->IsCoded(r));
            float lo, hi;
            sq.Bounds(r, &lo, &hi);
            const float d = Distance(type, q.data(), qn, &data[static_cast<size_t>(r * dim)], dim);
            ASSERT_LE(lo, d) << "row " << r;
            ASSERT_GE(hi, d) << "row " << r;
            ++checked;
          }
        }
        EXPECT_EQ(checked, rows * static_cast<int64_t>(queries.size()));
      }
    }
  }
}

TEST(Sq8Codes, BoundsAreTightEnoughToRuleRowsOut) {
  // Uniform 128-d rows: the residual is about step / sqrt(12) per dimension, so the l2 bounds
  // of a query's far rows lie well above its nearest row's upper bound.
  const int dim = 128;
  const std::vector<float> data = Data(Shape::kUniform, dim, 1000, 3);
  auto codes = Sq8Codes::Build(MakeColumn(data, dim), dim);
  ASSERT_NE(codes, nullptr);
  const std::vector<float> q(data.begin(), data.begin() + dim);  // row 0
  Sq8Query sq(DistanceType::kL2, q.data(), std::sqrt(SquaredNorm(q.data(), dim)), dim);
  sq.Bind(*codes);
  float lo0, hi0;
  sq.Bounds(0, &lo0, &hi0);
  int64_t ruled_out = 0;
  for (int64_t r = 1; r < 1000; ++r) {
    float lo, hi;
    sq.Bounds(r, &lo, &hi);
    ruled_out += lo > hi0;
  }
  EXPECT_EQ(ruled_out, 999);
  EXPECT_LT(hi0, 0.01f);  // row 0 against itself: the residual only
}

TEST(Sq8Codes, LosslessDataHasZeroResiduals) {
  // Every dimension spans exactly 0..255 in integers: step 1, so every code is exact.
  const int dim = 16;
  std::vector<float> data = Data(Shape::kPixels, dim, 256, 5);
  for (int j = 0; j < dim; ++j) {
    data[static_cast<size_t>(j)] = 0.0f;
    data[static_cast<size_t>(dim + j)] = 255.0f;
  }
  auto codes = Sq8Codes::Build(MakeColumn(data, dim), dim);
  ASSERT_NE(codes, nullptr);
  for (int64_t r = 0; r < 256; ++r) {
    EXPECT_EQ(codes->residual(r), 0.0f) << r;
    for (int j = 0; j < dim; ++j) {
      EXPECT_EQ(codes->code(r)[j], static_cast<uint8_t>(data[static_cast<size_t>(r * dim + j)]));
    }
  }
  EXPECT_EQ(codes->bytes(), 256 * dim + 256 * 8 + dim * 8);
}

TEST(Sq8Codes, RowsWithoutAUsableVectorGetNoCode) {
  const int dim = 16;
  std::vector<float> data = Data(Shape::kUniform, dim, 8, 1);
  data[static_cast<size_t>(2 * dim + 3)] = std::numeric_limits<float>::quiet_NaN();
  data[static_cast<size_t>(3 * dim + 5)] = std::numeric_limits<float>::infinity();
  data[static_cast<size_t>(4 * dim + 1)] = 3e19f;  // squared norm overflows a float
  for (int j = 0; j < dim; ++j) data[static_cast<size_t>(5 * dim + j)] = 0.0f;  // zero vector
  for (int j = 0; j < dim; ++j)
    data[static_cast<size_t>(6 * dim + j)] = 1e-24f;  // products subnormal
  auto codes = Sq8Codes::Build(MakeColumn(data, dim, {1}), dim);
  ASSERT_NE(codes, nullptr);
  const std::vector<bool> coded = {true, false, false, false, false, true, false, true};
  for (int64_t r = 0; r < 8; ++r) EXPECT_EQ(codes->IsCoded(r), coded[static_cast<size_t>(r)]) << r;
  // The zero vector is no neighbour under cosine (exact search skips it) but is under l2.
  const std::vector<float> q(data.begin(), data.begin() + dim);
  const float qn = std::sqrt(SquaredNorm(q.data(), dim));
  Sq8Query cosine(DistanceType::kCosine, q.data(), qn, dim);
  cosine.Bind(*codes);
  float lo, hi;
  cosine.Bounds(5, &lo, &hi);
  EXPECT_TRUE(std::isinf(lo) && lo > 0);
  Sq8Query l2(DistanceType::kL2, q.data(), qn, dim);
  l2.Bind(*codes);
  l2.Bounds(5, &lo, &hi);
  EXPECT_LE(lo, SquaredNorm(q.data(), dim));
  EXPECT_GE(hi, SquaredNorm(q.data(), dim));
  // Another type or list size: no codes.
  EXPECT_EQ(Sq8Codes::Build(MakeColumn(data, dim), dim + 1), nullptr);
  arrow::ArrayBuilder ints(arrow::int32());
  ASSERT_TRUE(ints.AppendInt(1).ok());
  EXPECT_EQ(Sq8Codes::Build(arrow::Array(ints.Finish().value()), 1), nullptr);
}

TEST(Sq8Cache, BuildsOnceHitsEvictsAndForgetsFreedBatches) {
  const int dim = 32;
  const int64_t per_batch = 100 * dim + 100 * 8 + dim * 8;  // bytes of one batch's codes
  Sq8Cache cache(2 * per_batch + 10);                       // room for two batches
  std::vector<arrow::Array> batches;
  for (int i = 0; i < 3; ++i)
    batches.push_back(MakeColumn(Data(Shape::kUniform, dim, 100, i), dim));
  EXPECT_EQ(cache.Get(batches[0], dim, /*build=*/false), nullptr);  // not built yet
  auto a = cache.Get(batches[0], dim, true);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->bytes(), per_batch);
  EXPECT_EQ(cache.Get(batches[0], dim, false), a);  // a hit, the same codes
  ASSERT_NE(cache.Get(batches[1], dim, true), nullptr);
  EXPECT_EQ(cache.stats().entries, 2);
  EXPECT_EQ(cache.stats().bytes, 2 * per_batch);
  // A third batch evicts the least recently used (batch 1: batch 0 was just used).
  EXPECT_EQ(cache.Get(batches[0], dim, false), a);
  ASSERT_NE(cache.Get(batches[2], dim, true), nullptr);
  EXPECT_EQ(cache.stats().entries, 2);
  EXPECT_EQ(cache.stats().evictions, 1);
  EXPECT_EQ(cache.Get(batches[1], dim, false), nullptr);
  EXPECT_EQ(cache.Get(batches[0], dim, false), a);
  EXPECT_EQ(cache.stats().builds, 3);
  EXPECT_EQ(cache.stats().hits, 3);
  // A freed batch's entry is dropped at the next insert (its owner expired).
  batches[2] = batches[0];
  ASSERT_NE(cache.Get(batches[1], dim, true), nullptr);  // evicts nothing live...
  EXPECT_EQ(cache.stats().entries, 2);                   // ...the freed batch 2 went first
  EXPECT_EQ(cache.stats().evictions, 1);
  // Budget 0 disables; a budget below one batch never caches it.
  cache.SetBudget(0);
  EXPECT_EQ(cache.stats().entries, 0);
  EXPECT_EQ(cache.Get(batches[0], dim, true), nullptr);
  cache.SetBudget(per_batch - 1);
  EXPECT_EQ(cache.Get(batches[0], dim, true), nullptr);
  EXPECT_EQ(cache.stats().bytes, 0);
}

// A batch is built once the rows asked of it add up to its rows / share, counted across
// calls (queries that each read a small part of it), and not before.
TEST(Sq8Cache, BuildsOnceTheDemandAddsUpToTheShare) {
  const int dim = 32;
  Sq8Cache cache(int64_t{1} << 20);
  const arrow::Array batch = MakeColumn(Data(Shape::kUniform, dim, 640, 7), dim);
  // 640 rows / share 32: built when 20 rows were asked in all.
  EXPECT_EQ(cache.GetOnDemand(batch, dim, 8, 32), nullptr);
  EXPECT_EQ(cache.GetOnDemand(batch, dim, 11, 32), nullptr);  // 19 asked
  EXPECT_EQ(cache.stats().builds, 0);
  auto codes = cache.GetOnDemand(batch, dim, 1, 32);  // 20 asked: built
  ASSERT_NE(codes, nullptr);
  EXPECT_EQ(codes->rows(), 640);
  EXPECT_EQ(cache.stats().builds, 1);
  EXPECT_EQ(cache.GetOnDemand(batch, dim, 1, 32), codes);  // then a hit
  EXPECT_EQ(cache.stats().hits, 1);
  // One call asking for the whole share builds at once; share 0 never builds.
  const arrow::Array other = MakeColumn(Data(Shape::kUniform, dim, 640, 8), dim);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(cache.GetOnDemand(other, dim, 640, 0), nullptr);
  const arrow::Array third = MakeColumn(Data(Shape::kUniform, dim, 640, 9), dim);
  EXPECT_NE(cache.GetOnDemand(third, dim, 20, 32), nullptr);
  EXPECT_EQ(cache.stats().builds, 2);
  // A disabled cache counts nothing and builds nothing.
  Sq8Cache off(0);
  EXPECT_EQ(off.GetOnDemand(batch, dim, 640, 32), nullptr);
  EXPECT_EQ(off.stats().builds, 0);
}

// Eight threads ask for the codes of six batches under a budget of two while the batches
// are replaced (freed) by one of them: every answer is either nullptr or the codes of the
// batch asked for, and the bytes held never pass the budget (run under make tsan).
TEST(Sq8Cache, ConcurrentGetsUnderASmallBudget) {
  const int dim = 32;
  const int64_t per_batch = 100 * dim + 100 * 8 + dim * 8;
  Sq8Cache cache(2 * per_batch);
  std::vector<std::vector<float>> data;
  for (int i = 0; i < 6; ++i) data.push_back(Data(Shape::kUniform, dim, 100, 40 + i));
  std::mutex mu;  // guards batches
  std::vector<arrow::Array> batches;
  for (int i = 0; i < 6; ++i) batches.push_back(MakeColumn(data[static_cast<size_t>(i)], dim));
  std::atomic<int64_t> wrong{0}, got{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        const size_t b = static_cast<size_t>((i + t) % 6);
        arrow::Array batch = [&] {
          std::lock_guard<std::mutex> lock(mu);
          if (t == 0 && i % 10 == 0) batches[b] = MakeColumn(data[b], dim);  // frees the old
          return batches[b];
        }();
        auto codes = cache.Get(batch, dim, true);
        if (codes == nullptr) continue;
        ++got;
        // Row 0's code decodes near row 0 of batch b.
        const float* v = &data[b][0];
        for (int j = 0; j < dim; ++j) {
          const float x = codes->lo()[static_cast<size_t>(j)] +
                          codes->step()[static_cast<size_t>(j)] * codes->code(0)[j];
          if (std::fabs(x - v[j]) > codes->step()[static_cast<size_t>(j)]) ++wrong;
        }
        if (cache.stats().bytes > 2 * per_batch) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(got.load(), 0);
  EXPECT_LE(cache.stats().bytes, 2 * per_batch);
}

}  // namespace
}  // namespace strata::index
