#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../io/storage_test_util.h"
#include "format/bit_reversed.h"
#include "io/local_object_store.h"
#include "wal/wal_entry.h"
#include "wal/wal_reader.h"
#include "wal/wal_writer.h"

namespace strata::wal {
namespace {

using strata::testing::Ids;
using strata::testing::MakeBatch;
using strata::testing::Range;
using strata::testing::TempDir;
using strata::testing::TestSchema;

constexpr char kShard[] = "db/t/_mem_wal/s1";

struct Replayed {
  Result<WalReplaySummary> summary = Status::Internal("unset");
  std::vector<WalEntry> entries;
};

Replayed ReplayAll(io::ObjectStore& store, uint64_t from = 1) {
  Replayed r;
  r.summary = WalReader::Replay(store, kShard, from, [&](WalEntry&& e) {
    r.entries.push_back(std::move(e));
    return Status::OK();
  });
  return r;
}

std::vector<int64_t> AllIds(const std::vector<WalEntry>& entries) {
  std::vector<int64_t> out;
  for (const auto& e : entries) {
    auto ids = Ids(e.batches);
    out.insert(out.end(), ids.begin(), ids.end());
  }
  return out;
}

TEST(Wal, EntryNamesAndMetadata) {
  EXPECT_EQ(WalEntryKey(kShard, 5),
            std::string(kShard) + "/wal/1010" + std::string(60, '0') + ".arrow");
  EXPECT_EQ(ParseWalEntryName("1010" + std::string(60, '0') + ".arrow"), 5u);
  EXPECT_FALSE(ParseWalEntryName("1010.arrow").has_value());
  EXPECT_FALSE(ParseWalEntryName(std::string(64, '0') + ".tmp").has_value());

  auto bytes =
      EncodeWalEntry(*TestSchema(), {MakeBatch(0, 3)}, 7, 2, arrow::ipc::Compression::kNone);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto entry = DecodeWalEntry(9, *bytes);
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  EXPECT_EQ(entry->position, 9u);
  EXPECT_EQ(entry->writer_epoch, 7u);
  EXPECT_EQ(entry->generation, 2u);
  EXPECT_FALSE(entry->fence_sentinel);
  EXPECT_EQ(entry->num_rows, 3);
  EXPECT_TRUE(entry->schema->Equals(*TestSchema()));
  EXPECT_EQ(entry->schema->metadata().Get(kWriterEpochKey), nullptr);
  EXPECT_EQ(Ids(entry->batches), Range(0, 3));
}

TEST(Wal, WriteThenReplayAfterReopen) {
  TempDir dir;
  {
    auto store = *io::LocalObjectStore::Open(dir.path());
    WalWriter w(store, kShard, TestSchema(), 1, {.writer_epoch = 3, .generation = 1});
    std::vector<uint64_t> seen;
    for (int i = 0; i < 5; ++i) {
      auto pos = w.Append({MakeBatch(i * 10, 10)}, [&](uint64_t p) { seen.push_back(p); });
      ASSERT_TRUE(pos.ok()) << pos.status().ToString();
      EXPECT_EQ(*pos, static_cast<uint64_t>(i + 1));
    }
    EXPECT_EQ(seen, (std::vector<uint64_t>{1, 2, 3, 4, 5}));
    EXPECT_EQ(w.next_position(), 6u);
    EXPECT_EQ(w.stats().entries_written, 5u);
  }
  auto store = *io::LocalObjectStore::Open(dir.path());
  auto r = ReplayAll(*store);
  ASSERT_TRUE(r.summary.ok()) << r.summary.status().ToString();
  EXPECT_EQ(r.summary->last_position, 5u);
  EXPECT_EQ(r.summary->rows, 50);
  EXPECT_FALSE(r.summary->torn_position.has_value());
  EXPECT_EQ(AllIds(r.entries), Range(0, 50));
  EXPECT_EQ(r.entries[0].writer_epoch, 3u);
  // Replay from a later position.
  auto tail = ReplayAll(*store, 4);
  ASSERT_TRUE(tail.summary.ok());
  EXPECT_EQ(AllIds(tail.entries), Range(30, 20));
}

TEST(Wal, TakenPositionFencesTheWriter) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  WalWriter a(store, kShard, TestSchema(), 1);
  ASSERT_TRUE(a.Append({MakeBatch(0, 1)}).ok());
  WalWriter b(store, kShard, TestSchema(), 2);  // another writer took over at position 2
  ASSERT_TRUE(b.Append({MakeBatch(100, 1)}).ok());
  bool called = false;
  auto lost = a.Append({MakeBatch(1, 1)}, [&](uint64_t) { called = true; });
  EXPECT_EQ(lost.status().code(), StatusCode::kFenced) << lost.status().ToString();
  EXPECT_FALSE(called);
  EXPECT_EQ(a.Append({MakeBatch(2, 1)}).status().code(), StatusCode::kFenced);
  auto r = ReplayAll(*store);
  EXPECT_EQ(AllIds(r.entries), (std::vector<int64_t>{0, 100}));
}

class WalDamage : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = *io::LocalObjectStore::Open(dir_.path());
    WalWriter w(store_, kShard, TestSchema(), 1);
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(w.Append({MakeBatch(i * 5, 5)}).ok());
  }
  std::string PathOf(uint64_t position) { return store_->PathOf(WalEntryKey(kShard, position)); }

  TempDir dir_;
  std::shared_ptr<io::LocalObjectStore> store_;
};

