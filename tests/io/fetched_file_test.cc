// io/fetched_file.h: local copies of remote objects, made with ranged GETs and mapped
// (issue 17). The remote store here is the local store behind a wrapper that counts (and, for
// one test, truncates) ranged GETs.
#include "io/fetched_file.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "forwarding_store.h"
#include "io/fault_injecting_store.h"
#include "io/local_object_store.h"
#include "io/mapped_file_cache.h"
#include "storage_test_util.h"

namespace strata::io {
namespace {

std::string Pattern(int64_t n, uint32_t seed) {
  std::string s(static_cast<size_t>(n), '\0');
  uint32_t x = seed;
  for (auto& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

size_t FilesIn(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

// Answers every ranged GET reaching past `cut` with the bytes before it only (a body cut
// short by the network), as S3's GetRange contract would never do for an object that long.
class TruncatingStore : public strata::testing::ForwardingStore {
 public:
  TruncatingStore(std::shared_ptr<ObjectStore> inner, int64_t cut)
      : ForwardingStore(std::move(inner)), cut_(cut) {}
  Result<std::string> GetRange(const std::string& key, int64_t offset, int64_t length) override {
    STRATA_ASSIGN_OR_RETURN(std::string s, inner()->GetRange(key, offset, length));
    if (offset + static_cast<int64_t>(s.size()) > cut_) {
      s.resize(static_cast<size_t>(std::max<int64_t>(0, cut_ - offset)));
    }
    return s;
  }

 private:
  int64_t cut_;
};

class FetchedFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    local_ = *LocalObjectStore::Open(data_.path());
    remote_ = std::make_shared<FaultInjectingStore>(local_);
    ASSERT_TRUE(files_.SetRoot(cache_.path()).ok());
    FetchedFiles::Options o;
    o.chunk_bytes = 1 << 20;
    o.parallel = 3;
    files_.set_options(o);
  }
  strata::testing::TempDir data_, cache_;
  std::shared_ptr<LocalObjectStore> local_;
  std::shared_ptr<FaultInjectingStore> remote_;
  FetchedFiles files_;
};

TEST_F(FetchedFilesTest, CopiesWithRangedGetsMapsAndRemovesTheCopyWithTheMapping) {
  const int64_t size = (5 << 20) + 12345;  // 5 whole 1 MiB chunks and a partial one
  const std::string bytes = Pattern(size, 7);
  ASSERT_TRUE(local_->Put("db/t/data.arrow", bytes).ok());
  const int64_t mapped0 = MappedFileCache::Global().stats().mapped_bytes;
  auto m = files_.FetchAndMap(*remote_, "db/t/data.arrow");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ((*m)->size(), size);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>((*m)->data()), static_cast<size_t>(size)),
            bytes);
  EXPECT_EQ(remote_->stats().get_ranges, 6u);
  EXPECT_EQ(remote_->stats().gets, 0u);  // never the whole object into memory
  EXPECT_EQ(remote_->stats().heads, 1u);
  // Registered with the --cache-bytes cache like any mapped data file.
  EXPECT_EQ(MappedFileCache::Global().stats().mapped_bytes - mapped0, size);
  const std::string dir = *files_.Directory();
  EXPECT_EQ(dir, cache_.path() + "/strata-fetch-" + std::to_string(::getpid()));
  EXPECT_EQ(FilesIn(dir), 1u);
  FetchedFiles::Stats s = files_.stats();
  EXPECT_EQ(s.files_fetched, 1);
  EXPECT_EQ(s.bytes_fetched, size);
  EXPECT_EQ(s.ranged_gets, 6);
  EXPECT_EQ(s.files_on_disk, 1);
  EXPECT_EQ(s.bytes_on_disk, size);
  // The same key while a copy is mapped: that copy, with no request and no second file (a
  // reopened table maps what the old table object maps).
  remote_->ResetCounters();
  auto m2 = files_.FetchAndMap(*remote_, "db/t/data.arrow");
  ASSERT_TRUE(m2.ok());
  EXPECT_EQ((*m2)->data(), (*m)->data());
  EXPECT_EQ(FilesIn(dir), 1u);
  EXPECT_EQ(remote_->stats().heads + remote_->stats().get_ranges, 0u);
  EXPECT_EQ(files_.stats().reused, 1);
  m->reset();
  EXPECT_EQ(FilesIn(dir), 1u);  // still mapped through m2
  EXPECT_EQ(static_cast<char>((*m2)->data()[size - 1]), bytes.back());
  m2->reset();
  EXPECT_EQ(FilesIn(dir), 0u);
  s = files_.stats();
  EXPECT_EQ(s.files_on_disk, 0);
  EXPECT_EQ(s.bytes_on_disk, 0);
  EXPECT_EQ(MappedFileCache::Global().stats().mapped_bytes, mapped0);
  // Once the last mapping went, the key is fetched again.
  auto m3 = files_.FetchAndMap(*remote_, "db/t/data.arrow");
  ASSERT_TRUE(m3.ok());
  EXPECT_EQ(remote_->stats().get_ranges, 6u);
  EXPECT_EQ(files_.stats().files_fetched, 2);
}

TEST_F(FetchedFilesTest, ATruncatedBodyFailsAndLeavesNoCopy) {
  const int64_t size = 3 << 20;
  ASSERT_TRUE(local_->Put("db/t/data.arrow", Pattern(size, 3)).ok());
  TruncatingStore cut(local_, size - 100);
  auto m = files_.FetchAndMap(cut, "db/t/data.arrow");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kIOError);
  EXPECT_NE(m.status().message().find("truncated"), std::string::npos) << m.status().ToString();
  EXPECT_NE(m.status().message().find("db/t/data.arrow"), std::string::npos);
  EXPECT_EQ(FilesIn(*files_.Directory()), 0u);
  EXPECT_EQ(files_.stats().files_on_disk, 0);
}

