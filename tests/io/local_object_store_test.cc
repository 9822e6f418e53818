#include "io/local_object_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "common/wall_clock.h"
#include "storage_test_util.h"

namespace strata::io {
namespace {

using strata::testing::TempDir;

TEST(LocalObjectStore, PutGetHeadRangeRemove) {
  TempDir dir;
  auto store = LocalObjectStore::Open(dir.path() + "/root");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto& s = **store;
  ASSERT_TRUE(s.Put("a/b/c.bin", "hello world").ok());
  EXPECT_EQ(*s.Get("a/b/c.bin"), "hello world");
  EXPECT_EQ(s.Head("a/b/c.bin")->size, 11);
  EXPECT_EQ(*s.GetRange("a/b/c.bin", 6, 5), "world");
  EXPECT_EQ(*s.GetRange("a/b/c.bin", 6, 100), "world");
  EXPECT_EQ(*s.GetRange("a/b/c.bin", 50, 10), "");
  // Put replaces.
  ASSERT_TRUE(s.Put("a/b/c.bin", "bye").ok());
  EXPECT_EQ(*s.Get("a/b/c.bin"), "bye");
  EXPECT_TRUE(s.Get("a/b/missing").status().IsNotFound());
  EXPECT_TRUE(s.Head("a/missing").status().IsNotFound());
  ASSERT_TRUE(s.Remove("a/b/c.bin").ok());
  EXPECT_TRUE(s.Get("a/b/c.bin").status().IsNotFound());
  EXPECT_TRUE(s.Remove("a/b/c.bin").ok());  // idempotent
  // Empty directories are gone, the root stays.
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/root/a"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/root"));
}

TEST(LocalObjectStore, ListAndHeadReportModificationTime) {
  TempDir dir;
  auto store = LocalObjectStore::Open(dir.path());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto& s = **store;
  const int64_t before = WallClockMicros();
  ASSERT_TRUE(s.Put("t/fresh.bin", "x").ok());
  ASSERT_TRUE(s.Put("t/old.bin", "yy").ok());
  const int64_t after = WallClockMicros();
  // Set old.bin's mtime to a known instant (2023-11-14T22:13:20.123456Z).
  const int64_t old_micros = 1'700'000'000'123'456;
  struct timespec times[2];
  times[0].tv_sec = times[1].tv_sec = old_micros / 1'000'000;
  times[0].tv_nsec = times[1].tv_nsec = (old_micros % 1'000'000) * 1000;
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir.path() + "/t/old.bin").c_str(), times, 0), 0);

  auto head = s.Head("t/old.bin");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->size, 2);
  EXPECT_EQ(head->mtime_micros, old_micros);
  auto list = s.List("t/");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].key, "t/fresh.bin");
  EXPECT_EQ((*list)[0].size, 1);
  // File-system timestamps may be coarser than the clock: allow 1 s on each side.
  EXPECT_GE((*list)[0].mtime_micros, before - 1'000'000);
  EXPECT_LE((*list)[0].mtime_micros, after + 1'000'000);
  EXPECT_EQ((*list)[1].key, "t/old.bin");
  EXPECT_EQ((*list)[1].mtime_micros, old_micros);
}

TEST(LocalObjectStore, PutIfAbsentCollision) {
  TempDir dir;
  auto s = *LocalObjectStore::Open(dir.path());
  ASSERT_TRUE(s->PutIfAbsent("x/1", "first").ok());
  Status again = s->PutIfAbsent("x/1", "second");
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists) << again.ToString();
  EXPECT_EQ(*s->Get("x/1"), "first");
  // No temporary files left behind.
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path() + "/x")) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST(LocalObjectStore, PutIfAbsentExactlyOneWinnerAcrossThreads) {
  TempDir dir;
  auto s = *LocalObjectStore::Open(dir.path());
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> wins{0}, taken{0};
    std::vector<std::thread> threads;
    std::string key = "race/" + std::to_string(round);
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        Status st = s->PutIfAbsent(key, "writer" + std::to_string(t));
        if (st.ok()) ++wins;
        if (st.IsAlreadyExists()) ++taken;
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(wins.load(), 1);
    EXPECT_EQ(taken.load(), 3);
  }
}

// Listing, children, malformed keys, ranges and races of 16: object_store_contract_test.cc.

}  // namespace
}  // namespace strata::io
