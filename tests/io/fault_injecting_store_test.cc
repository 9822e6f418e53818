#include "io/fault_injecting_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "io/local_object_store.h"
#include "storage_test_util.h"

namespace strata::io {
namespace {

using namespace std::chrono_literals;

class FaultInjectingStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto local = LocalObjectStore::Open(dir_.path());
    ASSERT_TRUE(local.ok());
    inner_ = *local;
    store_ = std::make_shared<FaultInjectingStore>(inner_);
  }
  bool Exists(const std::string& key) { return inner_->Head(key).ok(); }

  strata::testing::TempDir dir_;
  std::shared_ptr<LocalObjectStore> inner_;
  std::shared_ptr<FaultInjectingStore> store_;
};

TEST_F(FaultInjectingStoreTest, PassesThroughAndCounts) {
  ASSERT_TRUE(store_->Put("a/1", "x").ok());
  ASSERT_TRUE(store_->PutIfAbsent("a/2", "yy").ok());
  EXPECT_TRUE(store_->PutIfAbsent("a/2", "zz").IsAlreadyExists());
  auto got = store_->Get("a/2");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, "yy");
  auto s = store_->stats();
  EXPECT_EQ(s.puts, 3u);
  EXPECT_EQ(s.puts_failed, 1u);  // the AlreadyExists from the inner store
  EXPECT_EQ(s.puts_injected, 0u);
  EXPECT_EQ(store_->successful_put_keys(), (std::vector<std::string>{"a/1", "a/2"}));
  auto list = store_->List("a/");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 2u);
}

TEST_F(FaultInjectingStoreTest, FailsNthRemoveOnceCountedFromNow) {
  for (const char* k : {"r/1", "r/2", "r/3", "r/4"}) ASSERT_TRUE(store_->Put(k, "x").ok());
  ASSERT_TRUE(store_->Remove("r/1").ok());  // before arming: not counted towards n
  store_->FailNthRemove(2);
  ASSERT_TRUE(store_->Remove("r/2").ok());
  Status failed = store_->Remove("r/3");
  EXPECT_EQ(failed.code(), StatusCode::kIOError);
  EXPECT_EQ(failed.message(), "injected fault: nth remove");
  EXPECT_TRUE(Exists("r/3"));               // failed before removing
  ASSERT_TRUE(store_->Remove("r/3").ok());  // one-shot
  ASSERT_TRUE(store_->Remove("r/4").ok());
  EXPECT_FALSE(Exists("r/1"));
  EXPECT_FALSE(Exists("r/2"));
  EXPECT_FALSE(Exists("r/3"));
  EXPECT_FALSE(Exists("r/4"));
  auto s = store_->stats();
  EXPECT_EQ(s.removes, 5u);
  EXPECT_EQ(s.removes_injected, 1u);
  // ClearFaults disarms a pending remove fault.
  ASSERT_TRUE(store_->Put("r/5", "x").ok());
  store_->FailNthRemove(1);
  store_->ClearFaults();
  ASSERT_TRUE(store_->Remove("r/5").ok());
  EXPECT_FALSE(Exists("r/5"));
}

TEST_F(FaultInjectingStoreTest, FailsNthPutCountedFromNow) {
  ASSERT_TRUE(store_->Put("k/0", "x").ok());
  store_->FailNthPut(3);
  EXPECT_TRUE(store_->Put("k/1", "x").ok());
  EXPECT_TRUE(store_->Put("k/2", "x").ok());
  Status st = store_->Put("k/3", "x");
  EXPECT_EQ(st.code(), StatusCode::kIOError);
  EXPECT_FALSE(Exists("k/3"));  // failed before writing
  EXPECT_TRUE(store_->Put("k/4", "x").ok());
  EXPECT_EQ(store_->stats().puts_injected, 1u);
}

TEST_F(FaultInjectingStoreTest, PrefixRuleWithSkipAndTimes) {
  PutFault f;
  f.key_prefix = "s/gen/";
  f.skip = 1;
  f.times = 2;
  f.error = Status::IOError("disk on fire");
  store_->AddFault(f);
  EXPECT_TRUE(store_->Put("s/gen/a", "x").ok());  // skipped
  EXPECT_TRUE(store_->Put("s/other", "x").ok());  // does not match
  EXPECT_EQ(store_->Put("s/gen/b", "x").message(), "disk on fire");
  EXPECT_EQ(store_->PutIfAbsent("s/gen/c", "x").message(), "disk on fire");
  EXPECT_TRUE(store_->Put("s/gen/d", "x").ok());  // times exhausted
  EXPECT_TRUE(Exists("s/gen/a"));
  EXPECT_FALSE(Exists("s/gen/b"));
  EXPECT_FALSE(Exists("s/gen/c"));
  EXPECT_TRUE(Exists("s/gen/d"));
}

