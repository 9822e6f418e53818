// ShardWriter::close() with durable_write=false: every put that returned before close() is in
// the WAL afterwards (a reopened writer replays it). Before the fix, appends enqueued while the
// syncer thread was inside its last WAL Sync were dropped by ~WalWriter.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "shard/shard_writer.h"
#include "shard_test_util.h"

namespace {

using strata::testing::MakeBatch;
using strata::testing::Range;
using namespace strata::shard;
using namespace strata::shard::testing;

TEST(ShardWriterClose, NonDurablePutsAreDurableAfterClose) {
  constexpr int kThreads = 4, kPuts = 300;
  for (int rep = 0; rep < 5; ++rep) {
    ShardFixture f;
    ShardWriterOptions o;
    o.durable_write = false;
    std::atomic<int> acknowledged{0};
    {
      auto w = f.OpenOrDie(o);
      ASSERT_NE(w, nullptr);
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
          for (int i = 0; i < kPuts; ++i) {
            if (w->Put({MakeBatch(t * kPuts + i, 1)}).ok()) acknowledged.fetch_add(1);
          }
        });
      }
      for (auto& th : threads) th.join();
      // close() right after the last put returned: its WAL append may still be queued.
      w->close();
    }
    ASSERT_EQ(acknowledged.load(), kThreads * kPuts);
    EXPECT_EQ(SortedIds(*f.OpenOrDie()), Range(0, kThreads * kPuts)) << "rep " << rep;
  }
}

}  // namespace
