// Issue 4 concurrency test: one writer inserts batches of 1,000 x 128-d rows into a table with
// a maintained HNSW (small MemTables, so seals, flushes and SSTable indexes happen), while 4
// readers run vector searches; every returned id must exist (have been written) and distances
// must ascend. Runs STRATA_SOAK_SECONDS seconds (default 20); `make tsan` runs it under
// ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <thread>

#include "../io/storage_test_util.h"
#include "arrow/builder.h"
#include "io/local_object_store.h"
#include "query/vector_search.h"
#include "table/local_table.h"

namespace strata::query {
namespace {

constexpr int32_t kDim = 128;

arrow::SchemaPtr SoakSchema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false),
      arrow::field("vector",
                   arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
}

arrow::RecordBatchPtr SoakBatch(int64_t first, int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<std::optional<int64_t>> ids;
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) {
    ids.push_back(first + i);
    for (int d = 0; d < kDim; ++d) v.push_back(u(rng));
  }
  return std::make_shared<arrow::RecordBatch>(
      SoakSchema(), n,
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids),
                                       arrow::MakeVectorArray(v, kDim)});
}

int SoakSeconds() {
  const char* s = std::getenv("STRATA_SOAK_SECONDS");
  return s ? std::max(1, std::atoi(s)) : 20;
}

TEST(IndexSoak, OneWriterFourReadersEveryReturnedIdExists) {
  strata::testing::TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  shard::ShardWriterOptions o;
  o.max_memtable_rows = 5000;
  auto created = table::LocalTable::Create(store, "default/soak", "soak", SoakSchema(), {}, o);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto t = *created;
  index::IndexSpec spec;
  spec.name = "vector_idx";
  spec.column = "vector";
  spec.kind = index::IndexKind::kHnsw;
  spec.requested_type = "IVF_HNSW_SQ";
  ASSERT_TRUE(t->CreateIndex(spec).ok());

  std::atomic<int64_t> written{0};  // ids [0, written) are acknowledged
  std::atomic<bool> stop{false};
  std::atomic<int64_t> searches{0}, bad{0}, backpressure{0};
  std::thread writer([&] {
    std::mt19937 rng(7);
    while (!stop.load()) {
      const int64_t first = written.load();
      const arrow::RecordBatchPtr batch = SoakBatch(first, 1000, rng);
      auto v = t->Insert({batch});
      // Compaction behind the writer (L0 at its stop count) is 503 backpressure: a client
      // retries; nothing was written.
      while (v.status().code() == StatusCode::kBackpressure && !stop.load()) {
        ++backpressure;
        v = t->Insert({batch});
      }
      if (v.status().code() == StatusCode::kBackpressure) return;
      if (!v.ok()) {
        ADD_FAILURE() << v.status().ToString();
        return;
      }
      written.store(first + 1000);
    }
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937 rng(100 + r);
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      while (!stop.load()) {
        const int64_t before = written.load();
        VectorSearchOptions vs;
        vs.query.resize(kDim);
        for (auto& x : vs.query) x = u(rng);
        vs.k = 10;
        auto res = VectorSearch(t->Snapshot(), vs);
        const int64_t after = written.load();
        if (!res.ok()) {
          ++bad;
          ADD_FAILURE() << res.status().ToString();
          return;
        }
        int64_t rows = 0;
        float prev = -1;
        for (const auto& b : res->batches) {
          arrow::Array ids = b->column(0);
          arrow::Array dist = b->column(b->num_columns() - 1);
          for (int64_t i = 0; i < b->num_rows(); ++i, ++rows) {
            const int64_t id = ids.Value<int64_t>(i);
            // Rows acknowledged after the snapshot may appear, never ids nobody wrote.
            if (id < 0 || id >= after + 1000) ++bad;
            const float d = dist.Value<float>(i);
            if (d < prev) ++bad;
            prev = d;
          }
        }
        if (before >= 10 && rows != 10) ++bad;
        ++searches;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(SoakSeconds()));
  stop = true;
  writer.join();
  for (auto& r : readers) r.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(searches.load(), 0);
  EXPECT_GE(written.load(), 1000);
  // Everything written is there, and the index covers it.
  EXPECT_EQ(t->Snapshot().num_rows, written.load());
  for (const auto& st : t->ListIndexes()) {
    EXPECT_EQ(st.num_indexed_rows + st.num_unindexed_rows, written.load());
  }
  std::printf("soak: %lld rows written, %lld searches, %lld writes refused by backpressure\n",
              static_cast<long long>(written.load()), static_cast<long long>(searches.load()),
              static_cast<long long>(backpressure.load()));
}

}  // namespace
}  // namespace strata::query
