#include "format/shard_manifest.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "../io/storage_test_util.h"
#include "format/bit_reversed.h"
#include "io/fault_injecting_store.h"
#include "io/local_object_store.h"

namespace strata::format {
namespace {

constexpr char kPrefix[] = "db/t/_mem_wal/s0";

class ShardManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto local = io::LocalObjectStore::Open(dir_.path());
    ASSERT_TRUE(local.ok());
    store_ = *local;
  }
  strata::testing::TempDir dir_;
  std::shared_ptr<io::LocalObjectStore> store_;
};

TEST_F(ShardManifestTest, KeysUseBitReversedVersions) {
  EXPECT_EQ(ShardManifestKey(kPrefix, 5),
            std::string(kPrefix) + "/manifest/1010" + std::string(60, '0') + ".binpb");
  EXPECT_EQ(ShardManifestHintKey(kPrefix), std::string(kPrefix) + "/manifest/version_hint.json");
}

TEST_F(ShardManifestTest, EmptyShardLoadsNullopt) {
  ShardManifestStore ms(store_, kPrefix, "s0");
  auto latest = ms.LoadLatest();
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_FALSE(latest->has_value());
}

TEST_F(ShardManifestTest, ClaimIncrementsEpochAndVersion) {
  ShardManifestStore ms(store_, kPrefix, "s0");
  auto a = ms.Claim();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->version(), 1u);
  EXPECT_EQ(a->writer_epoch(), 1u);
  EXPECT_EQ(a->current_generation(), 1u);
  EXPECT_EQ(a->shard_id(), "s0");
  EXPECT_GT(a->created_at_micros(), 0);

  ShardManifestStore other(store_, kPrefix, "s0");  // a second process, no cached state
  auto b = other.Claim();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->version(), 2u);
  EXPECT_EQ(b->writer_epoch(), 2u);

  auto latest = ms.LoadLatest();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->version(), 2u);
  EXPECT_EQ((*latest)->writer_epoch(), 2u);
  auto hint = store_->Get(ShardManifestHintKey(kPrefix));
  ASSERT_TRUE(hint.ok());
  EXPECT_EQ(*hint, "{\"version\":2}");
}

TEST_F(ShardManifestTest, CommitIsPutIfAbsentOfTheNextVersion) {
  ShardManifestStore ms(store_, kPrefix, "s0");
  auto m = ms.Claim();
  ASSERT_TRUE(m.ok());
  ShardManifest next = *m;
  next.set_version(2);
  next.set_current_generation(2);
  ASSERT_TRUE(ms.Commit(next).ok());
  next.set_current_generation(7);
  EXPECT_TRUE(ms.Commit(next).IsAlreadyExists());  // lost race: version 2 taken
  auto loaded = ms.Load(2);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->current_generation(), 2u);  // the first commit stays
  next.set_version(0);
  EXPECT_TRUE(ms.Commit(next).IsInvalid());
  next.set_version(3);
  next.set_shard_id("other");
  EXPECT_TRUE(ms.Commit(next).IsInvalid());
}

TEST_F(ShardManifestTest, StaleHintProbesForwardAndMissingHintLists) {
  ShardManifestStore ms(store_, kPrefix, "s0");
  ASSERT_TRUE(ms.Claim().ok());
  // Versions 2..4 committed by someone whose hint writes were lost: hint stays at 1.
  ShardManifest m = *ms.Load(1);
  for (uint64_t v = 2; v <= 4; ++v) {
    m.set_version(v);
    m.set_wal_entry_position_last_seen(v * 10);
    ASSERT_TRUE(store_->PutIfAbsent(ShardManifestKey(kPrefix, v), SerializeShardManifest(m)).ok());
  }
  ShardManifestStore fresh(store_, kPrefix, "s0");
  auto latest = fresh.LoadLatest();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->version(), 4u);
  EXPECT_EQ((*latest)->wal_entry_position_last_seen(), 40u);

  // Hint missing and version 1 garbage-collected: a listing finds 4.
  ASSERT_TRUE(store_->Remove(ShardManifestHintKey(kPrefix)).ok());
  ASSERT_TRUE(store_->Remove(ShardManifestKey(kPrefix, 1)).ok());
  ShardManifestStore fresh2(store_, kPrefix, "s0");
  latest = fresh2.LoadLatest();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->version(), 4u);

  // Garbage hint: ignored.
  ASSERT_TRUE(store_->Put(ShardManifestHintKey(kPrefix), "not json").ok());
  ShardManifestStore fresh3(store_, kPrefix, "s0");
  latest = fresh3.LoadLatest();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->version(), 4u);

  // Hint pointing past the end (missing version): fall back to listing.
  ASSERT_TRUE(store_->Put(ShardManifestHintKey(kPrefix), "{\"version\": 99}").ok());
  ShardManifestStore fresh4(store_, kPrefix, "s0");
  latest = fresh4.LoadLatest();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->version(), 4u);
}

