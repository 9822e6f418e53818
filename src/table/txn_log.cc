#include "table/txn_log.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "common/wall_clock.h"

namespace strata::table {

using nlohmann::json;

namespace {

constexpr char kSuffix[] = ".json";

const char* DecisionName(TxnDecision d) {
  return d == TxnDecision::kCommitted ? "committed" : "aborted";
}

}  // namespace

std::string EncodeTxnRecord(const TxnRecord& r) {
  json parts = json::array();
  for (const auto& p : r.parts) {
    parts.push_back({{"shard_id", p.shard_id}, {"wal_position", p.wal_position}});
  }
  json j = {{"txn_id", r.txn_id},
            {"decision", DecisionName(r.decision)},
            {"decided_at_micros", r.decided_at_micros},
            {"parts", std::move(parts)}};
  if (!r.request_id.empty()) j["request_id"] = r.request_id;
  // A request id is a client's header: invalid UTF-8 is replaced, never thrown.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<TxnRecord> DecodeTxnRecord(const std::string& bytes) {
  json j = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::Corruption("transaction record is not a JSON object");
  TxnRecord r;
  auto id = j.find("txn_id");
  if (id == j.end() || !id->is_string() || id->get<std::string>().empty()) {
    return Status::Corruption("transaction record has no 'txn_id' string");
  }
  r.txn_id = id->get<std::string>();
  const std::string where = "transaction record '" + r.txn_id + "'";
  auto decision = j.find("decision");
  if (decision == j.end() || !decision->is_string()) {
    return Status::Corruption(where + " has no 'decision' string");
  }
  if (*decision == "committed") {
    r.decision = TxnDecision::kCommitted;
  } else if (*decision == "aborted") {
    r.decision = TxnDecision::kAborted;
  } else {
    return Status::Corruption(where + ": decision '" + decision->get<std::string>() +
                              "' is neither 'committed' nor 'aborted'");
  }
  auto at = j.find("decided_at_micros");
  if (at != j.end()) {
    if (!at->is_number_integer()) {
      return Status::Corruption(where + ": 'decided_at_micros' is not an integer");
    }
    r.decided_at_micros = at->get<int64_t>();
  }
  auto req = j.find("request_id");
  if (req != j.end() && req->is_string()) r.request_id = req->get<std::string>();
  auto parts = j.find("parts");
  if (parts == j.end() || !parts->is_array()) {
    return Status::Corruption(where + " has no 'parts' array");
  }
  for (const auto& p : *parts) {
    auto shard = p.is_object() ? p.find("shard_id") : p.end();
    auto pos = p.is_object() ? p.find("wal_position") : p.end();
    if (!p.is_object() || shard == p.end() || !shard->is_string() || pos == p.end() ||
        !pos->is_number_unsigned()) {
      return Status::Corruption(where +
                                ": a part is not {\"shard_id\": string, \"wal_position\": n}");
    }
    r.parts.push_back({shard->get<std::string>(), pos->get<uint64_t>()});
  }
  if (r.decision == TxnDecision::kCommitted && r.parts.empty()) {
    return Status::Corruption(where + " is committed with no parts");
  }
  return r;
}

TxnLog::TxnLog(std::shared_ptr<io::ObjectStore> store, std::string table_prefix)
    : store_(std::move(store)), prefix_(std::move(table_prefix)) {}

std::string TxnLog::Dir() const { return prefix_ + "/_txn/"; }

std::string TxnLog::Key(const std::string& txn_id) const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = Dir();
  out.reserve(out.size() + txn_id.size() * 2 + sizeof(kSuffix));
  for (unsigned char c : txn_id) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out + kSuffix;
}

Result<std::optional<TxnRecord>> TxnLog::Find(const std::string& txn_id) {
  auto got = store_->Get(Key(txn_id));
  if (!got.ok()) {
    if (got.status().IsNotFound()) return std::optional<TxnRecord>();
    return got.status().WithContext("transaction record of '" + txn_id + "'");
  }
  STRATA_ASSIGN_OR_RETURN(TxnRecord r, DecodeTxnRecord(*got));
  if (r.txn_id != txn_id) {
    return Status::Corruption("transaction record at '" + Key(txn_id) + "' names txn '" + r.txn_id +
                              "', not '" + txn_id + "'");
  }
  return std::optional<TxnRecord>(std::move(r));
}

