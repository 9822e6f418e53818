// HnswIndex::AddColumn's multi-threaded chunked insert (index/vector/hnsw_index.h): recall vs
// brute force, every label present, memory accounting, searches interleaving with a large
// insert, and all-or-nothing validation on a large batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "arrow/builder.h"
#include "index/vector/distance.h"
#include "index/vector/hnsw_index.h"

namespace strata::index {
namespace {

std::vector<float> RandomRows(int64_t n, int dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> rows(static_cast<size_t>(n * dim));
  for (auto& x : rows) x = u(rng);
  return rows;
}

arrow::Array MakeColumn(const float* rows, int64_t n, int dim) {
  arrow::ArrayBuilder b(arrow::fixed_size_list(arrow::field("item", arrow::float32()), dim));
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_TRUE(b.child(0)->AppendFloats(rows + i * dim, dim).ok());
    EXPECT_TRUE(b.AppendValid().ok());
  }
  return arrow::Array(b.Finish().value());
}

// The k labels (first_label + row) nearest to q by brute force, ties by label.
std::vector<int64_t> BruteForce(DistanceType type, const std::vector<float>& rows, int dim,
                                const float* q, int64_t k, int64_t first_label) {
  const int64_t n = static_cast<int64_t>(rows.size()) / dim;
  const float q_norm = std::sqrt(SquaredNorm(q, dim));
  std::vector<std::pair<float, int64_t>> all;
  for (int64_t i = 0; i < n; ++i) {
    all.push_back(
        {Distance(type, q, q_norm, &rows[static_cast<size_t>(i * dim)], dim), first_label + i});
  }
  std::partial_sort(all.begin(), all.begin() + k, all.end());
  std::vector<int64_t> out;
  for (int64_t i = 0; i < k; ++i) out.push_back(all[static_cast<size_t>(i)].second);
  return out;
}

class HnswParallelAddTest : public ::testing::TestWithParam<DistanceType> {};

TEST_P(HnswParallelAddTest, LargeAddColumnRecallLabelsAndMemory) {
  const DistanceType type = GetParam();
  const int dim = 32;
  const int64_t n = 5000;
  const int64_t first_label = 1000;
  const auto rows = RandomRows(n, dim, 91);
  HnswParams p;
  p.distance = type;
  auto idx = HnswIndex::Make(dim, p, 16).value();  // grows by doubling inside AddColumn
  const int64_t mem_before = idx->memory_bytes();
  auto added = idx->AddColumn(MakeColumn(rows.data(), n, dim), first_label);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added, n);
  EXPECT_EQ(idx->size(), n);
  // At least the raw vectors are charged, and more than the empty index.
  EXPECT_GT(idx->memory_bytes(), mem_before);
  EXPECT_GE(idx->memory_bytes(), n * dim * static_cast<int64_t>(sizeof(float)));

  // Every label is in the graph and reachable: a search as broad as the index returns all.
  {
    const auto all = idx->Search(&rows[0], n, n).value();
    ASSERT_EQ(static_cast<int64_t>(all.size()), n);
    std::set<int64_t> labels;
    for (const auto& nb : all) labels.insert(nb.label);
    EXPECT_EQ(static_cast<int64_t>(labels.size()), n);
    EXPECT_EQ(*labels.begin(), first_label);
    EXPECT_EQ(*labels.rbegin(), first_label + n - 1);
  }
  // A sample of rows finds itself at distance ~0.
  for (int64_t i = 0; i < n; i += 25) {
    const auto r = idx->Search(&rows[static_cast<size_t>(i * dim)], 1, 200).value();
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].label, first_label + i);
    EXPECT_NEAR(r[0].distance, 0.0f, 1e-4f) << i;
  }
  // recall@10 against brute force on fresh queries.
  const int64_t nq = 100, k = 10;
  const auto queries = RandomRows(nq, dim, 92);
  int64_t hits = 0;
  for (int64_t q = 0; q < nq; ++q) {
    const float* qv = &queries[static_cast<size_t>(q * dim)];
    const auto truth = BruteForce(type, rows, dim, qv, k, first_label);
    const auto got = idx->Search(qv, k, 100).value();
    ASSERT_EQ(static_cast<int64_t>(got.size()), k);
    for (size_t j = 1; j < got.size(); ++j) EXPECT_LE(got[j - 1].distance, got[j].distance);
    for (const auto& nb : got) {
      hits += std::count(truth.begin(), truth.end(), nb.label);
    }
  }
  const double recall = static_cast<double>(hits) / static_cast<double>(nq * k);
  EXPECT_GE(recall, 0.95) << DistanceTypeName(type);
}

