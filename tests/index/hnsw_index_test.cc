#include "index/vector/hnsw_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "arrow/builder.h"
#include "fashion_mnist.h"  // tests/index/
#include "index/vector/exact_search.h"

namespace strata::index {
namespace {

namespace fm = strata::testing;

std::vector<float> RandomRows(int64_t n, int dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> rows(static_cast<size_t>(n * dim));
  for (auto& x : rows) x = u(rng);
  return rows;
}

arrow::Array MakeColumn(const float* rows, int64_t n, int dim,
                        const std::vector<int64_t>& null_rows = {},
                        const std::vector<int64_t>& element_null_rows = {}) {
  arrow::ArrayBuilder b(arrow::fixed_size_list(arrow::field("item", arrow::float32()), dim));
  auto has = [](const std::vector<int64_t>& v, int64_t i) {
    return std::find(v.begin(), v.end(), i) != v.end();
  };
  for (int64_t i = 0; i < n; ++i) {
    if (has(null_rows, i)) {
      EXPECT_TRUE(b.AppendNull().ok());
      continue;
    }
    const int appended = has(element_null_rows, i) ? dim - 1 : dim;
    EXPECT_TRUE(b.child(0)->AppendFloats(rows + i * dim, appended).ok());
    if (appended < dim) {
      EXPECT_TRUE(b.child(0)->AppendNull().ok());
    }
    EXPECT_TRUE(b.AppendValid().ok());
  }
  return arrow::Array(b.Finish().value());
}

std::unique_ptr<HnswIndex> Build(const std::vector<float>& rows, int dim, DistanceType type,
                                 int64_t capacity = 1024) {
  HnswParams p;
  p.distance = type;
  auto idx = HnswIndex::Make(dim, p, capacity).value();
  const int64_t n = static_cast<int64_t>(rows.size()) / dim;
  for (int64_t i = 0; i < n; ++i)
    EXPECT_TRUE(idx->Add(i, &rows[static_cast<size_t>(i * dim)]).ok());
  return idx;
}

TEST(HnswIndexTest, MakeRejectsBadParameters) {
  HnswParams p;
  auto r = HnswIndex::Make(0, p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("dim"), std::string::npos);
  p.m = 1;
  r = HnswIndex::Make(8, p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("m 1"), std::string::npos);
  p.m = 16;
  p.ef_construction = 8;
  r = HnswIndex::Make(8, p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ef_construction"), std::string::npos);
  p.ef_construction = 100;
  r = HnswIndex::Make(8, p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->dim(), 8);
  EXPECT_EQ((*r)->size(), 0);
  EXPECT_GT((*r)->memory_bytes(), 0);
  const float q[8] = {1, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_TRUE((*r)->Search(q, 5, 10).value().empty());  // empty index: no answer, no error
}

// Distances of the answers equal distance.h's, and with ef = n (the whole graph) the answer
// is the exact top-k.
TEST(HnswIndexTest, DistancesMatchDistanceH) {
  const int dim = 24;
  const int64_t n = 400;
  const auto rows = RandomRows(n, dim, 21);
  for (DistanceType type : {DistanceType::kL2, DistanceType::kCosine, DistanceType::kDot}) {
    SCOPED_TRACE(DistanceTypeName(type));
    auto idx = Build(rows, dim, type);
    ASSERT_EQ(idx->size(), n);
    const auto queries = RandomRows(20, dim, 22);
    for (int qi = 0; qi < 20; ++qi) {
      const float* q = &queries[static_cast<size_t>(qi * dim)];
      const float qn = std::sqrt(SquaredNorm(q, dim));
      auto got = idx->Search(q, 10, n).value();
      ASSERT_EQ(got.size(), 10u);
      auto ex = ExactSearcher::Make(q, dim, type).value();
      TopK top(10);
      for (int64_t i = 0; i < n; ++i) top.Push(i, ex.Distance(&rows[static_cast<size_t>(i * dim)]));
      const auto want = top.Sorted();
      for (size_t j = 0; j < got.size(); ++j) {
        const float ref =
            Distance(type, q, qn, &rows[static_cast<size_t>(got[j].label * dim)], dim);
        EXPECT_NEAR(got[j].distance, ref, 1e-4 * std::max(1.0f, std::fabs(ref)));
        EXPECT_EQ(got[j].label, want[j].label) << "rank " << j;
        if (j > 0) {
          EXPECT_LE(got[j - 1].distance, got[j].distance);
        }
      }
    }
  }
}

TEST(HnswIndexTest, AddRejectsBadInputAndChangesNothing) {
  HnswParams p;
  p.distance = DistanceType::kCosine;
  auto idx = HnswIndex::Make(4, p).value();
  const float v[4] = {1, 2, 3, 4};
  const float zero[4] = {0, 0, 0, 0};
  const float inf[4] = {1, std::numeric_limits<float>::infinity(), 0, 0};
  ASSERT_TRUE(idx->Add(7, v).ok());
  EXPECT_NE(idx->Add(7, v).message().find("already indexed"), std::string::npos);
  EXPECT_NE(idx->Add(-1, v).message().find("negative"), std::string::npos);
  EXPECT_NE(idx->Add(8, zero).message().find("zero"), std::string::npos);
  EXPECT_NE(idx->Add(9, inf).message().find("element 1"), std::string::npos);
  EXPECT_EQ(idx->size(), 1);
  EXPECT_EQ(idx->Search(zero, 1, 10).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(idx->Search(v, 0, 10).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(idx->Search(v, 1, 0).status().code(), StatusCode::kInvalidArgument);
  auto r = idx->Search(v, 3, 10).value();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].label, 7);
  EXPECT_NEAR(r[0].distance, 0.0f, 1e-6);
}

TEST(HnswIndexTest, AddColumnSkipsNullVectors) {
  const int dim = 16;
  const int64_t n = 60;
  const auto rows = RandomRows(n, dim, 31);
  const arrow::Array col = MakeColumn(rows.data(), n, dim, {2, 10, 59}, {4, 33});
  auto idx = HnswIndex::Make(dim, HnswParams{}).value();
  auto added = idx->AddColumn(col, 100);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added, n - 5);
  EXPECT_EQ(idx->size(), n - 5);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < n; ++i) {
    const auto r = idx->Search(&rows[static_cast<size_t>(i * dim)], 5, n).value();
    for (const auto& nb : r) {
      seen.insert(nb.label);
    }
  }
  for (int64_t skipped : {2, 10, 59, 4, 33}) EXPECT_EQ(seen.count(100 + skipped), 0u) << skipped;
  EXPECT_EQ(seen.count(100 + 0), 1u);
  EXPECT_EQ(seen.count(100 + 58), 1u);

  // A slice labels its rows from the given first label.
  auto idx2 = HnswIndex::Make(dim, HnswParams{}).value();
  EXPECT_EQ(idx2->AddColumn(col.Slice(30, 10), 30).value(), 9);  // row 33 has a null element
  auto r = idx2->Search(&rows[35 * dim], 1, 10).value();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].label, 35);
  EXPECT_NEAR(r[0].distance, 0.0f, 1e-5);

