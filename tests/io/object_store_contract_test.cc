// The ObjectStore contract (io/object_store.h), run against every implementation: the local
// directory store always, the S3 store when STRATA_S3_ENDPOINT names one (make test-s3).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <random>
#include <thread>

#include "common/wall_clock.h"
#include "io/local_object_store.h"
#include "s3_test_util.h"
#include "storage_test_util.h"

namespace strata::io {
namespace {

using strata::testing::ScopedS3Store;
using strata::testing::TempDir;

class ObjectStoreContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "Local") {
      auto opened = LocalObjectStore::Open(dir_.path() + "/root");
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      store_ = *opened;
      return;
    }
    if (!strata::testing::S3Configured()) GTEST_SKIP() << strata::testing::kS3SkipMessage;
    s3_ = std::make_unique<ScopedS3Store>();
    ASSERT_NE(s3_->store, nullptr);
    store_ = s3_->store;
  }

  ObjectStore& s() { return *store_; }

  TempDir dir_;
  std::unique_ptr<ScopedS3Store> s3_;
  std::shared_ptr<ObjectStore> store_;
};

TEST_P(ObjectStoreContract, PutGetHeadRangeRemove) {
  ASSERT_TRUE(s().Put("a/b/c.bin", "hello world").ok());
  EXPECT_EQ(*s().Get("a/b/c.bin"), "hello world");
  EXPECT_EQ(s().Head("a/b/c.bin")->size, 11);
  EXPECT_EQ(s().Head("a/b/c.bin")->key, "a/b/c.bin");
  EXPECT_EQ(*s().GetRange("a/b/c.bin", 6, 5), "world");
  ASSERT_TRUE(s().Put("a/b/c.bin", "bye").ok());  // Put replaces
  EXPECT_EQ(*s().Get("a/b/c.bin"), "bye");
  EXPECT_TRUE(s().Get("a/b/missing").status().IsNotFound());
  EXPECT_TRUE(s().Head("a/missing").status().IsNotFound());
  ASSERT_TRUE(s().Remove("a/b/c.bin").ok());
  EXPECT_TRUE(s().Get("a/b/c.bin").status().IsNotFound());
  EXPECT_TRUE(s().Remove("a/b/c.bin").ok());  // idempotent
  EXPECT_TRUE(s().List("")->empty());
}

TEST_P(ObjectStoreContract, RangedGetEdges) {
  ASSERT_TRUE(s().Put("r/ten", "0123456789").ok());
  EXPECT_EQ(*s().GetRange("r/ten", 0, 10), "0123456789");
  EXPECT_EQ(*s().GetRange("r/ten", 0, 100), "0123456789");
  EXPECT_EQ(*s().GetRange("r/ten", 9, 1), "9");
  EXPECT_EQ(*s().GetRange("r/ten", 9, 5), "9");
  EXPECT_EQ(*s().GetRange("r/ten", 3, 4), "3456");
  EXPECT_EQ(*s().GetRange("r/ten", 10, 5), "");  // at the end
  EXPECT_EQ(*s().GetRange("r/ten", 11, 1), "");  // past the end
  EXPECT_EQ(*s().GetRange("r/ten", 3, 0), "");
  EXPECT_EQ(*s().GetRange("r/ten", 2, INT64_MAX), "23456789");
  EXPECT_TRUE(s().GetRange("r/missing", 0, 5).status().IsNotFound());
  EXPECT_TRUE(s().GetRange("r/missing", 0, 0).status().IsNotFound());
  EXPECT_TRUE(s().GetRange("r/ten", -1, 5).status().IsInvalid());
  EXPECT_TRUE(s().GetRange("r/ten", 0, -5).status().IsInvalid());
  // The empty object.
  ASSERT_TRUE(s().Put("r/empty", "").ok());
  EXPECT_EQ(*s().Get("r/empty"), "");
  EXPECT_EQ(s().Head("r/empty")->size, 0);
  EXPECT_EQ(*s().GetRange("r/empty", 0, 10), "");
  // A multi-MiB object with every byte value.
  std::string big(3 * 1024 * 1024 + 17, '\0');
  std::mt19937 rng(7);
  for (auto& c : big) c = static_cast<char>(rng());
  ASSERT_TRUE(s().Put("r/big", big).ok());
  EXPECT_EQ(*s().Get("r/big"), big);
  EXPECT_EQ(s().Head("r/big")->size, static_cast<int64_t>(big.size()));
  EXPECT_EQ(*s().GetRange("r/big", 1'000'000, 65'536), big.substr(1'000'000, 65'536));
  EXPECT_EQ(*s().GetRange("r/big", big.size() - 5, 100), big.substr(big.size() - 5));
}

TEST_P(ObjectStoreContract, ListAndHeadReportModificationTime) {
  const int64_t before = WallClockMicros();
  ASSERT_TRUE(s().Put("t/fresh.bin", "x").ok());
  ASSERT_TRUE(s().Put("t/old.bin", "yy").ok());
  const int64_t after = WallClockMicros();
  auto head = s().Head("t/old.bin");
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->size, 2);
  // S3's Last-Modified has whole seconds; filesystems may be coarse too: allow 2 s each side.
  EXPECT_GE(head->mtime_micros, before - 2'000'000);
  EXPECT_LE(head->mtime_micros, after + 2'000'000);
  auto list = s().List("t/");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].key, "t/fresh.bin");
  EXPECT_EQ((*list)[0].size, 1);
  EXPECT_GE((*list)[0].mtime_micros, before - 2'000'000);
  EXPECT_LE((*list)[0].mtime_micros, after + 2'000'000);
  EXPECT_EQ((*list)[1].key, "t/old.bin");
  EXPECT_EQ((*list)[1].size, 2);
}

