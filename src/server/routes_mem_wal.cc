// Strata extensions of PROTOCOL.md §0: flush/ (DESIGN.md §4 rule 8, bounded by the seal
// contract), compact/ (DESIGN.md §7: one bounded compaction of SSTables into the base) and
// mem_wal/describe/ (shard state: epoch, generations, WAL positions, MemTables, SSTables,
// MemTable indexes; the base table).
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "io/mapped_file_cache.h"
#include "server/http_errors.h"
#include "server/routes.h"
#include "table/shard_router.h"

namespace strata::server {

namespace {

constexpr int64_t kDefaultFlushTimeoutMs = 60000;
constexpr int64_t kMaxFlushTimeoutMs = 3600 * 1000;

nlohmann::json OptionalGeneration(const std::optional<uint64_t>& g) {
  return g ? nlohmann::json(*g) : nlohmann::json(nullptr);
}

// The optional body {"timeout_ms": N} of flush/ and compact/ (default 60000).
Result<int64_t> TimeoutMs(const TableRequest& req, const std::string& action) {
  if (req.body_view().empty()) return kDefaultFlushTimeoutMs;
  nlohmann::json body = nlohmann::json::parse(req.body_view(), nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return Status::Invalid(action + ": the body must be a JSON object");
  }
  if (!body.contains("timeout_ms") || body["timeout_ms"].is_null()) return kDefaultFlushTimeoutMs;
  const auto& t = body["timeout_ms"];
  if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > kMaxFlushTimeoutMs) {
    return Status::Invalid(action + ": timeout_ms must be an integer in [0, " +
                           std::to_string(kMaxFlushTimeoutMs) + "]");
  }
  return t.get<int64_t>();
}

}  // namespace

void HandleFlush(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  const auto start = std::chrono::steady_clock::now();
  auto timeout_ms = TimeoutMs(req, "flush");
  if (!timeout_ms.ok()) return SendError(res, timeout_ms.status());
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  auto flushed = (*t)->Flush(start + std::chrono::milliseconds(*timeout_ms));
  if (!flushed.ok()) return SendError(res, flushed.status().WithContext("flush"));
  nlohmann::json shards = nlohmann::json::array();
  for (const auto& s : *flushed) {
    shards.push_back({{"shard_id", s.shard_id},
                      {"sealed_generation", OptionalGeneration(s.sealed_generation)},
                      {"waited_generation", OptionalGeneration(s.waited_generation)},
                      {"current_generation", s.current_generation}});
  }
  const int64_t elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  nlohmann::json out = {{"shards", shards}, {"elapsed_ms", elapsed}};
  SendJson(res, out.dump());
}

// Body {"timeout_ms"} optional (as flush/): no new SSTable is taken into the compaction once it
// passed. Answer {"compacted_generations", "sstables_remaining", "base_version",
// "rows_compacted", "rows_written", "bytes_written", "elapsed_ms"}.
void HandleCompact(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  const auto start = std::chrono::steady_clock::now();
  auto timeout_ms = TimeoutMs(req, "compact");
  if (!timeout_ms.ok()) return SendError(res, timeout_ms.status());
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  auto done = (*t)->Compact(start + std::chrono::milliseconds(*timeout_ms));
  if (!done.ok()) {
    if (done.status().IsAlreadyExists()) {
      return SendError(res, 409, "compaction_running",
                       "compact: " + done.status().message() + "; retry when it finishes");
    }
    return SendError(res, done.status().WithContext("compact"));
  }
  const int64_t elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  nlohmann::json out = {{"compacted_generations", done->compacted_generations},
                        {"sstables_remaining", done->sstables_remaining},
                        {"base_version", done->base_compactions},
                        {"rows_compacted", done->rows_in},
                        {"rows_written", done->rows_written},
                        {"bytes_written", done->bytes_written},
                        {"elapsed_ms", elapsed}};
  SendJson(res, out.dump());
}

