// index/vector/hnswlib_graph_io.h: the in-memory writer produces exactly the bytes hnswlib
// 0.6.2's saveIndex writes to a file (so checkpoints written before and after it load either
// way), the in-memory reader loads them into a graph that answers like the original, and
// structural damage (sizes, counts, entry point, trailing bytes) is Corruption, not a crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "index/vector/hnswlib_graph_io.h"
#include "index/vector/hnswlib_internal.h"

namespace strata::index {
namespace {

constexpr int kDim = 16;
constexpr size_t kRows = 800;

std::vector<float> RandomRows(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> rows(n * kDim);
  for (auto& x : rows) x = u(rng);
  return rows;
}

struct Graph {
  hnswlib::L2Space space{kDim};
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> h;
};

// A graph of kRows random rows labelled 1000 + i, M 8, ef_construction 40, room for `capacity`.
std::unique_ptr<Graph> Built(size_t capacity) {
  auto g = std::make_unique<Graph>();
  g->h = std::make_unique<hnswlib::HierarchicalNSW<float>>(&g->space, capacity, 8, 40);
  const auto rows = RandomRows(kRows, 7);
  for (size_t i = 0; i < kRows; ++i) g->h->addPoint(&rows[i * kDim], 1000 + i);
  return g;
}

// An empty graph with the same parameters, ready for LoadSavedGraph.
std::unique_ptr<Graph> Empty(size_t capacity) {
  auto g = std::make_unique<Graph>();
  g->h = std::make_unique<hnswlib::HierarchicalNSW<float>>(&g->space, capacity, 8, 40);
  return g;
}

std::string SavedByHnswlib(hnswlib::HierarchicalNSW<float>& h) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("strata-graph-io-test-" + std::to_string(::getpid()) + ".bin"))
                               .string();
  h.saveIndex(path);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  return bytes;
}

std::vector<size_t> Labels(hnswlib::HierarchicalNSW<float>& h, const float* q) {
  auto pq = h.searchKnn(q, 10);
  std::vector<size_t> out;
  while (!pq.empty()) {
    out.push_back(pq.top().second);
    pq.pop();
  }
  return out;
}

TEST(HnswlibGraphIo, WritesTheBytesSaveIndexWrites) {
  auto g = Built(1000);
  std::string mine;
  SaveGraph(*g->h, &mine);
  const std::string theirs = SavedByHnswlib(*g->h);
  ASSERT_GT(theirs.size(), kRows * g->h->size_data_per_element_);
  EXPECT_EQ(mine.size(), theirs.size());
  EXPECT_TRUE(mine == theirs);
}

TEST(HnswlibGraphIo, LoadedGraphAnswersLikeTheOriginalAndKeepsGrowing) {
  auto g = Built(1000);
  const std::string bytes = SavedByHnswlib(*g->h);
  auto back = Empty(2000);
  ASSERT_TRUE(LoadSavedGraph(bytes, *back->h).ok());
  EXPECT_EQ(back->h->cur_element_count, kRows);
  EXPECT_EQ(back->h->maxlevel_, g->h->maxlevel_);
  EXPECT_EQ(back->h->enterpoint_node_, g->h->enterpoint_node_);
  EXPECT_EQ(back->h->label_lookup_.size(), kRows);
  EXPECT_EQ(back->h->label_lookup_.at(1000 + 17), 17u);
  const auto queries = RandomRows(30, 8);
  for (size_t q = 0; q < 30; ++q) {
    EXPECT_EQ(Labels(*back->h, &queries[q * kDim]), Labels(*g->h, &queries[q * kDim]));
  }
  // Saved again, only max_elements_ (the capacity, the header's second field) differs.
  std::string again;
  SaveGraph(*back->h, &again);
  ASSERT_EQ(again.size(), bytes.size());
  EXPECT_EQ(again.substr(0, 8), bytes.substr(0, 8));
  EXPECT_NE(again.substr(8, 8), bytes.substr(8, 8));
  EXPECT_EQ(again.substr(16), bytes.substr(16));
  // It keeps accepting inserts, and finds them.
  const auto extra = RandomRows(300, 9);
  for (size_t i = 0; i < 300; ++i) back->h->addPoint(&extra[i * kDim], 5000 + i);
  EXPECT_EQ(back->h->cur_element_count, kRows + 300);
  auto top = back->h->searchKnn(&extra[250 * kDim], 1);
  EXPECT_EQ(top.top().second, 5000u + 250);
}