TEST_F(WalDamage, TruncatedLastEntryEndsReplayBeforeIt) {
  auto size = std::filesystem::file_size(PathOf(4));
  std::filesystem::resize_file(PathOf(4), size / 2);
  auto r = ReplayAll(*store_);
  ASSERT_TRUE(r.summary.ok()) << r.summary.status().ToString();
  EXPECT_EQ(r.summary->last_position, 3u);
  EXPECT_EQ(r.summary->torn_position, std::optional<uint64_t>(4));
  EXPECT_EQ(AllIds(r.entries), Range(0, 15));
}

TEST_F(WalDamage, TruncatedAtMessageBoundaryIsTorn) {
  // Cut exactly the 8-byte end-of-stream marker: every message is intact, EOS is missing.
  auto size = std::filesystem::file_size(PathOf(4));
  std::filesystem::resize_file(PathOf(4), size - 8);
  auto r = ReplayAll(*store_);
  ASSERT_TRUE(r.summary.ok());
  EXPECT_EQ(r.summary->torn_position, std::optional<uint64_t>(4));
  EXPECT_EQ(AllIds(r.entries), Range(0, 15));
}

TEST_F(WalDamage, GarbageLastEntryEndsReplay) {
  std::ofstream(PathOf(4), std::ios::trunc) << "not an arrow stream at all";
  auto r = ReplayAll(*store_);
  ASSERT_TRUE(r.summary.ok());
  EXPECT_EQ(r.summary->last_position, 3u);
  EXPECT_EQ(AllIds(r.entries), Range(0, 15));
}

TEST_F(WalDamage, CorruptMiddleEntryRefusesToOpen) {
  auto size = std::filesystem::file_size(PathOf(2));
  std::filesystem::resize_file(PathOf(2), size / 3);
  auto r = ReplayAll(*store_);
  ASSERT_FALSE(r.summary.ok());
  EXPECT_EQ(r.summary.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.summary.status().message().find("entry 2"), std::string::npos)
      << r.summary.status().message();
}

TEST_F(WalDamage, ReplayStopsAtFirstMissingPosition) {
  std::filesystem::remove(PathOf(3));
  auto r = ReplayAll(*store_);
  ASSERT_TRUE(r.summary.ok());
  EXPECT_EQ(r.summary->last_position, 2u);
  EXPECT_EQ(r.summary->max_position_present, 4u);  // the caller sees the gap
  EXPECT_EQ(AllIds(r.entries), Range(0, 10));
}

}  // namespace
}  // namespace strata::wal
