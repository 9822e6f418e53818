// The transaction log of a table's multi-shard writes (docs/SHARDING.md "All-or-nothing
// multi-shard writes"). A write that touches several shards writes one WAL entry per shard,
// tagged with the write's unique id (wal/wal_entry.h TxnTag). Whether those entries count is
// decided by ONE object per write, "{table}/_txn/{hex(txn_id)}.json", created with
// put-if-absent: the first decision stored wins and never changes.
//  - "committed", listing every part {shard_id, wal_position}: the parts count. The writer
//    stores it once every part is durable and before it acknowledges the write.
//  - "aborted": the parts never count. The writer stores it when a part failed or the commit
//    put's outcome is unknown; a replay that meets a part of a write with no decision (its
//    writer died before deciding) stores it too, so a late commit can no longer land.
// So after any crash an acknowledged write is in every shard it touched (its record says
// committed, every replay inserts its parts) and an unacknowledged one is in every shard or in
// none, never in some.
//
// Record JSON: {"txn_id": "...", "decision": "committed" | "aborted", "decided_at_micros": n,
// "request_id": "..." (informative), "parts": [{"shard_id": "...", "wal_position": n}, ...]}.
//
// Pruning (Prune): a committed record is removed once every part is at or below its shard's
// replay_after_wal_entry_position (no replay reads those entries again). An aborted record is
// removed once it is older than a retention (default 1 hour): a replay meeting one of its
// parts later just decides "aborted" again; only a commit put delayed past the retention could
// then land, which writers rule out by deadlines far shorter.
//
// Thread-safety: every method may be called from many threads at once (the store is).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "io/object_store.h"

namespace strata::table {

enum class TxnDecision { kCommitted, kAborted };

struct TxnPart {
  std::string shard_id;
  uint64_t wal_position = 0;
  bool operator==(const TxnPart& o) const {
    return shard_id == o.shard_id && wal_position == o.wal_position;
  }
};

struct TxnRecord {
  std::string txn_id;
  TxnDecision decision = TxnDecision::kAborted;
  /// Committed: every part. Aborted: the parts its decider knew (maybe none).
  std::vector<TxnPart> parts;
  int64_t decided_at_micros = 0;
  std::string request_id;  // the client's x-request-id, when there was one (informative)
};

/// JSON form of `r` (see the file comment).
std::string EncodeTxnRecord(const TxnRecord& r);
/// Parses a record. Errors: Corruption naming what is wrong.
Result<TxnRecord> DecodeTxnRecord(const std::string& bytes);

class TxnLog {
 public:
  static constexpr size_t kMaxTxnIdBytes = 256;

  /// The log of the table at `table_prefix` ("{database_dir}/{table_dir}").
  TxnLog(std::shared_ptr<io::ObjectStore> store, std::string table_prefix);

  /// "{table}/_txn/": the log's folder.
  std::string Dir() const;
  /// The record's key for `txn_id`: the id's bytes in lowercase hex, so any id is a key.
  std::string Key(const std::string& txn_id) const;

  /// Stores `record` as the decision of its write unless one is stored already, and returns
  /// the decision in force (the other one when another decider got there first). A failed put
  /// is read back: a record found is the answer. Errors: Invalid (empty id or longer than
  /// kMaxTxnIdBytes; a committed record without parts); IOError when neither the put nor the
  /// read-back tells (the decision is then unknown: a replay decides it later); Corruption
  /// (a stored record that does not parse).
  Result<TxnRecord> Decide(const TxnRecord& record);

  /// The stored decision of `txn_id`, or nullopt. Errors: IOError; Corruption.
  Result<std::optional<TxnRecord>> Find(const std::string& txn_id);

  /// Replay's question (shard::ShardWriterOptions::txn_committed): whether the part of
  /// `txn_id` in `shard_id` at `wal_position` counts: true when the write is committed with
  /// exactly that part. A write with no decision is decided "aborted" first (Decide).
  /// Errors: as Decide.
  Result<bool> PartCommitted(const std::string& txn_id, const std::string& shard_id,
                             uint64_t wal_position);

  /// Removes the records no replay can need (see the file comment): committed ones whose every
  /// part is at or below `replay_after(shard_id)` (nullopt: the shard is unknown here; the
  /// record is kept), aborted ones decided more than `aborted_retention_micros` before
  /// `now_micros`. Returns how many it removed. Errors: IOError from list or remove (records
  /// removed before it stay removed); Corruption is not an error here: an unreadable record is
  /// logged and kept.
  Result<int64_t> Prune(
      const std::function<std::optional<uint64_t>(const std::string& shard_id)>& replay_after,
      int64_t now_micros, int64_t aborted_retention_micros = 3600ll * 1000 * 1000);

 private:
  const std::shared_ptr<io::ObjectStore> store_;
  const std::string prefix_;
};

}  // namespace strata::table