TEST(HnswlibGraphIo, EmptyGraphRoundTrips) {
  auto g = Empty(10);
  std::string bytes;
  SaveGraph(*g->h, &bytes);
  EXPECT_EQ(bytes, SavedByHnswlib(*g->h));
  auto back = Empty(10);
  ASSERT_TRUE(LoadSavedGraph(bytes, *back->h).ok());
  EXPECT_EQ(back->h->cur_element_count, 0u);
}

TEST(HnswlibGraphIo, StructuralDamageIsCorruption) {
  auto g = Built(1000);
  const std::string good = SavedByHnswlib(*g->h);
  const size_t header = 8 * 6 + 4 + 4 + 8 * 3 + 8 + 8;  // 13 fields
  const size_t level0 = kRows * g->h->size_data_per_element_;
  const auto put_u64 = [](std::string* s, size_t at, uint64_t v) { std::memcpy(&(*s)[at], &v, 8); };
  const auto put_u32 = [](std::string* s, size_t at, uint32_t v) { std::memcpy(&(*s)[at], &v, 4); };
  const auto corrupt = [&](const std::string& bytes, size_t capacity = 1000) {
    auto h = Empty(capacity);
    Status st = LoadSavedGraph(bytes, *h->h);
    return st.code();
  };
  // Every truncation point in the header, in the level-0 block and in the link lists.
  for (size_t len : {size_t{0}, size_t{7}, header - 1, header + level0 / 2, header + level0 + 2,
                     good.size() - 1}) {
    EXPECT_EQ(corrupt(good.substr(0, len)), StatusCode::kCorruption) << "length " << len;
  }
  std::string bad = good + "x";  // a trailing byte
  EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
  bad = good;
  put_u64(&bad, 16, kRows + 1);  // more elements than the bytes hold
  EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
  bad = good;
  put_u64(&bad, 16, 5000);  // more elements than the graph has room for
  EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
  bad = good;
  put_u64(&bad, 24, g->h->size_data_per_element_ + 4);  // another element size
  EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
  bad = good;
  put_u32(&bad, 52, static_cast<uint32_t>(kRows));  // entry point out of range
  EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
  bad = good;
  put_u64(&bad, 56, 9);  // another maxM
  EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
  bad = good;
  put_u32(&bad, header + level0, 3);  // the first link list's size is not a whole level
  EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
  bad = good;
  put_u32(&bad, header + level0, 1u << 30);  // longer than what is left
  EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
  bad = good;
  put_u32(&bad, header, 1);  // element 0 has one level-0 neighbour...
  put_u32(&bad, header + 4, static_cast<uint32_t>(kRows + 5));  // ...that does not exist
  EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
  bad = good;
  put_u32(&bad, header, 100);  // more level-0 neighbours than maxM0 (16)
  EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
  bad = good;  // element 1 takes element 0's label (the label ends each element's block)
  std::memcpy(&bad[header + 2 * g->h->size_data_per_element_ - 8],
              &bad[header + g->h->size_data_per_element_ - 8], 8);
  EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
  bad = good;
  put_u64(&bad, header + g->h->size_data_per_element_ - 8, ~uint64_t{0});  // a negative label
  EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
  bad = good;  // a level-1 link to an element that has only level 0 (found by the fuzzer)
  {
    size_t at = header + level0;
    bool done = false;
    size_t low = 0;  // an element with level 0 only
    while (g->h->element_levels_[low] != 0) ++low;
    for (size_t e = 0; e < kRows && !done; ++e) {
      uint32_t bytes = 0;
      std::memcpy(&bytes, &bad[at], 4);
      at += 4;
      uint32_t n = 0;
      if (bytes > 0) std::memcpy(&n, &bad[at], 4);
      if (bytes > 0 && n > 0) {
        put_u32(&bad, at + 4, static_cast<uint32_t>(low));
        done = true;
      }
      at += bytes;
    }
    ASSERT_TRUE(done);
  }
  EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
  // The intact bytes still load after all that.
  EXPECT_EQ(corrupt(good), StatusCode::kOk);
}

}  // namespace
}  // namespace strata::index