TEST_F(FetchedFilesTest, AMissingObjectIsNotFoundAndAnEmptyOneMapsEmpty) {
  auto missing = files_.FetchAndMap(*remote_, "db/t/nope.arrow");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(local_->Put("db/t/empty", "").ok());
  auto empty = files_.FetchAndMap(*remote_, "db/t/empty");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ((*empty)->size(), 0);
  EXPECT_EQ(remote_->stats().get_ranges, 0u);
  EXPECT_EQ(FilesIn(*files_.Directory()), 1u);
  empty->reset();
  EXPECT_EQ(FilesIn(*files_.Directory()), 0u);
}

TEST_F(FetchedFilesTest, DirectoriesOfDeadProcessesAreRemovedLiveOnesKept) {
  // A pid that cannot run (above pid_max's largest value) and this process's parent.
  const std::string dead = cache_.path() + "/strata-fetch-2147483600";
  const std::string live = cache_.path() + "/strata-fetch-" + std::to_string(::getppid());
  const std::string other = cache_.path() + "/not-ours";
  for (const auto& d : {dead, live, other}) std::filesystem::create_directories(d);
  std::ofstream(dead + "/1-data.arrow") << "left by a kill -9";
  FetchedFiles another;
  ASSERT_TRUE(another.SetRoot(cache_.path()).ok());
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(std::filesystem::exists(other));
  auto bad = another.SetRoot("/proc/strata-cannot-create-this");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("--cache-dir"), std::string::npos);
}

TEST_F(FetchedFilesTest, ConcurrentFetchesOfManyKeysReadTheirOwnBytes) {
  constexpr int kKeys = 8;
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(local_->Put("db/t/f" + std::to_string(i), Pattern((1 << 20) * 2 + i, i)).ok());
  }
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int i = 0; i < kKeys; ++i) {
    threads.emplace_back([&, i] {
      for (int round = 0; round < 3; ++round) {
        auto m = files_.FetchAndMap(*remote_, "db/t/f" + std::to_string(i));
        const std::string want = Pattern((1 << 20) * 2 + i, i);
        if (!m.ok() || std::string(reinterpret_cast<const char*>((*m)->data()),
                                   static_cast<size_t>((*m)->size())) != want) {
          ++bad;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(files_.stats().files_on_disk, 0);
  // Each round's copy went before the next round: every round fetched.
  EXPECT_EQ(files_.stats().files_fetched, kKeys * 3);
}

TEST_F(FetchedFilesTest, ConcurrentFetchesOfAMappedKeyShareItsCopy) {
  ASSERT_TRUE(local_->Put("db/t/shared", Pattern(3 << 20, 11)).ok());
  auto first = files_.FetchAndMap(*remote_, "db/t/shared");
  ASSERT_TRUE(first.ok());
  std::vector<std::thread> threads;
  std::atomic<int> same{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int round = 0; round < 20; ++round) {
        auto m = files_.FetchAndMap(*remote_, "db/t/shared");
        if (m.ok() && (*m)->data() == (*first)->data()) ++same;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(same.load(), 160);
  EXPECT_EQ(files_.stats().files_fetched, 1);
  EXPECT_EQ(files_.stats().reused, 160);
  EXPECT_EQ(FilesIn(*files_.Directory()), 1u);
}

TEST_F(FetchedFilesTest, ASeededCopyServesTheNextFetchOnceWithNoRequest) {
  const std::string bytes = Pattern((2 << 20) + 7, 5);
  ASSERT_TRUE(local_->Put("db/t/seeded", bytes).ok());
  ASSERT_TRUE(files_.Seed("db/t/seeded", bytes).ok());
  EXPECT_EQ(files_.stats().seeded, 1);
  EXPECT_EQ(files_.stats().files_on_disk, 1);  // held for the next fetch
  auto m = files_.FetchAndMap(*remote_, "db/t/seeded");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>((*m)->data()), bytes.size()), bytes);
  EXPECT_EQ(remote_->stats().heads + remote_->stats().get_ranges, 0u);
  m->reset();
  // Consumed: the copy went with its mapping, and the next fetch downloads.
  EXPECT_EQ(files_.stats().files_on_disk, 0);
  EXPECT_EQ(FilesIn(*files_.Directory()), 0u);
  auto again = files_.FetchAndMap(*remote_, "db/t/seeded");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(remote_->stats().get_ranges, 3u);  // 1 MiB chunks
}

}  // namespace
}  // namespace strata::io
