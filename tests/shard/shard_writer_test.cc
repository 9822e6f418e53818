#include "shard/shard_writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "../io/storage_test_util.h"
#include "io/local_object_store.h"
#include "wal/wal_entry.h"

namespace strata::shard {
namespace {

using strata::testing::Ids;
using strata::testing::MakeBatch;
using strata::testing::Range;
using strata::testing::TempDir;
using strata::testing::TestSchema;

constexpr char kTable[] = "default/t";
constexpr char kShardId[] = "s1";

std::unique_ptr<ShardWriter> OpenOrDie(const std::shared_ptr<io::ObjectStore>& store) {
  auto w = ShardWriter::Open(store, kTable, kShardId, TestSchema());
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return w.ok() ? std::move(w).value() : nullptr;
}

std::string EntryPath(io::LocalObjectStore& store, uint64_t position) {
  return store.PathOf(wal::WalEntryKey(ShardPrefix(kTable, kShardId), position));
}

TEST(ShardWriter, PutIsVisibleAndSurvivesReopen) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  {
    auto w = OpenOrDie(store);
    auto p1 = w->Put({MakeBatch(0, 10)});
    ASSERT_TRUE(p1.ok()) << p1.status().ToString();
    EXPECT_EQ(p1->wal_position, 1u);
    EXPECT_EQ(p1->first_row_position, 0);
    auto p2 = w->Put({MakeBatch(10, 5), MakeBatch(15, 5)});
    ASSERT_TRUE(p2.ok());
    EXPECT_EQ(p2->wal_position, 2u);
    EXPECT_EQ(p2->first_row_position, 10);
    EXPECT_EQ(p2->num_rows, 10);
    EXPECT_EQ(Ids(w->Snapshot().batches), Range(0, 20));
    // Zero rows: no entry.
    auto p3 = w->Put({MakeBatch(99, 0)});
    ASSERT_TRUE(p3.ok());
    EXPECT_EQ(p3->wal_position, 2u);
    EXPECT_EQ(w->wal_stats().entries_written, 2u);
  }
  auto w = OpenOrDie(store);
  EXPECT_EQ(w->replay_summary().entries, 2u);
  EXPECT_EQ(w->last_wal_position(), 2u);
  EXPECT_EQ(Ids(w->Snapshot().batches), Range(0, 20));
  auto p = w->Put({MakeBatch(20, 1)});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->wal_position, 3u);
}

TEST(ShardWriter, InvalidBatchesChangeNothing) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  auto w = OpenOrDie(store);
  ASSERT_TRUE(w->Put({MakeBatch(0, 3)}).ok());

  auto vec3 = arrow::MakeVectorArray({1, 2, 3}, 3);
  auto wrong_dim = std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
          arrow::field("id", arrow::int64(), false), arrow::field("vector", vec3->type)}),
      1, std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array({50}), vec3});
  auto wrong_type = std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(
          std::vector<arrow::FieldPtr>{arrow::field("id", arrow::utf8(), false)}),
      1, std::vector<arrow::ArrayDataPtr>{arrow::MakeUtf8Array({"x"})});
  auto with_null = std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(
          std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64(), true)}),
      1, std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array({std::nullopt})});
  auto unknown = std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
          arrow::field("id", arrow::int64(), false), arrow::field("zzz", arrow::int64())}),
      1, std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array({51}), arrow::MakeInt64Array({1})});
  // A good batch first: the whole put must still be rejected.
  for (const auto& bad : {wrong_dim, wrong_type, with_null, unknown}) {
    auto r = w->Put({MakeBatch(100, 2), bad});
    EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
  }
  EXPECT_EQ(Ids(w->Snapshot().batches), Range(0, 3));
  EXPECT_EQ(w->wal_stats().entries_written, 1u);
  auto files = *store->List(wal::WalDir(ShardPrefix(kTable, kShardId)));
  EXPECT_EQ(files.size(), 1u);
  w.reset();
  EXPECT_EQ(Ids(OpenOrDie(store)->Snapshot().batches), Range(0, 3));
}

TEST(ShardWriter, ConcurrentPutsFromFourThreadsAllPresentAfterReopen) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  constexpr int kThreads = 4, kPuts = 25, kRows = 3;
  {
    auto w = OpenOrDie(store);
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPuts; ++i) {
          int64_t first = (t * kPuts + i) * kRows;
          if (!w->Put({MakeBatch(first, kRows)}).ok()) ++failures;
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(w->Snapshot().num_rows, kThreads * kPuts * kRows);
  }
  auto w = OpenOrDie(store);
  auto ids = Ids(w->Snapshot().batches);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, Range(0, kThreads * kPuts * kRows));
  EXPECT_EQ(w->last_wal_position(), static_cast<uint64_t>(kThreads * kPuts));
}

TEST(ShardWriter, TornLastEntryIsQuarantinedAndPositionReused) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  {
    auto w = OpenOrDie(store);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(w->Put({MakeBatch(i * 4, 4)}).ok());
  }
  auto path = EntryPath(*store, 3);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 20);
  {
    auto w = OpenOrDie(store);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(Ids(w->Snapshot().batches), Range(0, 8));
    EXPECT_EQ(w->replay_summary().torn_position, std::optional<uint64_t>(3));
    auto p = w->Put({MakeBatch(100, 1)});
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->wal_position, 3u);
  }
  auto quarantined = *store->List(ShardPrefix(kTable, kShardId) + "/wal_quarantine/");
  EXPECT_EQ(quarantined.size(), 1u);
  auto ids = Ids(OpenOrDie(store)->Snapshot().batches);
  auto want = Range(0, 8);
  want.push_back(100);
  EXPECT_EQ(ids, want);
}

TEST(ShardWriter, CorruptMiddleEntryOrGapFailsOpen) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  {
    auto w = OpenOrDie(store);
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(w->Put({MakeBatch(i, 1)}).ok());
  }
  auto path = EntryPath(*store, 2);
  auto bytes = *store->Get(wal::WalEntryKey(ShardPrefix(kTable, kShardId), 2));
  std::filesystem::resize_file(path, 40);
  auto r = ShardWriter::Open(store, kTable, kShardId, TestSchema());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << r.status().ToString();
  // A missing middle entry (gap) also refuses to open.
  std::filesystem::remove(path);
  auto gap = ShardWriter::Open(store, kTable, kShardId, TestSchema());
  EXPECT_EQ(gap.status().code(), StatusCode::kCorruption) << gap.status().ToString();
  EXPECT_NE(gap.status().message().find("gap"), std::string::npos);
  // Nothing was modified by the failed opens: restoring the entry makes the shard whole.
  ASSERT_TRUE(store->Put(wal::WalEntryKey(ShardPrefix(kTable, kShardId), 2), bytes).ok());
  EXPECT_EQ(Ids(OpenOrDie(store)->Snapshot().batches), Range(0, 4));
}

TEST(ShardWriter, SchemaMismatchOnReplayIsCorruption) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  ASSERT_TRUE(OpenOrDie(store)->Put({MakeBatch(0, 2)}).ok());
  auto other = std::make_shared<arrow::Schema>(
      std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int32(), false)});
  auto r = ShardWriter::Open(store, kTable, kShardId, other);
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace strata::shard
