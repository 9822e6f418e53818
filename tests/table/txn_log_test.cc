// The transaction log of multi-shard writes (table/txn_log.h): the decision register's rules,
// read-back of failed puts, pruning.
#include "table/txn_log.h"

#include <gtest/gtest.h>

#include "../shard/shard_test_util.h"
#include "common/wall_clock.h"

namespace strata::table {
namespace {

using shard::testing::kTable;
using shard::testing::ShardFixture;

TEST(TxnLog, FirstDecisionWinsAndRecordsRoundTrip) {
  ShardFixture f;
  TxnLog log(f.faults, kTable);
  EXPECT_EQ(log.Key("a/b"), std::string(kTable) + "/_txn/612f62.json");
  TxnRecord commit{"t1", TxnDecision::kCommitted, {{"s1", 7}, {"s2", 3}}, 0, "req-9"};
  auto first = log.Decide(commit);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->decision, TxnDecision::kCommitted);
  EXPECT_GT(first->decided_at_micros, 0);
  TxnRecord abort{"t1", TxnDecision::kAborted, {}, 0, ""};
  auto second = log.Decide(abort);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->decision, TxnDecision::kCommitted);  // the stored one
  EXPECT_EQ(second->parts, commit.parts);
  EXPECT_EQ(second->request_id, "req-9");
  auto found = log.Find("t1");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->parts, commit.parts);
  EXPECT_FALSE(log.Find("t2")->has_value());
  // Bad input stores nothing.
  EXPECT_TRUE(log.Decide({"", TxnDecision::kAborted, {}, 0, ""}).status().IsInvalid());
  EXPECT_TRUE(
      log.Decide({std::string(257, 'x'), TxnDecision::kAborted, {}, 0, ""}).status().IsInvalid());
  EXPECT_TRUE(log.Decide({"t3", TxnDecision::kCommitted, {}, 0, ""}).status().IsInvalid());
  EXPECT_FALSE(log.Find("t3")->has_value());
  // A record that does not parse is Corruption, not "undecided".
  ASSERT_TRUE(f.local->Put(log.Key("t4"), "{\"txn_id\": \"t4\", \"decision\": \"maybe\"}").ok());
  EXPECT_EQ(log.Find("t4").status().code(), StatusCode::kCorruption);
  EXPECT_EQ(log.PartCommitted("t4", "s1", 1).status().code(), StatusCode::kCorruption);
}

TEST(TxnLog, ReplayAbortsAnUndecidedWriteSoALateCommitCannotLand) {
  ShardFixture f;
  TxnLog log(f.faults, kTable);
  auto counts = log.PartCommitted("late", "s1", 5);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_FALSE(*counts);
  auto stored = log.Find("late");
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->decision, TxnDecision::kAborted);
  auto late = log.Decide({"late", TxnDecision::kCommitted, {{"s1", 5}, {"s2", 9}}, 0, ""});
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->decision, TxnDecision::kAborted);
  // A committed write counts only for its own parts.
  ASSERT_TRUE(log.Decide({"ok", TxnDecision::kCommitted, {{"s1", 5}, {"s2", 9}}, 0, ""}).ok());
  EXPECT_TRUE(*log.PartCommitted("ok", "s1", 5));
  EXPECT_TRUE(*log.PartCommitted("ok", "s2", 9));
  EXPECT_FALSE(*log.PartCommitted("ok", "s1", 6));
  EXPECT_FALSE(*log.PartCommitted("ok", "s3", 5));
}

TEST(TxnLog, AFailedCommitPutIsReadBack) {
  ShardFixture f;
  TxnLog log(f.faults, kTable);
  // The put lands but reports an error: the read-back finds the commit.
  io::PutFault landed;
  landed.key_contains = "/_txn/";
  landed.after_write = true;
  landed.times = 1;
  f.faults->AddFault(landed);
  auto r = log.Decide({"a", TxnDecision::kCommitted, {{"s1", 1}, {"s2", 1}}, 0, ""});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->decision, TxnDecision::kCommitted);
  // The put fails without landing: unknown to the caller, nothing stored.
  io::PutFault lost;
  lost.key_contains = "/_txn/";
  lost.times = 1;
  f.faults->AddFault(lost);
  auto u = log.Decide({"b", TxnDecision::kCommitted, {{"s1", 2}, {"s2", 2}}, 0, ""});
  EXPECT_EQ(u.status().code(), StatusCode::kIOError) << u.status().ToString();
  EXPECT_FALSE(log.Find("b")->has_value());
}

TEST(TxnLog, PruneRemovesOnlyWhatNoReplayNeeds) {
  ShardFixture f;
  TxnLog log(f.faults, kTable);
  const int64_t now = WallClockMicros();
  ASSERT_TRUE(log.Decide({"flushed", TxnDecision::kCommitted, {{"s1", 4}, {"s2", 2}}, 0, ""}).ok());
  ASSERT_TRUE(log.Decide({"half", TxnDecision::kCommitted, {{"s1", 4}, {"s2", 3}}, 0, ""}).ok());
  ASSERT_TRUE(log.Decide({"unknown", TxnDecision::kCommitted, {{"s1", 1}, {"s9", 1}}, 0, ""}).ok());
  ASSERT_TRUE(
      log.Decide({"old abort", TxnDecision::kAborted, {}, now - 7200ll * 1000000, ""}).ok());
  ASSERT_TRUE(log.Decide({"new abort", TxnDecision::kAborted, {}, 0, ""}).ok());
  auto replay_after = [](const std::string& shard) -> std::optional<uint64_t> {
    if (shard == "s1") return 4;
    if (shard == "s2") return 2;
    return std::nullopt;
  };
  auto removed = log.Prune(replay_after, now);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(*removed, 2);
  EXPECT_FALSE(log.Find("flushed")->has_value());
  EXPECT_FALSE(log.Find("old abort")->has_value());
  EXPECT_TRUE(log.Find("half")->has_value());
  EXPECT_TRUE(log.Find("unknown")->has_value());
  EXPECT_TRUE(log.Find("new abort")->has_value());
}

// A request id that is not UTF-8 is stored, not thrown.
TEST(TxnLog, ANonUtf8RequestIdIsStored) {
  ShardFixture f;
  TxnLog log(f.faults, kTable);
  auto r = log.Decide({"u", TxnDecision::kAborted, {}, 0, std::string("bad\xff\xfe id")});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(log.Find("u")->has_value());
}

}  // namespace
}  // namespace strata::table
