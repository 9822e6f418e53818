// Helpers for the ShardWriter tests: a shard over a FaultInjectingStore wrapping a local
// store in a temporary directory, small option sets, and readers of live ids.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "io/fault_injecting_store.h"
#include "io/local_object_store.h"
#include "shard/shard_writer.h"

namespace strata::shard::testing {

inline constexpr char kTable[] = "default/t";
inline constexpr char kShardId[] = "s1";

/// A local store in a temp dir, wrapped by a fault injector.
struct ShardFixture {
  strata::testing::TempDir dir;
  std::shared_ptr<io::LocalObjectStore> local = *io::LocalObjectStore::Open(dir.path());
  std::shared_ptr<io::FaultInjectingStore> faults =
      std::make_shared<io::FaultInjectingStore>(local);

  Result<std::unique_ptr<ShardWriter>> Open(ShardWriterOptions o = {}) {
    return ShardWriter::Open(faults, kTable, kShardId, strata::testing::TestSchema(), o);
  }
  std::unique_ptr<ShardWriter> OpenOrDie(ShardWriterOptions o = {}) {
    auto w = Open(std::move(o));
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? std::move(w).value() : nullptr;
  }
  std::string shard_prefix() const { return ShardPrefix(kTable, kShardId); }
};

/// Live ids of the writer's snapshot, sorted.
inline std::vector<int64_t> SortedIds(const ShardWriter& w) {
  auto snap = w.Snapshot();
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  if (!snap.ok()) return {};
  auto ids = strata::testing::Ids(strata::testing::Live(**snap));
  std::sort(ids.begin(), ids.end());
  return ids;
}

inline Deadline In(std::chrono::milliseconds ms) { return Clock::now() + ms; }

}  // namespace strata::shard::testing
