// All-or-nothing multi-shard writes (docs/SHARDING.md): the transaction log's decision
// register, ShardWriter::Prepare / Publish / Abort, replay of tagged WAL entries, and
// WriteAllOrNothing across two shards of one table, through store faults and SIGKILL.
#include "table/multi_shard_write.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "../shard/shard_test_util.h"
#include "common/wall_clock.h"
#include "table/txn_log.h"
#include "wal/wal_entry.h"
#include "wal/wal_reader.h"

namespace strata::table {
namespace {

using namespace std::chrono_literals;
using shard::ShardWriter;
using shard::ShardWriterOptions;
using shard::testing::In;
using shard::testing::kTable;
using shard::testing::KvMap;
using shard::testing::KvRows;
using shard::testing::KvSchema;
using shard::testing::ShardFixture;
using KvState = std::map<int64_t, std::optional<int64_t>>;

// Two shards ("s1", "s2") of one primary-key table in one store, with the table's log.
struct TwoShards {
  ShardFixture f;
  TxnLog log{f.faults, kTable};

  ShardWriterOptions Options(const std::string& shard_id) {
    ShardWriterOptions o;
    o.primary_key = {"id"};
    o.txn_committed = [this, shard_id](const std::string& txn, uint64_t position) {
      return log.PartCommitted(txn, shard_id, position);
    };
    return o;
  }
  Result<std::unique_ptr<ShardWriter>> Open(const std::string& shard_id) {
    return ShardWriter::Open(f.faults, kTable, shard_id, KvSchema(), Options(shard_id));
  }
  std::unique_ptr<ShardWriter> OpenOrDie(const std::string& shard_id) {
    auto w = Open(shard_id);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? std::move(w).value() : nullptr;
  }
};

std::vector<ShardWrite> Parts(ShardWriter& a, const std::vector<int64_t>& a_ids, ShardWriter& b,
                              const std::vector<int64_t>& b_ids, int64_t value) {
  auto rows = [&](const std::vector<int64_t>& ids) {
    std::vector<std::optional<int64_t>> vs(ids.size(), value);
    return KvRows(ids, vs);
  };
  return {ShardWrite{&a, {}, {rows(a_ids)}}, ShardWrite{&b, {}, {rows(b_ids)}}};
}

// ---- one shard's part ----

TEST(ShardPrepare, APreparedPartIsInvisibleAndHoldsLaterPutsUntilPublished) {
  TwoShards t;
  auto w = t.OpenOrDie("s1");
  ASSERT_TRUE(w->Put({KvRows({1}, {10})}).ok());
  const wal::TxnTag txn{"tx-1", 2};
  auto prepared = w->Prepare(txn, {}, {KvRows({1, 2}, {11, 20})});
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  EXPECT_GT(prepared->put.wal_position, 0u);
  EXPECT_EQ(KvMap(*w), (KvState{{1, 10}}));  // not visible, key 1's old version still live
  // The entry is durable, alone, and tagged.
  std::vector<wal::WalEntry> entries;
  ASSERT_TRUE(wal::WalReader::Replay(*t.f.local, std::string(kTable) + "/_mem_wal/s1", 1,
                                     [&](wal::WalEntry&& e) {
                                       entries.push_back(std::move(e));
                                       return Status::OK();
                                     })
                  .ok());
  ASSERT_FALSE(entries.empty());
  EXPECT_EQ(entries.back().position, prepared->put.wal_position);
  EXPECT_EQ(entries.back().txn.id, "tx-1");
  EXPECT_EQ(entries.back().txn.shards, 2u);
  EXPECT_EQ(entries.back().num_rows, 2);
  // A later put of this MemTable is acknowledged only once it is visible: after the publish.
  std::atomic<bool> returned{false};
  std::thread later([&] {
    EXPECT_TRUE(w->Put({KvRows({3}, {30})}).ok());
    returned = true;
  });
  std::this_thread::sleep_for(150ms);
  EXPECT_FALSE(returned.load()) << "a put behind a held part was acknowledged before it was "
                                   "visible";
  EXPECT_EQ(KvMap(*w), (KvState{{1, 10}}));
  w->Publish(*prepared);
  later.join();
  EXPECT_TRUE(returned.load());
  EXPECT_EQ(KvMap(*w), (KvState{{1, 11}, {2, 20}, {3, 30}}));
  w->Publish(*prepared);                             // idempotent
  w->Abort(*prepared, Status::IOError("too late"));  // no-op after publish
  EXPECT_TRUE(w->Put({KvRows({4}, {40})}).ok());
  // A seal settles once the part is published; the flush holds its rows.
  auto sealed = w->force_seal_active();
  ASSERT_TRUE(sealed.ok() && sealed->has_value());
  ASSERT_TRUE(w->wait_for_generation((*sealed)->generation, In(10s)).ok());
  // Its record says committed: it counts after a reopen (here from the SSTable).
  ASSERT_TRUE(t.log
                  .Decide({"tx-1",
                           TxnDecision::kCommitted,
                           {{"s1", prepared->put.wal_position}, {"s2", 1}},
                           0,
                           ""})
                  .ok());
  w.reset();
  auto reopened = t.OpenOrDie("s1");
  EXPECT_EQ(KvMap(*reopened), (KvState{{1, 11}, {2, 20}, {3, 30}, {4, 40}}));
}

TEST(ShardPrepare, AbortPoisonsAndTheReopenSkipsThePart) {
  TwoShards t;
  auto w = t.OpenOrDie("s1");
  ASSERT_TRUE(w->Put({KvRows({1}, {10})}).ok());
  auto prepared = w->Prepare({"tx-2", 2}, {}, {KvRows({1, 2}, {11, 20})});
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  w->Abort(*prepared, Status::IOError("the other shard failed"));
  EXPECT_EQ(w->Put({KvRows({5}, {50})}).status().code(), StatusCode::kWriterPoisoned);
  EXPECT_EQ(KvMap(*w), (KvState{{1, 10}}));  // never visible, even poisoned
  w->Publish(*prepared);                     // no-op after abort
  EXPECT_EQ(KvMap(*w), (KvState{{1, 10}}));
  w.reset();
  auto reopened = t.OpenOrDie("s1");  // no record: the replay decides "aborted"
  EXPECT_EQ(KvMap(*reopened), (KvState{{1, 10}}));
  auto rec = t.log.Find("tx-2");
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ((*rec)->decision, TxnDecision::kAborted);
  // The skipped entry stays skipped through writes, a flush and another reopen.
  ASSERT_TRUE(reopened->Put({KvRows({3}, {30})}).ok());
  auto sealed = reopened->force_seal_active();
  ASSERT_TRUE(sealed.ok() && sealed->has_value());
  ASSERT_TRUE(reopened->wait_for_generation((*sealed)->generation, In(10s)).ok());
  reopened.reset();
  EXPECT_EQ(KvMap(*t.OpenOrDie("s1")), (KvState{{1, 10}, {3, 30}}));
}

TEST(ShardPrepare, ReplayWithoutATransactionLogRefusesATaggedEntry) {
  TwoShards t;
  {
    auto w = t.OpenOrDie("s1");
    ASSERT_TRUE(w->Prepare({"tx-3", 2}, {}, {KvRows({1}, {10})}).ok());
  }
  ShardWriterOptions o;
  o.primary_key = {"id"};
  auto w = ShardWriter::Open(t.f.faults, kTable, "s1", KvSchema(), o);
  EXPECT_EQ(w.status().code(), StatusCode::kCorruption) << w.status().ToString();
  EXPECT_TRUE(t.OpenOrDie("s1") != nullptr);
}

// A review found: a put of a held row's key in a LATER generation made the version the held
// row superseded visible again next to the new one. A MemTable holding a part is now not
// sealed, so the later put lands behind the part and shows with it.
TEST(ShardPrepare, ALaterVersionOfAHeldKeyNeverShowsTheOneBeforeIt) {
  TwoShards t;
  ShardWriterOptions o = t.Options("s1");
  o.max_memtable_rows = 2;  // the put below would seal the MemTable the part is in
  auto w = std::move(ShardWriter::Open(t.f.faults, kTable, "s1", KvSchema(), o)).value();
  ASSERT_TRUE(w->Put({KvRows({1, 2}, {10, 20})}).ok());  // X: key 1 = 10 (gen 1, sealed next)
  auto prepared = w->Prepare({"tx-4", 2}, {}, {KvRows({1, 3}, {11, 30})});  // H: key 1 = 11
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  std::atomic<bool> returned{false};
  std::thread later([&] {
    EXPECT_TRUE(w->Put({KvRows({1}, {12})}).ok());  // P: key 1 = 12
    returned = true;
  });
  // KvMap fails on a key present twice; key 1 must read 10 until the part publishes.
  for (int i = 0; i < 20 && !returned.load(); ++i) {
    EXPECT_EQ(KvMap(*w), (KvState{{1, 10}, {2, 20}}));
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_FALSE(returned.load());
  w->Publish(*prepared);
  later.join();
  EXPECT_EQ(KvMap(*w), (KvState{{1, 12}, {2, 20}, {3, 30}}));
  ASSERT_TRUE(t.log
                  .Decide({"tx-4",
                           TxnDecision::kCommitted,
                           {{"s1", prepared->put.wal_position}, {"s2", 1}},
                           0,
                           ""})
                  .ok());
  w.reset();
  EXPECT_EQ(KvMap(*t.OpenOrDie("s1")), (KvState{{1, 12}, {2, 20}, {3, 30}}));
}

// The same with the part aborted: the later put is acknowledged (durable), hidden while the
// writer is poisoned, and there once the shard reopens, with the aborted part gone.
TEST(ShardPrepare, APutBehindAnAbortedPartIsAcknowledgedAndReplayed) {
  TwoShards t;
  auto w = t.OpenOrDie("s1");
  ASSERT_TRUE(w->Put({KvRows({1}, {10})}).ok());
  auto prepared = w->Prepare({"tx-5", 2}, {}, {KvRows({1}, {11})});
  ASSERT_TRUE(prepared.ok());
  std::thread later([&] { EXPECT_TRUE(w->Put({KvRows({1, 2}, {12, 20})}).ok()); });
  std::this_thread::sleep_for(50ms);
  w->Abort(*prepared, Status::IOError("the other shard failed"));
  later.join();
  EXPECT_EQ(KvMap(*w), (KvState{{1, 10}}));
  w.reset();
  EXPECT_EQ(KvMap(*t.OpenOrDie("s1")), (KvState{{1, 12}, {2, 20}}));
}

// force_seal_active with a part held in the active MemTable waits for it (new parts wait
// behind the seal), then seals everything written before the call.
TEST(ShardPrepare, AForcedSealWaitsForTheHeldPartAndNewPartsWaitForTheSeal) {
  TwoShards t;
  auto w = t.OpenOrDie("s1");
  auto h1 = w->Prepare({"tx-6", 2}, {}, {KvRows({1}, {1})});
  ASSERT_TRUE(h1.ok());
  std::atomic<bool> sealed_done{false};
  Result<std::optional<shard::SealedGeneration>> sealed = Status::Internal("not run");
  std::thread sealer([&] {
    sealed = w->force_seal_active();
    sealed_done = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(sealed_done.load());
  std::atomic<bool> h2_done{false};
  Result<shard::PreparedWrite> h2 = Status::Internal("not run");
  std::thread second([&] {
    h2 = w->Prepare({"tx-7", 2}, {}, {KvRows({2}, {2})});
    h2_done = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(h2_done.load());  // waits for the seal
  w->Publish(*h1);
  sealer.join();
  second.join();
  ASSERT_TRUE(sealed.ok() && sealed->has_value()) << sealed.status().ToString();
  EXPECT_EQ((*sealed)->rows, 1);
  ASSERT_TRUE(h2.ok());
  EXPECT_GT(h2->put.generation, (*sealed)->generation);
  ASSERT_TRUE(w->wait_for_generation((*sealed)->generation, In(10s)).ok());
  w->Publish(*h2);
  EXPECT_EQ(KvMap(*w), (KvState{{1, 1}, {2, 2}}));
}

// A review found: with durable_write=false the syncer zeroes every generation's `pending`,
// and a part counted there went to -1, so the generation never flushed.
TEST(ShardPrepare, NonDurableShardsFlushAfterParts) {
  TwoShards t;
  ShardWriterOptions o = t.Options("s1");
  o.durable_write = false;
  auto w = std::move(ShardWriter::Open(t.f.faults, kTable, "s1", KvSchema(), o)).value();
  std::atomic<bool> stop{false};
  std::thread puts([&] {
    for (int64_t i = 100; !stop.load(); ++i) ASSERT_TRUE(w->Put({KvRows({i}, {i})}).ok());
  });
  for (int i = 0; i < 30; ++i) {
    auto p = w->Prepare({"tx-nd-" + std::to_string(i), 2}, {}, {KvRows({i}, {i})});
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    w->Publish(*p);
  }
  stop = true;
  puts.join();
  auto sealed = w->force_seal_active();
  ASSERT_TRUE(sealed.ok() && sealed->has_value()) << sealed.status().ToString();
  ASSERT_TRUE(w->wait_for_generation((*sealed)->generation, In(10s)).ok());
  EXPECT_TRUE(w->Describe().frozen.empty());  // every sealed MemTable flushed
}

// ---- across shards ----

TEST(MultiShardWrite, CommitsInEveryShardAndSurvivesReopen) {
  TwoShards t;
  {
    auto a = t.OpenOrDie("s1");
    auto b = t.OpenOrDie("s2");
    auto r = WriteAllOrNothing(t.log, Parts(*a, {1, 2}, *b, {3}, 7), "req-1");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_FALSE(r->txn_id.empty());
    EXPECT_EQ(r->puts[0].num_rows, 2);
    EXPECT_EQ(r->puts[1].num_rows, 1);
    EXPECT_EQ(KvMap(*a), (KvState{{1, 7}, {2, 7}}));
    EXPECT_EQ(KvMap(*b), (KvState{{3, 7}}));
    auto rec = t.log.Find(r->txn_id);
    ASSERT_TRUE(rec.ok() && rec->has_value());
    EXPECT_EQ((*rec)->decision, TxnDecision::kCommitted);
    EXPECT_EQ((*rec)->parts, (std::vector<TxnPart>{{"s1", r->puts[0].wal_position},
                                                   {"s2", r->puts[1].wal_position}}));
    EXPECT_EQ((*rec)->request_id, "req-1");
    // One shard only: a plain write, no transaction.
    auto single = WriteAllOrNothing(t.log, Parts(*a, {4}, *b, {}, 8));
    ASSERT_TRUE(single.ok());
    EXPECT_TRUE(single->txn_id.empty());
    EXPECT_EQ(single->puts[1].num_rows, 0);
  }
  auto a = t.OpenOrDie("s1");
  auto b = t.OpenOrDie("s2");
  EXPECT_EQ(KvMap(*a), (KvState{{1, 7}, {2, 7}, {4, 8}}));
  EXPECT_EQ(KvMap(*b), (KvState{{3, 7}}));
}

TEST(MultiShardWrite, AFailedCommitLeavesTheRowsInNoShard) {
  TwoShards t;
  auto a = t.OpenOrDie("s1");
  auto b = t.OpenOrDie("s2");
  ASSERT_TRUE(WriteAllOrNothing(t.log, Parts(*a, {1}, *b, {2}, 1)).ok());
  io::PutFault fault;  // every record put fails: commit and abort both stay unknown
  fault.key_contains = "/_txn/";
  t.f.faults->AddFault(fault);
  auto r = WriteAllOrNothing(t.log, Parts(*a, {1, 3}, *b, {2, 4}, 2));
  EXPECT_EQ(r.status().code(), StatusCode::kIOError) << r.status().ToString();
  // Neither part was ever visible; both writers are poisoned.
  EXPECT_EQ(KvMap(*a), (KvState{{1, 1}}));
  EXPECT_EQ(KvMap(*b), (KvState{{2, 1}}));
  EXPECT_EQ(a->Put({KvRows({9}, {9})}).status().code(), StatusCode::kWriterPoisoned);
  EXPECT_EQ(b->Put({KvRows({9}, {9})}).status().code(), StatusCode::kWriterPoisoned);
  t.f.faults->ClearFaults();
  a.reset();
  b.reset();
  auto a2 = t.OpenOrDie("s1");
  auto b2 = t.OpenOrDie("s2");
  EXPECT_EQ(KvMap(*a2), (KvState{{1, 1}}));
  EXPECT_EQ(KvMap(*b2), (KvState{{2, 1}}));
  // The tables write again.
  ASSERT_TRUE(WriteAllOrNothing(t.log, Parts(*a2, {5}, *b2, {6}, 3)).ok());
  EXPECT_EQ(KvMap(*a2), (KvState{{1, 1}, {5, 3}}));
  EXPECT_EQ(KvMap(*b2), (KvState{{2, 1}, {6, 3}}));
}

TEST(MultiShardWrite, ACommitThatLandedDespiteAnErrorIsAcknowledged) {
  TwoShards t;
  auto a = t.OpenOrDie("s1");
  auto b = t.OpenOrDie("s2");
  io::PutFault fault;
  fault.key_contains = "/_txn/";
  fault.after_write = true;
  fault.times = 1;
  t.f.faults->AddFault(fault);
  auto r = WriteAllOrNothing(t.log, Parts(*a, {1}, *b, {2}, 5));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(KvMap(*a), (KvState{{1, 5}}));
  EXPECT_EQ(KvMap(*b), (KvState{{2, 5}}));
  EXPECT_TRUE(a->Put({KvRows({3}, {6})}).ok());  // not poisoned
}

TEST(MultiShardWrite, AnInvalidPartRefusesTheWriteWithNothingWrittenOrPoisoned) {
  TwoShards t;
  auto a = t.OpenOrDie("s1");
  auto b = t.OpenOrDie("s2");
  std::vector<ShardWrite> parts = Parts(*a, {1}, *b, {2}, 5);
  parts[1].user_rows.push_back(KvRows({3}, {std::nullopt}));
  auto bad = std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
          arrow::field("id", arrow::utf8(), false), arrow::field("v", arrow::int64(), true)}),
      1, std::vector<arrow::ArrayDataPtr>{arrow::MakeUtf8Array({"x"}), arrow::MakeInt64Array({1})});
  parts[1].user_rows.push_back(bad);
  const uint64_t entries = a->stats().wal_entries;
  auto r = WriteAllOrNothing(t.log, std::move(parts));
  EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
  EXPECT_EQ(a->stats().wal_entries, entries);
  EXPECT_TRUE(a->Put({KvRows({4}, {4})}).ok());  // not poisoned
  EXPECT_TRUE(b->Put({KvRows({5}, {5})}).ok());
}

TEST(MultiShardWrite, AFailedPartAbortsTheOthers) {
  TwoShards t;
  auto a = t.OpenOrDie("s1");
  auto b = t.OpenOrDie("s2");
  io::PutFault fault;  // s2's WAL entries fail
  fault.key_contains = "/_mem_wal/s2/wal/";
  t.f.faults->AddFault(fault);
  auto r = WriteAllOrNothing(t.log, Parts(*a, {1}, *b, {2}, 5));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(KvMap(*a), (KvState{}));
  EXPECT_EQ(KvMap(*b), (KvState{}));
  t.f.faults->ClearFaults();
  a.reset();
  b.reset();
  EXPECT_EQ(KvMap(*t.OpenOrDie("s1")), (KvState{}));
  EXPECT_EQ(KvMap(*t.OpenOrDie("s2")), (KvState{}));
}

TEST(MultiShardWrite, ACrashBeforeOrAfterTheCommitPointIsAllOrNothing) {
  TwoShards t;
  std::string undecided, committed;
  {
    auto a = t.OpenOrDie("s1");
    auto b = t.OpenOrDie("s2");
    // Prepared everywhere, then the process dies before deciding.
    auto pa = a->Prepare({"undecided", 2}, {}, {KvRows({1}, {1})});
    auto pb = b->Prepare({"undecided", 2}, {}, {KvRows({2}, {1})});
    ASSERT_TRUE(pa.ok() && pb.ok());
    // Prepared everywhere and committed, then the process dies before publishing.
    auto qa = a->Prepare({"committed", 2}, {}, {KvRows({3}, {2})});
    auto qb = b->Prepare({"committed", 2}, {}, {KvRows({4}, {2})});
    ASSERT_TRUE(qa.ok() && qb.ok());
    ASSERT_TRUE(t.log
                    .Decide({"committed",
                             TxnDecision::kCommitted,
                             {{"s1", qa->put.wal_position}, {"s2", qb->put.wal_position}},
                             0,
                             ""})
                    .ok());
    EXPECT_EQ(KvMap(*a), (KvState{}));
  }
  auto a = t.OpenOrDie("s1");
  auto b = t.OpenOrDie("s2");
  EXPECT_EQ(KvMap(*a), (KvState{{3, 2}}));
  EXPECT_EQ(KvMap(*b), (KvState{{4, 2}}));
  EXPECT_EQ((*t.log.Find("undecided"))->decision, TxnDecision::kAborted);
}

// ---- SIGKILL ----

ShardWriterOptions CrashOptions(TwoShards& t, const std::string& shard) {
  ShardWriterOptions o = t.Options(shard);
  o.max_memtable_rows = 40;  // seals and flushes race with the kill
  return o;
}

// Writes transaction i = key i with value i into both shards (s1 gets key i, s2 key i too),
// from two threads, and reports i on the pipe once acknowledged.
[[noreturn]] void ChildLoop(TwoShards& t, int fd, int64_t first) {
  auto a = ShardWriter::Open(t.f.local, kTable, "s1", KvSchema(), CrashOptions(t, "s1"));
  auto b = ShardWriter::Open(t.f.local, kTable, "s2", KvSchema(), CrashOptions(t, "s2"));
  if (!a.ok() || !b.ok()) _exit(2);
  TxnLog log(t.f.local, kTable);
  std::atomic<int64_t> next{first};
  auto loop = [&] {
    for (;;) {
      const int64_t i = next.fetch_add(1);
      auto r = WriteAllOrNothing(log, Parts(**a, {i}, **b, {i}, i));
      if (!r.ok()) {
        std::fprintf(stderr, "child: %s\n", r.status().ToString().c_str());
        _exit(4);
      }
      if (::write(fd, &i, sizeof(i)) != sizeof(i)) _exit(5);
    }
  };
  std::thread other(loop);
  loop();
  other.join();
  _exit(6);
}

TEST(MultiShardWrite, AcknowledgedWritesSurviveSigkillInEveryShardAndNoneIsHalfDone) {
  TwoShards t;
  std::mt19937 rng(4242);
  int64_t next = 0, total_acked = 0;
  const int cycles = 12;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      ChildLoop(t, fds[1], next);
    }
    ::close(fds[1]);
    std::set<int64_t> acked;
    int64_t v;
    ASSERT_EQ(::read(fds[0], &v, sizeof(v)), static_cast<ssize_t>(sizeof(v)));
    acked.insert(v);
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 150));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
    while (::read(fds[0], &v, sizeof(v)) == sizeof(v)) acked.insert(v);
    ::close(fds[0]);
    total_acked += static_cast<int64_t>(acked.size());

    auto a = t.Open("s1");
    auto b = t.Open("s2");
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    const KvState in_a = KvMap(**a), in_b = KvMap(**b);  // KvMap fails on a duplicate key
    for (int64_t i : acked) {
      ASSERT_EQ(in_a.count(i), 1u) << "acknowledged write " << i << " lost in s1, cycle " << cycle;
      ASSERT_EQ(in_b.count(i), 1u) << "acknowledged write " << i << " lost in s2, cycle " << cycle;
    }
    ASSERT_EQ(in_a.size(), in_b.size()) << "cycle " << cycle;
    for (const auto& [k, value] : in_a) {
      ASSERT_EQ(in_b.count(k), 1u) << "write " << k << " is in s1 only, cycle " << cycle;
      EXPECT_EQ(value, std::optional<int64_t>(k));
    }
    if (!in_a.empty()) next = std::max(next, in_a.rbegin()->first + 1);
    next += 1000;
  }
  EXPECT_GT(total_acked, cycles);
  std::printf("[figures] %d SIGKILL cycles, %lld acknowledged two-shard writes\n", cycles,
              static_cast<long long>(total_acked));
}

}  // namespace
}  // namespace strata::table