  // Wrong type or list size.
  EXPECT_FALSE(idx->AddColumn(MakeColumn(rows.data(), 4, 8), 0).ok());
  // A non-finite row rejects the whole column before indexing anything.
  auto bad = rows;
  bad[static_cast<size_t>(5 * dim + 3)] = std::numeric_limits<float>::quiet_NaN();
  auto idx3 = HnswIndex::Make(dim, HnswParams{}).value();
  auto st = idx3->AddColumn(MakeColumn(bad.data(), n, dim), 0);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("row 5"), std::string::npos);
  EXPECT_EQ(idx3->size(), 0);
}

TEST(HnswIndexTest, FilteredSearchReturnsOnlyAcceptedAndKOfThem) {
  const int dim = 16;
  const int64_t n = 2000;
  const auto rows = RandomRows(n, dim, 41);
  auto idx = Build(rows, dim, DistanceType::kL2, 64);  // grows 64 -> 2048 on the way
  const auto queries = RandomRows(10, dim, 42);
  for (int qi = 0; qi < 10; ++qi) {
    const float* q = &queries[static_cast<size_t>(qi * dim)];
    // 1% of the rows: far fewer than the breadth, so the search must over-fetch.
    auto r = idx->Search(q, 10, 10, [](int64_t l) { return l % 100 == 7; }).value();
    ASSERT_EQ(r.size(), 10u);
    for (const auto& nb : r) EXPECT_EQ(nb.label % 100, 7);
    // Only 3 labels pass: exactly those come back.
    r = idx->Search(q, 10, 10, [](int64_t l) { return l == 5 || l == 1500 || l == 1999; }).value();
    std::set<int64_t> labels;
    for (const auto& nb : r) labels.insert(nb.label);
    EXPECT_EQ(labels, (std::set<int64_t>{5, 1500, 1999}));
    // Nothing passes: empty.
    EXPECT_TRUE(idx->Search(q, 10, 10, [](int64_t) { return false; }).value().empty());
  }
}