TEST_F(FaultInjectingStoreTest, ContainsRuleAndForeverFailure) {
  PutFault f;
  f.key_contains = "_gen_";
  store_->AddFault(f);
  for (int i = 0; i < 5; ++i) {
    EXPECT_FALSE(
        store_->Put("t/_mem_wal/s/abcd_gen_" + std::to_string(i) + "/data.arrow", "x").ok());
  }
  EXPECT_TRUE(store_->Put("t/_mem_wal/s/wal/1", "x").ok());
  store_->ClearFaults();
  EXPECT_TRUE(store_->Put("t/_mem_wal/s/abcd_gen_9/data.arrow", "x").ok());
}

TEST_F(FaultInjectingStoreTest, AfterWriteFailureLeavesTheObject) {
  PutFault f;
  f.key_prefix = "m/";
  f.times = 1;
  f.after_write = true;
  store_->AddFault(f);
  Status st = store_->PutIfAbsent("m/1", "data");
  EXPECT_EQ(st.code(), StatusCode::kIOError);
  EXPECT_TRUE(Exists("m/1"));  // unknown outcome: it was written
  EXPECT_TRUE(store_->PutIfAbsent("m/1", "data").IsAlreadyExists());
}

TEST_F(FaultInjectingStoreTest, SwitchFailsEveryPutUntilFlippedBack) {
  store_->SetFailAllPuts(true, Status::IOError("offline"));
  EXPECT_TRUE(store_->fail_all_puts());
  EXPECT_EQ(store_->Put("a", "x").message(), "offline");
  EXPECT_EQ(store_->PutIfAbsent("b", "x").message(), "offline");
  EXPECT_TRUE(store_->Get("a").status().IsNotFound());  // reads pass through
  store_->SetFailAllPuts(false);
  EXPECT_TRUE(store_->Put("a", "x").ok());
  EXPECT_EQ(store_->stats().puts_injected, 2u);
}

TEST_F(FaultInjectingStoreTest, DelaySlowsMatchingPutsOnly) {
  store_->DelayPutsContaining("slow", 60ms);
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(store_->Put("fast/1", "x").ok());
  auto fast = std::chrono::steady_clock::now() - t0;
  t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(store_->Put("slow/1", "x").ok());
  auto slow = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(slow, 60ms);
  EXPECT_LT(fast, 60ms);
  EXPECT_EQ(store_->stats().puts_delayed, 1u);
}

TEST_F(FaultInjectingStoreTest, HoldBlocksUntilReleasedFromAnotherThread) {
  PutFault f;
  f.key_prefix = "held/";
  f.hold = true;
  f.fail = false;
  int id = store_->AddFault(f);
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      EXPECT_TRUE(store_->Put("held/" + std::to_string(i), "x").ok());
      done.fetch_add(1);
    });
  }
  for (int i = 0; i < 200 && store_->held_puts() < 3; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(store_->held_puts(), 3);
  EXPECT_EQ(done.load(), 0);
  EXPECT_TRUE(store_->Put("free/1", "x").ok());  // other keys are not held
  EXPECT_FALSE(Exists("held/0"));
  store_->RemoveFault(id);
  for (auto& t : threads) t.join();
  EXPECT_EQ(done.load(), 3);
  EXPECT_EQ(store_->held_puts(), 0);
  EXPECT_TRUE(Exists("held/0") && Exists("held/1") && Exists("held/2"));
}

TEST_F(FaultInjectingStoreTest, ConcurrentNthPutFailsExactlyOnce) {
  store_->FailNthPut(50);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        if (!store_->Put("c/" + std::to_string(t) + "/" + std::to_string(i), "x").ok()) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 1);
  EXPECT_EQ(store_->stats().puts, 100u);
  EXPECT_EQ(store_->successful_put_keys().size(), 99u);
}

}  // namespace
}  // namespace strata::io
