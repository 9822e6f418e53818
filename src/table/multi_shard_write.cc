#include "table/multi_shard_write.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "format/ids.h"

namespace strata::table {
namespace {

int64_t RowsOf(const ShardWrite& p) {
  int64_t n = 0;
  for (const auto& b : p.storage_rows) n += b->num_rows();
  for (const auto& b : p.user_rows) n += b->num_rows();
  return n;
}

// At most this many threads prepare parts at once (the caller's thread included).
constexpr size_t kMaxPrepareThreads = 8;

}  // namespace

Result<MultiShardWriteResult> WriteAllOrNothing(TxnLog& log, std::vector<ShardWrite> parts,
                                                const std::string& request_id,
                                                std::shared_mutex* publish_mu,
                                                std::chrono::milliseconds ready_timeout) {
  MultiShardWriteResult out;
  out.puts.resize(parts.size());
  std::vector<size_t> live;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].writer == nullptr)
      return Status::Internal("multi-shard write: a part has no writer");
    if (RowsOf(parts[i]) > 0) live.push_back(i);
  }
  if (live.empty()) return out;
  if (live.size() == 1) {
    const ShardWrite& p = parts[live[0]];
    STRATA_ASSIGN_OR_RETURN(out.puts[live[0]], p.writer->Apply(p.storage_rows, p.user_rows));
    return out;
  }

  // Every part is validated before any is prepared: a bad row refuses the write with nothing
  // written, instead of poisoning the shards whose parts were prepared first.
  for (size_t k : live) {
    STRATA_RETURN_IF_ERROR(parts[k].writer->CheckApply(parts[k].storage_rows, parts[k].user_rows));
  }
  // 1. Prepare every part, in parallel.
  wal::TxnTag txn{format::RandomUuid(), live.size()};
  out.txn_id = txn.id;
  std::vector<Result<shard::PreparedWrite>> prepared(live.size(), Status::Internal("not run"));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k = next.fetch_add(1); k < live.size(); k = next.fetch_add(1)) {
      const ShardWrite& p = parts[live[k]];
      prepared[k] = p.writer->Prepare(txn, p.storage_rows, p.user_rows);
    }
  };
  std::vector<std::thread> helpers;
  const size_t threads = std::min(live.size(), kMaxPrepareThreads);
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (auto& t : helpers) t.join();

  auto abort_all = [&](const Status& why) {
    for (size_t k = 0; k < live.size(); ++k) {
      if (prepared[k].ok()) parts[live[k]].writer->Abort(*prepared[k], why);
    }
  };
  TxnRecord record;
  record.txn_id = txn.id;
  record.request_id = request_id;
  for (size_t k = 0; k < live.size(); ++k) {
    if (!prepared[k].ok()) continue;
    record.parts.push_back({parts[live[k]].writer->shard_id(), prepared[k]->put.wal_position});
  }
  // With a publish lock: every part ready to show at once before the write commits (a part
  // that cannot be is a failed part: the write aborts).
  const shard::Deadline ready_deadline = shard::Clock::now() + ready_timeout;
  for (size_t k = 0; publish_mu != nullptr && k < live.size(); ++k) {
    if (!prepared[k].ok()) continue;
    Status ready = parts[live[k]].writer->AwaitPublishable(*prepared[k], ready_deadline);
    if (!ready.ok()) {
      parts[live[k]].writer->Abort(*prepared[k], ready);
      prepared[k] = ready;
    }
  }
  for (size_t k = 0; k < live.size(); ++k) {
    if (prepared[k].ok()) continue;
    const Status failed = prepared[k].status();
    record.decision = TxnDecision::kAborted;
    auto decided = log.Decide(record);
    if (!decided.ok()) {
      spdlog::warn("multi-shard write '{}': storing its abort failed ({}); a replay decides it",
                   txn.id, decided.status().ToString());
    }
    abort_all(failed);
    return failed;
  }

  // 2. The commit point.
  record.decision = TxnDecision::kCommitted;
  auto decided = log.Decide(record);
  if (!decided.ok()) {
    // Unknown outcome: try to settle it as aborted (a commit that landed after all wins).
    TxnRecord abort = record;
    abort.decision = TxnDecision::kAborted;
    auto settled = log.Decide(abort);
    if (!settled.ok() || settled->decision != TxnDecision::kCommitted) {
      abort_all(decided.status());
      return decided.status();
    }
    decided = std::move(settled);
  }
  if (decided->decision != TxnDecision::kCommitted) {
    const Status fenced = Status::Fenced("multi-shard write '" + txn.id +
                                         "' was decided aborted by another writer before it "
                                         "could commit (its shards were reopened elsewhere)");
    abort_all(fenced);
    return fenced;
  }
  // 3. Visible everywhere, then acknowledged.
  std::unique_lock<std::shared_mutex> publishing;
  if (publish_mu != nullptr) publishing = std::unique_lock<std::shared_mutex>(*publish_mu);
  for (size_t k = 0; k < live.size(); ++k) {
    parts[live[k]].writer->Publish(*prepared[k]);
    out.puts[live[k]] = prepared[k]->put;
  }
  return out;
}

}  // namespace strata::table