TEST(HnswIndexTest, GrowsFromCapacityOne) {
  const int dim = 8;
  const auto rows = RandomRows(300, dim, 51);
  HnswParams p;
  auto idx = HnswIndex::Make(dim, p, 1).value();
  const int64_t before = idx->memory_bytes();
  for (int64_t i = 0; i < 300; ++i)
    ASSERT_TRUE(idx->Add(i * 2, &rows[static_cast<size_t>(i * dim)]).ok());
  EXPECT_EQ(idx->size(), 300);
  EXPECT_GT(idx->memory_bytes(), before + 300 * dim * 4);
  for (int64_t i = 0; i < 300; i += 37) {
    auto r = idx->Search(&rows[static_cast<size_t>(i * dim)], 1, 300).value();
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].label, i * 2);
  }
}

TEST(HnswIndexTest, SerializeRoundTripAndCorruption) {
  const int dim = 12;
  const int64_t n = 500;
  const auto rows = RandomRows(n, dim, 61);
  for (DistanceType type : {DistanceType::kL2, DistanceType::kCosine, DistanceType::kDot}) {
    SCOPED_TRACE(DistanceTypeName(type));
    auto idx = Build(rows, dim, type);
    auto bytes = idx->Serialize();
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    auto back = HnswIndex::Deserialize(*bytes);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    auto& b = **back;
    EXPECT_EQ(b.dim(), dim);
    EXPECT_EQ(b.size(), n);
    EXPECT_EQ(b.params().m, 16);
    EXPECT_EQ(b.params().ef_construction, 100);
    EXPECT_EQ(b.params().distance, type);
    const auto queries = RandomRows(25, dim, 62);
    for (int qi = 0; qi < 25; ++qi) {
      const float* q = &queries[static_cast<size_t>(qi * dim)];
      for (int64_t ef : {10, 64}) {
        auto x = idx->Search(q, 10, ef).value();
        auto y = b.Search(q, 10, ef).value();
        ASSERT_EQ(x.size(), y.size());
        for (size_t j = 0; j < x.size(); ++j) {
          EXPECT_EQ(x[j].label, y[j].label);
          EXPECT_EQ(x[j].distance, y[j].distance);
        }
      }
    }
    // The loaded index keeps growing and answers for new rows.
    const auto extra = RandomRows(1200, dim, 63);
    for (int64_t i = 0; i < 1200; ++i) {
      ASSERT_TRUE(b.Add(n + i, &extra[static_cast<size_t>(i * dim)]).ok());
    }
    EXPECT_EQ(b.size(), n + 1200);
    auto r = b.Search(&extra[1100 * dim], 1, 64).value();
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].label, n + 1100);

    // Any flipped byte (header or graph) is Corruption; so is a truncation.
    const std::string good = *bytes;
    for (size_t pos : {size_t{0}, size_t{9}, size_t{13}, size_t{20}, size_t{40}, size_t{52},
                       size_t{60}, good.size() / 2, good.size() - 1}) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ 0x20);
      auto c = HnswIndex::Deserialize(bad);
      ASSERT_FALSE(c.ok()) << "byte " << pos;
      EXPECT_EQ(c.status().code(), StatusCode::kCorruption) << "byte " << pos;
    }
    EXPECT_EQ(HnswIndex::Deserialize(good.substr(0, good.size() - 3)).status().code(),
              StatusCode::kCorruption);
    EXPECT_EQ(HnswIndex::Deserialize(good.substr(0, 20)).status().code(), StatusCode::kCorruption);
  }
  // An empty index round-trips too.
  auto empty = HnswIndex::Make(5, HnswParams{}).value();
  auto eb = empty->Serialize().value();
  auto e = HnswIndex::Deserialize(eb);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ((*e)->size(), 0);
  const float v[5] = {1, 2, 3, 4, 5};
  ASSERT_TRUE((*e)->Add(3, v).ok());
  EXPECT_EQ((*e)->Search(v, 1, 10).value().at(0).label, 3);
}