TEST_P(ObjectStoreContract, PutIfAbsentCollision) {
  ASSERT_TRUE(s().PutIfAbsent("x/1", "first").ok());
  Status again = s().PutIfAbsent("x/1", "second");
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists) << again.ToString();
  EXPECT_NE(again.message().find("x/1"), std::string::npos) << again.message();
  EXPECT_EQ(*s().Get("x/1"), "first");
  EXPECT_EQ(s().List("x/")->size(), 1u);
}

TEST_P(ObjectStoreContract, PutIfAbsentRaceOfSixteenHasOneWinnerWhoseBytesAreStored) {
  constexpr int kThreads = 16;
  for (int round = 0; round < 5; ++round) {
    const std::string key = "race/" + std::to_string(round);
    std::atomic<int> taken{0}, other{0};
    std::atomic<int> winner{-1};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        while (!go.load()) std::this_thread::yield();
        // Distinct bytes per writer (and different lengths), so the stored object names its
        // writer.
        Status st = s().PutIfAbsent(key, "writer-" + std::to_string(t) + std::string(t, '.'));
        if (st.ok()) {
          int expected = -1;
          if (!winner.compare_exchange_strong(expected, t)) other++;  // a second winner
        } else if (st.IsAlreadyExists()) {
          taken++;
        } else {
          ADD_FAILURE() << st.ToString();
          other++;
        }
      });
    }
    go = true;
    for (auto& th : threads) th.join();
    ASSERT_GE(winner.load(), 0) << "round " << round << ": no winner";
    EXPECT_EQ(other.load(), 0) << "round " << round;
    EXPECT_EQ(taken.load(), kThreads - 1) << "round " << round;
    const int w = winner.load();
    EXPECT_EQ(*s().Get(key), "writer-" + std::to_string(w) + std::string(w, '.'));
  }
}

TEST_P(ObjectStoreContract, ListByPrefixSortedAndChildren) {
  for (const char* k :
       {"db/t2/_versions/1.manifest", "db/t1/_versions/2.manifest", "db/t1/_versions/1.manifest",
        "db/t1/data/x.arrow", "db/t10/a", "other/z", "top.bin"}) {
    ASSERT_TRUE(s().Put(k, k).ok());
  }
  auto all = *s().List("db/t1/");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].key, "db/t1/_versions/1.manifest");
  EXPECT_EQ(all[1].key, "db/t1/_versions/2.manifest");
  EXPECT_EQ(all[2].key, "db/t1/data/x.arrow");
  EXPECT_EQ(all[2].size, 18);
  EXPECT_EQ(s().List("db/t1")->size(), 4u);  // a plain string prefix also matches "t10"
  EXPECT_EQ(s().List("")->size(), 7u);
  EXPECT_TRUE(s().List("nothing/here/")->empty());
  EXPECT_EQ(*s().ListChildren("db/"), (std::vector<std::string>{"t1", "t10", "t2"}));
  EXPECT_EQ(*s().ListChildren("db/t1/"), (std::vector<std::string>{"_versions", "data"}));
  EXPECT_EQ(*s().ListChildren(""), (std::vector<std::string>{"db", "other"}));
  EXPECT_TRUE(s().ListChildren("db/t1/data/")->empty());
  EXPECT_TRUE(s().ListChildren("nothing/")->empty());
  EXPECT_TRUE(s().ListChildren("db").status().IsInvalid());
}

TEST_P(ObjectStoreContract, KeysThatNeedUriEncoding) {
  const std::vector<std::string> keys = {"sp ace/a b.bin",        "plus/a+b=c&d",
                                         "uni/日本語/ключ-ü.bin", "sym/~!$'()*,;@%25#[]^`",
                                         "xml/<tag>&amp;\"'.x",   "q/what?x=1&y=2"};
  for (const auto& k : keys) {
    ASSERT_TRUE(s().Put(k, "value of " + k).ok()) << k;
  }
  for (const auto& k : keys) {
    EXPECT_EQ(*s().Get(k), "value of " + k) << k;
    EXPECT_EQ(s().Head(k)->size, static_cast<int64_t>(k.size() + 9)) << k;
  }
  auto list = s().List("");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  std::vector<std::string> listed;
  for (const auto& m : *list) listed.push_back(m.key);
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(listed, sorted);
  EXPECT_EQ(*s().ListChildren(""),
            (std::vector<std::string>{"plus", "q", "sp ace", "sym", "uni", "xml"}));
  EXPECT_EQ(*s().ListChildren("uni/"), (std::vector<std::string>{"日本語"}));
  EXPECT_EQ(s().List("uni/日本語/")->size(), 1u);
  EXPECT_TRUE(s().PutIfAbsent("plus/a+b=c&d", "again").IsAlreadyExists());
  for (const auto& k : keys) ASSERT_TRUE(s().Remove(k).ok()) << k;
  EXPECT_TRUE(s().List("")->empty());
}

TEST_P(ObjectStoreContract, RejectsMalformedKeys) {
  for (const char* k : {"", "/abs", "a//b", "a/../b", "./a", "a/"}) {
    EXPECT_TRUE(s().Put(k, "x").IsInvalid()) << "key '" << k << "'";
    EXPECT_TRUE(s().PutIfAbsent(k, "x").IsInvalid()) << "key '" << k << "'";
    EXPECT_TRUE(s().Get(k).status().IsInvalid()) << "key '" << k << "'";
  }
  EXPECT_TRUE(s().Put(std::string(300, 'a'), "x").IsInvalid());
}

INSTANTIATE_TEST_SUITE_P(Stores, ObjectStoreContract, ::testing::Values("Local", "S3"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace strata::io
