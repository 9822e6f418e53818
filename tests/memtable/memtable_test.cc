#include "memtable/memtable.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "../io/storage_test_util.h"

namespace strata::memtable {
namespace {

using strata::testing::Ids;
using strata::testing::MakeBatch;
using strata::testing::Range;

TEST(MemTable, AppendPositionsCountersLocate) {
  MemTable m(strata::testing::TestSchema());
  EXPECT_EQ(m.num_rows(), 0);
  EXPECT_EQ(m.Append({MakeBatch(0, 3), MakeBatch(3, 0), MakeBatch(3, 2)}, 1), 0);
  EXPECT_EQ(m.Append({MakeBatch(5, 4)}, 2), 5);
  EXPECT_EQ(m.num_rows(), 9);
  EXPECT_EQ(m.num_batches(), 3);  // the 0-row batch is not stored
  EXPECT_GT(m.num_bytes(), 9 * (8 + 16));
  EXPECT_EQ(m.Locate(0), std::make_pair(int64_t{0}, int64_t{0}));
  EXPECT_EQ(m.Locate(4), std::make_pair(int64_t{1}, int64_t{1}));
  EXPECT_EQ(m.Locate(8), std::make_pair(int64_t{2}, int64_t{3}));
  EXPECT_EQ(m.Locate(9), std::make_pair(int64_t{-1}, int64_t{-1}));
  auto snap = m.Snapshot();
  EXPECT_EQ(snap.num_rows, 9);
  EXPECT_EQ(snap.last_wal_position, 2u);
  EXPECT_EQ(Ids(snap.batches), Range(0, 9));
}

TEST(MemTable, AHeldInsertAndEverythingAfterItWaitForRelease) {
  MemTable m(strata::testing::TestSchema());
  auto a = m.Insert({MakeBatch(0, 2)});
  auto held = m.Insert({MakeBatch(2, 3)}, /*hold=*/true);
  auto c = m.Insert({MakeBatch(5, 1)});
  ASSERT_TRUE(a.ok() && held.ok() && c.ok());
  for (const auto& r : {*a, *held, *c}) m.IndexRows(r);
  m.MarkDurable(c->end, 9);  // durability of later rows does not release the held ones
  EXPECT_EQ(m.visible_rows(), 2);
  EXPECT_EQ(Ids(m.Snapshot().batches), Range(0, 2));
  m.Release(held->begin);  // no held Insert ends there: nothing changes
  EXPECT_EQ(m.visible_rows(), 2);
  m.Release(held->end);
  EXPECT_EQ(m.visible_rows(), 6);
  EXPECT_EQ(Ids(m.Snapshot().batches), Range(0, 6));
  EXPECT_EQ(m.Snapshot().last_wal_position, 9u);
}

TEST(MemTable, SnapshotsStayConsistentDuringAppends) {
  MemTable m(strata::testing::TestSchema());
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 500; ++i) m.Append({MakeBatch(i * 2, 2)}, static_cast<uint64_t>(i + 1));
    done = true;
  });
  int checks = 0;
  while (!done || checks == 0) {
    auto snap = m.Snapshot();
    auto ids = Ids(snap.batches);
    ASSERT_EQ(static_cast<int64_t>(ids.size()), snap.num_rows);
    ASSERT_EQ(snap.last_wal_position * 2, static_cast<uint64_t>(snap.num_rows));
    for (size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(ids[i], static_cast<int64_t>(i));
    ++checks;
  }
  writer.join();
  EXPECT_EQ(m.num_rows(), 1000);
}

}  // namespace
}  // namespace strata::memtable