TEST(HnswIndexTest, ConcurrentAddAndSearch) {
  const int dim = 32;
  const int64_t n = 4000;
  const auto rows = RandomRows(n, dim, 71);
  auto idx = HnswIndex::Make(dim, HnswParams{}, 16).value();  // grows while searched
  for (int64_t i = 0; i < 100; ++i)
    ASSERT_TRUE(idx->Add(i, &rows[static_cast<size_t>(i * dim)]).ok());
  std::atomic<bool> done{false};
  std::atomic<int64_t> bad{0}, searches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int64_t i = 100 + t; i < n; i += 2) {
        if (!idx->Add(i, &rows[static_cast<size_t>(i * dim)]).ok()) bad.fetch_add(1);
      }
    });
  }
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::uniform_int_distribution<int64_t> pick(0, 99);
      while (!done.load()) {
        const int64_t target = pick(rng);  // always indexed before the threads start
        const float* q = &rows[static_cast<size_t>(target * dim)];
        auto r = idx->Search(q, 10, 32);
        searches.fetch_add(1);
        if (!r.ok() || r->size() != 10) {
          bad.fetch_add(1);
          continue;
        }
        float prev = -1;
        for (const auto& nb : *r) {
          const float ref = L2Squared(q, &rows[static_cast<size_t>(nb.label * dim)], dim);
          if (nb.label < 0 || nb.label >= n || std::fabs(ref - nb.distance) > 1e-3f ||
              nb.distance < prev) {
            bad.fetch_add(1);
          }
          prev = nb.distance;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  done = true;
  for (auto& th : readers) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(searches.load(), 0);
  EXPECT_EQ(idx->size(), n);
  // After the storm every row is findable as its own nearest neighbour.
  int64_t self = 0;
  for (int64_t i = 0; i < n; i += 40) {
    auto r = idx->Search(&rows[static_cast<size_t>(i * dim)], 1, 64).value();
    self += (!r.empty() && r[0].label == i);
  }
  EXPECT_GE(self, 98);  // of 100
}

// Recall@10 on Fashion-MNIST: first 20,000 training vectors, 500 t10k queries, l2, exact
// ground truth from ExactSearcher, default ef. The index is built once for the suite.
class FashionMnistHnswTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fm::FashionMnistAvailable()) return;
    base_ = new fm::IdxImages();
    queries_ = new fm::IdxImages();
    std::string err;
    ASSERT_TRUE(fm::ReadIdxImages(fm::FashionMnistTrainPath(), 20000, base_, &err)) << err;
    ASSERT_TRUE(fm::ReadIdxImages(fm::FashionMnistTestPath(), 500, queries_, &err)) << err;
    ASSERT_EQ(base_->count, 20000);
    ASSERT_EQ(queries_->count, 500);
    ASSERT_EQ(base_->dim, 784);
    index_ = HnswIndex::Make(784, HnswParams{}, 20000).value().release();
    for (int64_t i = 0; i < base_->count; ++i) ASSERT_TRUE(index_->Add(i, base_->row(i)).ok());
  }
  static void TearDownTestSuite() {
    delete index_;
    delete base_;
    delete queries_;
    index_ = nullptr;
    base_ = queries_ = nullptr;
  }
  void SetUp() override {
    if (index_ == nullptr)
      GTEST_SKIP() << "Fashion-MNIST not found under " << fm::FashionMnistDir();
  }
  static HnswIndex* index_;
  static fm::IdxImages* base_;
  static fm::IdxImages* queries_;
};
HnswIndex* FashionMnistHnswTest::index_ = nullptr;
fm::IdxImages* FashionMnistHnswTest::base_ = nullptr;
fm::IdxImages* FashionMnistHnswTest::queries_ = nullptr;

TEST_F(FashionMnistHnswTest, RecallAtDefaultEf) {
  ASSERT_EQ(index_->size(), 20000);
  const int64_t k = 10;
  int64_t hits = 0, total = 0;
  for (int64_t q = 0; q < queries_->count; ++q) {
    const float* query = queries_->row(q);
    auto ex = ExactSearcher::Make(query, 784, DistanceType::kL2).value();
    TopK top(k);
    for (int64_t i = 0; i < base_->count; ++i) top.Push(i, ex.Distance(base_->row(i)));
    std::set<int64_t> truth;
    for (const auto& nb : top.Sorted()) truth.insert(nb.label);
    auto got = index_->Search(query, k, DefaultEf(k)).value();
    ASSERT_EQ(got.size(), static_cast<size_t>(k));
    for (const auto& nb : got) hits += truth.count(nb.label);
    total += k;
  }
  const double recall = static_cast<double>(hits) / static_cast<double>(total);
  RecordProperty("recall_at_10", std::to_string(recall));
  EXPECT_GE(recall, 0.95);
}

}  // namespace
}  // namespace strata::index