void HandleMemWalDescribe(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  nlohmann::json shards = nlohmann::json::array();
  const table::WriterRecoveryInfo recovery = (*t)->RecoveryInfo();
  int64_t memtable_bytes = 0;  // the "memory" object (the same figures as /metrics)
  // The LSM write spec (null when none is set); each shard lists its values under it.
  const std::optional<table::LsmWriteSpec> spec = (*t)->GetLsmWriteSpec();
  nlohmann::json spec_json = nullptr;
  if (spec) spec_json = nlohmann::json::parse(table::LsmWriteSpecToJson(*spec));
  int64_t bucket = 0;  // shards are listed in bucket order (docs/SHARDING.md)
  // Identity sharding: each shard's value (null for the spare shard of a table without rows).
  const std::vector<std::string> values = (*t)->IdentityValues();
  arrow::DataTypePtr value_type;
  if (spec && spec->mode == table::ShardingMode::kIdentity) {
    const auto schema = (*t)->schema();
    if (const int i = schema->GetFieldIndex(spec->column); i >= 0)
      value_type = schema->field(i)->type;
  }
  for (const auto& d : (*t)->DescribeShards()) {
    nlohmann::json shard_spec = nullptr;
    if (spec) {
      shard_spec = {{"mode", table::ShardingModeName(spec->mode)},
                    {"maintained_indexes", spec->maintained_indexes},
                    {"writer_config_defaults", spec_json["writer_config_defaults"]}};
      if (spec->mode == table::ShardingMode::kBucket) {
        shard_spec["column"] = spec->column;
        shard_spec["num_buckets"] = spec->num_buckets;
        shard_spec["bucket"] = bucket;
      } else if (spec->mode == table::ShardingMode::kIdentity) {
        shard_spec["column"] = spec->column;
        shard_spec["value"] = nullptr;
        shard_spec["spare"] = true;
        const size_t i = static_cast<size_t>(bucket);
        if (i < values.size() && !values[i].empty() && value_type != nullptr) {
          auto v = table::IdentityValueJson(*value_type, values[i]);
          shard_spec["value"] = v.ok() ? nlohmann::json::parse(*v) : nlohmann::json(nullptr);
          shard_spec["spare"] = false;
        }
      }
    }
    ++bucket;
    const shard::WriterSettings& w = d.settings;
    nlohmann::json frozen = nlohmann::json::array();
    memtable_bytes += d.active.bytes;
    for (const auto& f : d.frozen) {
      frozen.push_back({{"generation", f.generation}, {"rows", f.rows}, {"bytes", f.bytes}});
      memtable_bytes += f.bytes;
    }
    nlohmann::json sstables = nlohmann::json::array();
    for (const auto& s : d.sstables) {
      sstables.push_back({{"generation", s.generation}, {"path", s.path}, {"rows", s.rows}});
    }
    nlohmann::json indexes = nlohmann::json::array();
    for (const auto& i : d.indexes) {
      indexes.push_back({{"kind", i.kind},
                         {"column", i.column},
                         {"name", i.name},
                         {"rows_indexed", i.rows_indexed}});
    }
    shards.push_back({{"shard_id", d.shard_id},
                      {"writer_epoch", d.writer_epoch},
                      {"current_generation", d.current_generation},
                      {"replay_after_wal_entry_position", d.replay_after_wal_entry_position},
                      {"wal_entry_position_last_seen", d.wal_entry_position_last_seen},
                      {"state", d.state},
                      {"state_reason", d.state_reason},
                      {"state_age_ms", d.state_age_ms},
                      {"recovery",
                       {{"attempts", recovery.attempts},
                        {"recoveries", recovery.recoveries},
                        {"last_error", recovery.last_error},
                        {"next_attempt_ms", recovery.next_attempt_ms},
                        {"last_recovery_ms", recovery.last_recovery_ms}}},
                      {"active",
                       {{"generation", d.active.generation},
                        {"rows", d.active.rows},
                        {"bytes", d.active.bytes},
                        {"age_ms", d.active.age_ms}}},
                      {"frozen", frozen},
                      {"sstables", sstables},
                      {"indexes", indexes},
                      {"spec", shard_spec},
                      {"writer_settings",
                       {{"durable_write", w.durable_write},
                        {"max_memtable_rows", w.max_memtable_rows},
                        {"max_memtable_bytes", w.max_memtable_bytes},
                        {"max_memtable_age_ms", w.max_memtable_age_ms},
                        {"max_unflushed_bytes", w.max_unflushed_bytes},
                        {"max_frozen_memtables", w.max_frozen_memtables},
                        {"write_stall_timeout_ms", w.write_stall_timeout_ms}}}});
  }
  nlohmann::json out = {{"shards", shards}, {"lsm_write_spec", spec_json}};
  if (auto disk = ctx.catalog->FreeSpace()) {
    out["disk"] = {{"free_bytes", disk->free_bytes},      {"total_bytes", disk->total_bytes},
                   {"min_free_bytes", disk->floor_bytes}, {"below_floor", disk->below},
                   {"state_age_ms", disk->since_ms},      {"writes_refused", disk->refusals}};
  }
  // Memory of the base's indexes as built (index/{name}/stats/ base_index.memory_bytes).
  std::map<std::string, int64_t> base_index_memory;
  std::map<std::string, std::string> base_index_type;  // what is built: "IVF_PQ", "HNSW", ...
  int64_t base_index_bytes = 0;
  for (const table::IndexStatus& i : (*t)->ListIndexes()) {
    if (!i.base) continue;
    base_index_memory[i.spec.name] = i.base->memory_bytes;
    base_index_type[i.spec.name] = i.base->type;
    base_index_bytes += i.base->memory_bytes;
  }
  const io::MappedFileCache::Stats cache = io::MappedFileCache::Global().stats();
  out["memory"] = {{"memtable_bytes", memtable_bytes},
                   {"base_index_bytes", base_index_bytes},
                   {"cache_limit_bytes", cache.limit_bytes},
                   {"cache_resident_bytes", cache.resident_bytes}};
  if (auto b = (*t)->DescribeBase()) {
    nlohmann::json compacted = nlohmann::json::object();
    for (const auto& [shard, g] : b->compacted_generation) compacted[shard] = g;
    nlohmann::json indexes = nlohmann::json::array();
    for (const auto& i : b->indexes) {
      auto mem = base_index_memory.find(i.spec.name);
      auto type = base_index_type.find(i.spec.name);
      // kind: the definition's (HNSW for every vector index); type: what the base built
      // (IVF_PQ, ...; null while it has none).
      indexes.push_back({{"kind", index::IndexKindName(i.spec.kind)},
                         {"type", type == base_index_type.end() ? nlohmann::json(nullptr)
                                                                : nlohmann::json(type->second)},
                         {"column", i.spec.column},
                         {"name", i.spec.name},
                         {"rows_indexed", i.rows_indexed},
                         {"memory_bytes", mem == base_index_memory.end() ? 0 : mem->second}});
    }
    out["base"] = {{"version", b->version},     {"rows", b->rows},
                   {"live_rows", b->live_rows}, {"fragments", b->fragments},
                   {"bytes", b->bytes},         {"compacted_generation", compacted},
                   {"indexes", indexes}};
  }
  SendJson(res, out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace strata::server
