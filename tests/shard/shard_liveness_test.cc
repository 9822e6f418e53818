// Liveness across tiers without a re-merge (shard/liveness.h): a flush writes supersedes.bin,
// a restart restores liveness from it (or, for an SSTable written before it existed, by probing
// keys once), an earlier view never sees a later write, and index stats count live rows.
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "format/supersedes.h"
#include "shard_test_util.h"
#include "sstable/sstable_writer.h"

namespace strata::shard {
namespace {

using namespace std::chrono_literals;
using testing::In;
using testing::KvMap;
using testing::KvRows;
using testing::OpenKv;
using testing::ShardFixture;

using Kv = std::map<int64_t, std::optional<int64_t>>;

void Flush(ShardWriter& w) {
  auto sealed = w.force_seal_active();
  ASSERT_TRUE(sealed.ok() && sealed->has_value());
  ASSERT_TRUE(w.wait_for_generation((*sealed)->generation, In(10000ms)).ok());
}

/// Generation 1: keys 0..9 = 0; generation 2: keys 0..4 = 1 and a tombstone for key 9;
/// generation 3 (active, WAL only): key 1 = 2, key 9 = 9.
void Write(ShardWriter& w) {
  ASSERT_TRUE(w.Put({KvRows({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0})}).ok());
  Flush(w);
  ASSERT_TRUE(w.Put({KvRows({0, 1, 2, 3, 4}, {1, 1, 1, 1, 1})}).ok());
  ASSERT_TRUE(w.Delete({KvRows({9}, {std::nullopt})}).ok());
  Flush(w);
  ASSERT_TRUE(w.Put({KvRows({1, 9}, {2, 9})}).ok());
}

const Kv kExpected = {{0, 1}, {1, 2}, {2, 1}, {3, 1}, {4, 1},
                      {5, 0}, {6, 0}, {7, 0}, {8, 0}, {9, 9}};

/// Store key of supersedes.bin of the SSTable of `generation`.
std::string SupersedesKey(const ShardWriter& w, uint64_t generation) {
  for (const auto& t : w.Describe().sstables) {
    if (t.generation == generation) return t.path + "/" + sstable::kSupersedesFile;
  }
  ADD_FAILURE() << "no SSTable of generation " << generation;
  return "";
}

/// Write() into a fresh writer, checks it, closes it; the key of generation 2's supersedes.bin.
std::string WriteAndClose(ShardFixture& f) {
  auto w = OpenKv(f);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  if (!w.ok()) return "";
  Write(**w);
  EXPECT_EQ(KvMap(**w), kExpected);
  EXPECT_EQ((*(*w)->Snapshot())->num_rows, 10);
  return SupersedesKey(**w, 2);
}

TEST(ShardLiveness, FlushWritesSupersedesAndRestartUsesIt) {
  ShardFixture f;
  const std::string gen2 = WriteAndClose(f);
  // Generation 2 superseded rows 0..4 and 9 of generation 1.
  auto bytes = f.local->Get(gen2);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto sup = format::Supersedes::Deserialize(*bytes);
  ASSERT_TRUE(sup.ok());
  ASSERT_EQ(sup->generations.size(), 1u);
  EXPECT_EQ(sup->generations[0].first, 1u);
  EXPECT_EQ(sup->generations[0].second.ToVector(), (std::vector<uint32_t>{0, 1, 2, 3, 4, 9}));

  auto w = OpenKv(f);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(KvMap(**w), kExpected);
  auto snap = *(*w)->Snapshot();
  EXPECT_EQ(snap->num_rows, 10);
  ASSERT_EQ(snap->sources.size(), 3u);
  EXPECT_EQ(snap->sources[0].live_rows, 4);  // keys 5..8
  EXPECT_EQ(snap->sources[1].live_rows, 4);  // keys 0, 2, 3, 4 (1 replaced, 9 a tombstone)
  EXPECT_EQ(snap->sources[2].live_rows, 2);
}

TEST(ShardLiveness, SSTableWithoutSupersedesIsProbedAtOpen) {
  ShardFixture f;
  const std::string gen2 = WriteAndClose(f);
  // As written before supersedes.bin existed.
  ASSERT_TRUE(f.local->Get(gen2).ok());
  ASSERT_TRUE(f.local->Remove(gen2).ok());
  auto w = OpenKv(f);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(KvMap(**w), kExpected);
  EXPECT_EQ((*(*w)->Snapshot())->num_rows, 10);
}

TEST(ShardLiveness, CorruptSupersedesFailsTheOpen) {
  ShardFixture f;
  const std::string gen2 = WriteAndClose(f);
  const std::string key = gen2;
  auto got = f.local->Get(key);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  std::string bytes = *got;
  bytes[bytes.size() / 2] ^= 1;
  ASSERT_TRUE(f.local->Remove(key).ok());
  ASSERT_TRUE(f.local->Put(key, bytes).ok());
  auto w = OpenKv(f);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kCorruption);
  EXPECT_NE(w.status().message().find("supersedes.bin"), std::string::npos)
      << w.status().ToString();
}

TEST(ShardLiveness, FailedSupersedesWriteIsRetriedAndNothingIsLost) {
  ShardFixture f;
  // The first two writes of a supersedes.bin fail (one after writing: unknown outcome).
  io::PutFault fail;
  fail.key_contains = "supersedes.bin";
  fail.times = 1;
  const int r1 = f.faults->AddFault(fail);
  io::PutFault after;
  after.key_contains = "supersedes.bin";
  after.skip = 1;
  after.times = 1;
  after.after_write = true;
  const int r2 = f.faults->AddFault(after);
  {
    auto w = OpenKv(f);
    ASSERT_TRUE(w.ok());
    Write(**w);
    EXPECT_EQ(KvMap(**w), kExpected);
    EXPECT_GE((*w)->stats().flush_failures, 2u);
  }
  f.faults->RemoveFault(r1);
  f.faults->RemoveFault(r2);
  auto w = OpenKv(f);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(KvMap(**w), kExpected);
  EXPECT_EQ((*(*w)->Snapshot())->num_rows, 10);
}

TEST(ShardLiveness, AnEarlierViewNeverSeesALaterWrite) {
  ShardFixture f;
  auto w = OpenKv(f);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Put({KvRows({1, 2, 3}, {0, 0, 0})}).ok());
  Flush(**w);
  auto before = *(*w)->Snapshot();
  ASSERT_TRUE((*w)->Put({KvRows({1}, {5})}).ok());
  ASSERT_TRUE((*w)->Delete({KvRows({2}, {std::nullopt})}).ok());
  auto middle = *(*w)->Snapshot();
  Flush(**w);
  ASSERT_TRUE((*w)->Put({KvRows({2, 3}, {7, 7})}).ok());
  auto after = *(*w)->Snapshot();
  EXPECT_EQ(before->num_rows, 3);
  EXPECT_EQ(before->sources[0].live_rows, 3);
  EXPECT_EQ(middle->num_rows, 2);
  EXPECT_EQ(after->num_rows, 3);
  // The first view still reads the three original rows after later upserts and a delete.
  int64_t rows = 0;
  for (const auto& b : strata::testing::Live(*before)) {
    arrow::Array v = b->column(1);
    for (int64_t i = 0; i < b->num_rows(); ++i, ++rows) EXPECT_EQ(v.Value<int64_t>(i), 0);
  }
  EXPECT_EQ(rows, 3);
  EXPECT_EQ(KvMap(**w), (Kv{{1, 5}, {2, 7}, {3, 7}}));
}

TEST(ShardLiveness, IndexStatsCountLiveRows) {
  ShardFixture f;
  ShardWriterOptions o;
  index::IndexSpec spec;
  spec.kind = index::IndexKind::kBTree;
  spec.column = "v";
  spec.name = "v_idx";
  spec.requested_type = "BTREE";
  o.indexes = {spec};
  auto w = OpenKv(f, o);
  ASSERT_TRUE(w.ok());
  // 5 keys, 14 physical versions over an SSTable and the active MemTable.
  ASSERT_TRUE((*w)->Put({KvRows({1, 2, 3, 4, 5}, {0, 0, 0, 0, 0})}).ok());
  ASSERT_TRUE((*w)->Put({KvRows({1, 2, 3}, {1, 1, 1})}).ok());
  Flush(**w);
  ASSERT_TRUE((*w)->Put({KvRows({1, 2, 3, 4, 5, 1}, {2, 2, 2, 2, 2, 3})}).ok());
  const auto progress = (*w)->IndexProgressAll();
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_EQ(progress[0].num_indexed_rows, 5);
  EXPECT_EQ(progress[0].num_unindexed_rows, 0);
}

}  // namespace
}  // namespace strata::shard