Result<TxnRecord> TxnLog::Decide(const TxnRecord& record) {
  if (record.txn_id.empty() || record.txn_id.size() > kMaxTxnIdBytes) {
    return Status::Invalid("transaction id must be 1 to " + std::to_string(kMaxTxnIdBytes) +
                           " bytes, got " + std::to_string(record.txn_id.size()));
  }
  if (record.decision == TxnDecision::kCommitted && record.parts.empty()) {
    return Status::Invalid("transaction '" + record.txn_id + "': a commit must list its parts");
  }
  TxnRecord stored = record;
  if (stored.decided_at_micros == 0) stored.decided_at_micros = WallClockMicros();
  const Status put = store_->PutIfAbsent(Key(stored.txn_id), EncodeTxnRecord(stored));
  if (put.ok()) return stored;
  // Taken (another decider was first) or failed (it may still have landed): read it back.
  auto found = Find(stored.txn_id);
  if (found.ok() && found->has_value()) return std::move(**found);
  if (!found.ok() && found.status().code() == StatusCode::kCorruption) return found.status();
  if (put.IsAlreadyExists()) {
    return Status::IOError("transaction record of '" + stored.txn_id +
                           "' exists but could not be read back: " +
                           (found.ok() ? std::string("not found") : found.status().ToString()));
  }
  return put.WithContext(std::string("deciding transaction '") + stored.txn_id + "' " +
                         DecisionName(stored.decision));
}

Result<bool> TxnLog::PartCommitted(const std::string& txn_id, const std::string& shard_id,
                                   uint64_t wal_position) {
  STRATA_ASSIGN_OR_RETURN(auto found, Find(txn_id));
  TxnRecord r;
  if (found.has_value()) {
    r = std::move(*found);
  } else {
    // No decision: the writer died before deciding. Abort it, so a late commit cannot land.
    TxnRecord abort;
    abort.txn_id = txn_id;
    abort.decision = TxnDecision::kAborted;
    abort.parts.push_back({shard_id, wal_position});
    STRATA_ASSIGN_OR_RETURN(r, Decide(abort));
  }
  if (r.decision != TxnDecision::kCommitted) return false;
  for (const auto& p : r.parts) {
    if (p.shard_id == shard_id && p.wal_position == wal_position) return true;
  }
  spdlog::warn(
      "transaction '{}' committed without a part at position {} of shard '{}': that "
      "entry does not count",
      txn_id, wal_position, shard_id);
  return false;
}

Result<int64_t> TxnLog::Prune(
    const std::function<std::optional<uint64_t>(const std::string& shard_id)>& replay_after,
    int64_t now_micros, int64_t aborted_retention_micros) {
  STRATA_ASSIGN_OR_RETURN(auto listed, store_->List(Dir()));
  int64_t removed = 0;
  for (const auto& meta : listed) {
    auto got = store_->Get(meta.key);
    if (!got.ok()) {
      if (got.status().IsNotFound()) continue;  // removed meanwhile
      return got.status();
    }
    auto r = DecodeTxnRecord(*got);
    if (!r.ok()) {
      spdlog::warn("transaction record '{}' kept: {}", meta.key, r.status().ToString());
      continue;
    }
    bool remove = false;
    if (r->decision == TxnDecision::kCommitted) {
      remove = true;
      for (const auto& p : r->parts) {
        const std::optional<uint64_t> after = replay_after(p.shard_id);
        if (!after.has_value() || p.wal_position > *after) remove = false;
      }
    } else {
      remove =
          r->decided_at_micros > 0 && now_micros - r->decided_at_micros > aborted_retention_micros;
    }
    if (!remove) continue;
    Status st = store_->Remove(meta.key);
    if (!st.ok() && !st.IsNotFound()) return st;
    ++removed;
  }
  return removed;
}

}  // namespace strata::table