INSTANTIATE_TEST_SUITE_P(Distances, HnswParallelAddTest,
                         ::testing::Values(DistanceType::kL2, DistanceType::kCosine),
                         [](const auto& info) {
                           return std::string(DistanceTypeName(info.param));
                         });

TEST(HnswParallelAddTest, SearchesInterleaveWithLargeAddColumn) {
  const int dim = 32;
  const int64_t seed_rows = 200, batch = 4 * 256, batches = 4;
  const int64_t n = seed_rows + batch * batches;
  const auto rows = RandomRows(n, dim, 93);
  auto idx = HnswIndex::Make(dim, HnswParams{}, 16).value();
  ASSERT_EQ(idx->AddColumn(MakeColumn(rows.data(), seed_rows, dim), 0).value(), seed_rows);
  std::atomic<bool> done{false};
  std::atomic<int64_t> bad{0}, searches{0};
  std::thread writer([&] {
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t start = seed_rows + b * batch;
      auto r =
          idx->AddColumn(MakeColumn(&rows[static_cast<size_t>(start * dim)], batch, dim), start);
      if (!r.ok() || *r != batch) bad.fetch_add(1);
    }
    done = true;
  });
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::uniform_int_distribution<int64_t> pick(0, seed_rows - 1);
      while (!done.load()) {
        const float* q = &rows[static_cast<size_t>(pick(rng) * dim)];
        auto r = idx->Search(q, 10, 32);
        searches.fetch_add(1);
        if (!r.ok() || r->size() != 10) {
          bad.fetch_add(1);
          continue;
        }
        float prev = -1;
        for (const auto& nb : *r) {
          if (nb.label < 0 || nb.label >= n || nb.distance < prev ||
              std::fabs(L2Squared(q, &rows[static_cast<size_t>(nb.label * dim)], dim) -
                        nb.distance) > 1e-3f) {
            bad.fetch_add(1);
          }
          prev = nb.distance;
        }
      }
    });
  }
  writer.join();
  for (auto& th : readers) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(searches.load(), 0);
  EXPECT_EQ(idx->size(), n);
  int64_t self = 0;
  for (int64_t i = 0; i < n; i += 20) {
    const auto r = idx->Search(&rows[static_cast<size_t>(i * dim)], 1, 64).value();
    self += (!r.empty() && r[0].label == i);
  }
  EXPECT_GE(self, (n + 19) / 20 - 2);
}

TEST(HnswParallelAddTest, BadRowOrPresentLabelInLargeBatchIndexesNothing) {
  const int dim = 16;
  const int64_t n = 1000;
  auto rows = RandomRows(n, dim, 94);
  // A non-finite value in the last chunk: no chunk goes in.
  auto bad = rows;
  bad[static_cast<size_t>(900 * dim + 7)] = std::numeric_limits<float>::infinity();
  auto idx = HnswIndex::Make(dim, HnswParams{}).value();
  auto st = idx->AddColumn(MakeColumn(bad.data(), n, dim), 0);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("row 900"), std::string::npos) << st.status().ToString();
  EXPECT_EQ(idx->size(), 0);

  // A label already present (row 700's) rejects the batch before anything is indexed.
  ASSERT_TRUE(idx->Add(5700, &rows[0]).ok());
  const int64_t mem = idx->memory_bytes();
  st = idx->AddColumn(MakeColumn(rows.data(), n, dim), 5000);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("5700"), std::string::npos) << st.status().ToString();
  EXPECT_EQ(idx->size(), 1);
  EXPECT_EQ(idx->memory_bytes(), mem);
  // Labels that would overflow int64.
  st = idx->AddColumn(MakeColumn(rows.data(), 2, dim), std::numeric_limits<int64_t>::max());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(idx->size(), 1);
  // The same batch under fresh labels goes in whole.
  EXPECT_EQ(idx->AddColumn(MakeColumn(rows.data(), n, dim), 10000).value(), n);
  EXPECT_EQ(idx->size(), n + 1);
}

}  // namespace
}  // namespace strata::index
