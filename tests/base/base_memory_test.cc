// Issue 15, disk-resident base: a reopened table's base fragments are memory-mapped
// (io/mapped_file.h) and their uncompressed Arrow bodies used in place, so scanning every
// vector of a base grows the process's file-backed resident pages (page cache, reclaimable),
// not its heap. Measured from /proc/self/status (RssAnon = heap and other private memory,
// RssFile = mapped file pages) around opening the table and scanning all of its rows.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include "../io/storage_test_util.h"
#include "arrow/builder.h"
#include "format/table_manifest.h"
#include "io/local_object_store.h"
#include "io/mapped_file.h"
#include "table/local_table.h"
#include "table/primary_key.h"

namespace strata::base {
namespace {

constexpr int64_t kDim = 128;

int64_t StatusKb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::atoll(line.c_str() + std::strlen(field));
  }
  return -1;
}

arrow::SchemaPtr Schema() {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false),
      arrow::field("vector",
                   arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
  return *table::DeclarePrimaryKey(s, {"id"});
}

TEST(MappedFile, MapsAFileAndReportsMissingOnes) {
  strata::testing::TempDir dir;
  const std::string path = dir.path() + "/f.bin";
  std::ofstream(path, std::ios::binary) << "0123456789";
  auto m = io::MappedFile::Open(path);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ((*m)->size(), 10);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>((*m)->data()), 10), "0123456789");
  // Removing the file keeps the mapping readable (garbage collection of a mapped fragment).
  std::remove(path.c_str());
  EXPECT_EQ((*m)->data()[9], '9');
  auto missing = io::MappedFile::Open(dir.path() + "/nope.bin");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope.bin"), std::string::npos);
}

TEST(BaseMemory, ScanningAReopenedBaseDoesNotGrowTheHeap) {
  if (StatusKb("RssAnon:") < 0) GTEST_SKIP() << "no RssAnon in /proc/self/status";
  strata::testing::TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  const std::string prefix = "default/mem";
  shard::ShardWriterOptions o;
  o.max_memtable_rows = 1000000;
  o.max_memtable_bytes = 1ll << 32;
  o.max_memtable_age = std::chrono::hours(1);
  CompactionOptions co;
  co.background = false;
  constexpr int64_t kRows = 200000;  // 102 MB of vectors
  {
    auto t = table::LocalTable::Create(store, prefix, "mem", Schema(), {}, o, co);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1, 1);
    for (int64_t first = 0; first < kRows; first += 20000) {
      std::vector<std::optional<int64_t>> ids;
      std::vector<float> v(20000 * kDim);
      for (int64_t i = 0; i < 20000; ++i) ids.push_back(first + i);
      for (float& x : v) x = u(rng);
      ASSERT_TRUE(
          (*t)->Insert({std::make_shared<arrow::RecordBatch>(
                           Schema(), 20000,
                           std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids),
                                                            arrow::MakeVectorArray(v, kDim)})})
              .ok());
    }
    ASSERT_TRUE((*t)->Flush(shard::Clock::now() + std::chrono::minutes(1)).ok());
    auto c = (*t)->Compact(shard::Clock::now() + std::chrono::minutes(5));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ASSERT_EQ(c->rows_written, kRows);
  }
  const int64_t vector_kb = kRows * kDim * 4 / 1024;
  const int64_t anon0 = StatusKb("RssAnon:"), file0 = StatusKb("RssFile:");
  auto manifest = format::LoadLatestTableManifest(*store, prefix);
  ASSERT_TRUE(manifest.ok() && manifest->has_value());
  auto t = table::LocalTable::Open(store, prefix, "mem", **manifest, o, co);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // Touch every vector of every source.
  double sum = 0;
  int64_t rows = 0;
  const table::TableSnapshot snap = (*t)->Snapshot();
  for (const auto& src : snap.shard->sources) {
    for (size_t b = 0; b < src.batches.size(); ++b) {
      const arrow::Array list = src.batches[b]->column(1);
      const float* f = list.child(0).raw_values<float>() + list.offset() * kDim;
      for (int64_t i = 0; i < list.length() * kDim; ++i) sum += f[i];
      rows += list.length();
    }
  }
  ASSERT_EQ(rows, kRows);
  const int64_t anon = StatusKb("RssAnon:") - anon0, file = StatusKb("RssFile:") - file0;
  std::printf(
      "vectors %lld kB; after open + scan: heap +%lld kB, mapped file pages +%lld kB "
      "(sum %.1f)\n",
      static_cast<long long>(vector_kb), static_cast<long long>(anon), static_cast<long long>(file),
      sum);
  // The rows came through the mapping (file pages), the heap grew by the key index, bloom
  // filter and liveness only (a few MB for 200,000 rows), not by the 100 MB of vectors.
  EXPECT_GT(file, vector_kb / 2);
  EXPECT_LT(anon, vector_kb / 4);
}

}  // namespace
}  // namespace strata::base