TEST_F(ShardManifestTest, CorruptNewestVersionIsAnError) {
  ShardManifestStore ms(store_, kPrefix, "s0");
  ASSERT_TRUE(ms.Claim().ok());
  ASSERT_TRUE(store_->PutIfAbsent(ShardManifestKey(kPrefix, 2), "\xff\xff\xff garbage").ok());
  ShardManifestStore fresh(store_, kPrefix, "s0");
  auto latest = fresh.LoadLatest();
  EXPECT_EQ(latest.status().code(), StatusCode::kCorruption);
  // A file whose version field disagrees with its name.
  ShardManifest m = *ms.Load(1);
  m.set_version(7);
  ASSERT_TRUE(store_->Put(ShardManifestKey(kPrefix, 2), SerializeShardManifest(m)).ok());
  EXPECT_EQ(fresh.Load(2).status().code(), StatusCode::kCorruption);
}

TEST_F(ShardManifestTest, UpdateAsOwnerAndFencedAfterANewClaim) {
  ShardManifestStore a(store_, kPrefix, "s0");
  auto ma = a.Claim();
  ASSERT_TRUE(ma.ok());
  auto up = a.Update(ma->writer_epoch(), [](ShardManifest& m) {
    auto* e = m.add_sstables();
    e->set_generation(1);
    e->set_path("0123abcd_gen_1");
    e->set_rows(10);
    m.set_current_generation(2);
    m.set_replay_after_wal_entry_position(3);
    return Status::OK();
  });
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  EXPECT_EQ(up->version(), 2u);
  EXPECT_EQ(up->sstables_size(), 1);
  EXPECT_EQ(up->current_generation(), 2u);

  // An edit error aborts without committing.
  auto bad = a.Update(ma->writer_epoch(), [](ShardManifest&) { return Status::Invalid("no"); });
  EXPECT_TRUE(bad.status().IsInvalid());
  EXPECT_TRUE(store_->Head(ShardManifestKey(kPrefix, 3)).status().IsNotFound());

  ShardManifestStore b(store_, kPrefix, "s0");
  auto mb = b.Claim();
  ASSERT_TRUE(mb.ok());
  EXPECT_EQ(mb->writer_epoch(), 2u);
  EXPECT_EQ(mb->sstables_size(), 1);  // the claim keeps published state
  EXPECT_EQ(mb->replay_after_wal_entry_position(), 3u);
  auto fenced = a.Update(ma->writer_epoch(), [](ShardManifest&) { return Status::OK(); });
  EXPECT_EQ(fenced.status().code(), StatusCode::kFenced);
}

TEST_F(ShardManifestTest, ConcurrentClaimsGetDistinctEpochsWithoutGaps) {
  constexpr int kThreads = 4, kClaims = 10;
  std::vector<std::thread> threads;
  std::mutex mu;
  std::vector<uint64_t> epochs, versions;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      ShardManifestStore ms(store_, kPrefix, "s0");
      for (int i = 0; i < kClaims; ++i) {
        auto m = ms.Claim();
        ASSERT_TRUE(m.ok()) << m.status().ToString();
        std::lock_guard<std::mutex> lock(mu);
        epochs.push_back(m->writer_epoch());
        versions.push_back(m->version());
      }
    });
  }
  for (auto& t : threads) t.join();
  std::set<uint64_t> e(epochs.begin(), epochs.end()), v(versions.begin(), versions.end());
  EXPECT_EQ(e.size(), size_t{kThreads * kClaims});
  EXPECT_EQ(*e.rbegin(), uint64_t{kThreads * kClaims});
  EXPECT_EQ(*v.rbegin(), uint64_t{kThreads * kClaims});
  ShardManifestStore ms(store_, kPrefix, "s0");
  for (uint64_t ver = 1; ver <= kThreads * kClaims; ++ver) {
    auto m = ms.Load(ver);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m->writer_epoch(), ver);  // every version is exactly one claim
  }
}

TEST_F(ShardManifestTest, SealedShardCannotBeClaimed) {
  ShardManifestStore ms(store_, kPrefix, "s0");
  auto m = ms.Claim();
  ASSERT_TRUE(m.ok());
  auto sealed = ms.Update(m->writer_epoch(), [](ShardManifest& x) {
    x.set_status(SHARD_STATUS_SEALED);
    return Status::OK();
  });
  ASSERT_TRUE(sealed.ok());
  EXPECT_EQ(ms.Claim().status().code(), StatusCode::kNotSupported);
}

TEST_F(ShardManifestTest, HintWriteFailureDoesNotFailTheCommit) {
  auto faulty = std::make_shared<io::FaultInjectingStore>(store_);
  faulty->FailPutsUnder(ShardManifestHintKey(kPrefix));
  ShardManifestStore ms(faulty, kPrefix, "s0");
  ASSERT_TRUE(ms.Claim().ok());
  ASSERT_TRUE(ms.Claim().ok());
  EXPECT_TRUE(store_->Head(ShardManifestHintKey(kPrefix)).status().IsNotFound());
  ShardManifestStore fresh(store_, kPrefix, "s0");
  auto latest = fresh.LoadLatest();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->writer_epoch(), 2u);
}

}  // namespace
}  // namespace strata::format
