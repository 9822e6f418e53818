#include "table/local_table.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

#include "common/wall_clock.h"
#include "format/ids.h"
#include "format/table_manifest.h"
#include "index/column_index.h"
#include "memtable/hidden_columns.h"
#include "shard/batch_conformance.h"
#include "table/lsm_write_spec.h"
#include "table/primary_key.h"

namespace strata::table {

Result<std::shared_ptr<LocalTable>> LocalTable::Open(std::shared_ptr<io::ObjectStore> store,
                                                     std::string prefix, std::string name,
                                                     format::TableManifest manifest,
                                                     shard::ShardWriterOptions options,
                                                     base::CompactionOptions compaction) {
  options.primary_key.assign(manifest.primary_key().begin(), manifest.primary_key().end());
  options.indexes.clear();
  for (const auto& j : manifest.index_specs_json()) {
    auto spec = index::IndexSpecFromJson(j);
    if (!spec.ok()) return spec.status().WithContext("table '" + name + "' manifest");
    options.indexes.push_back(std::move(*spec));
  }
  std::shared_ptr<LocalTable> t(
      new LocalTable(std::move(store), std::move(prefix), std::move(name), options, compaction));
  STRATA_ASSIGN_OR_RETURN(t->schema_, format::DecodeSchema(manifest.arrow_schema()));
  // The base and every shard (the LSM write spec's writer options, if any).
  const std::vector<std::string> ids(manifest.shard_ids().begin(), manifest.shard_ids().end());
  auto tier = t->OpenTier(manifest, t->schema_, ids);
  if (!tier.ok()) return tier.status().WithContext("table '" + t->name_ + "'");
  t->shards_ = std::move(tier->shards);
  t->base_ = std::move(tier->base);
  t->manifest_ = std::move(manifest);
  t->StartBaseLocked();
  return t;
}

Result<std::shared_ptr<LocalTable>> LocalTable::Create(
    std::shared_ptr<io::ObjectStore> store, std::string prefix, std::string name,
    arrow::SchemaPtr schema, const std::vector<arrow::RecordBatchPtr>& batches,
    shard::ShardWriterOptions options, base::CompactionOptions compaction,
    const std::optional<LsmWriteSpec>& lsm_spec) {
  if (schema == nullptr) return Status::Invalid("table schema is missing");
  // The key the schema's field metadata declares (table/primary_key.h); a caller's
  // options.primary_key is used only for a schema that declares none.
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> declared, PrimaryKeyOf(*schema));
  if (!declared.empty()) {
    if (!options.primary_key.empty() && options.primary_key != declared) {
      return Status::Invalid("table '" + name +
                             "': the schema's field metadata declares a primary key other than "
                             "the one requested");
    }
    options.primary_key = std::move(declared);
  }
  STRATA_ASSIGN_OR_RETURN(auto existing, format::LoadLatestTableManifest(*store, prefix));
  if (existing) return Status::AlreadyExists("table '" + name + "' already exists");
  // Objects already under the prefix are NOT removed: they may be another server's create of
  // the same table in flight on a shared bucket (removing them lost that server's
  // acknowledged rows, or its committed first manifest, in a break test). What a crashed
  // create left is garbage that never collides with this create's keys (a fresh shard id,
  // manifests put-if-absent) and GC removes it once the table exists (base/gc.h rules 2, 5).

  STRATA_ASSIGN_OR_RETURN(std::string schema_bytes, format::EncodeSchema(*schema));
  std::shared_ptr<LocalTable> t(
      new LocalTable(std::move(store), std::move(prefix), std::move(name), options, compaction));
  format::TableManifest m;
  for (const auto& k : options.primary_key) m.add_primary_key(k);
  // The LSM write spec is in the first manifest: its writer settings apply from the first row.
  if (lsm_spec) *m.mutable_lsm_write_spec() = LsmWriteSpecToProto(*lsm_spec);
  const int shards = lsm_spec ? static_cast<int>(std::max<int64_t>(1, lsm_spec->NumShards())) : 1;
  STRATA_ASSIGN_OR_RETURN(Tier fresh, t->WriteFreshTier(m, schema, shards, batches));
  m.set_version(1);
  m.set_arrow_schema(std::move(schema_bytes));
  for (const auto& w : fresh.shards) m.add_shard_ids(w->shard_id());
  for (const auto& v : fresh.values) m.add_shard_values(v);
  m.set_created_at_micros(WallClockMicros());
  m.set_base_version(1);  // a new table reports version 1 (as Lance tables do)
  m.set_table_name(t->name_);
  Status committed = format::CommitTableManifest(*t->store_, t->prefix_, m);
  if (!committed.ok()) {
    t->DiscardTier(fresh, "cleanup after a failed create");
    if (committed.IsAlreadyExists()) {
      return Status::AlreadyExists("table '" + t->name_ + "' already exists");
    }
    return committed;
  }
  t->schema_ = std::move(schema);
  t->shards_ = std::move(fresh.shards);
  t->base_ = std::move(fresh.base);
  t->manifest_ = std::move(m);
  t->StartBaseLocked();
  return t;
}

Status LocalTable::CheckNotDropped() const {
  if (dropped_) {
    return Status::NotFound("table '" + name_ + "' not found (" +
                            (renamed_ ? "renamed" : "dropped") + ")");
  }
  return Status::OK();
}

arrow::SchemaPtr LocalTable::schema() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return schema_;
}

uint64_t LocalTable::version() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return ReportedVersionLocked();
}

std::string LocalTable::shard_id() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return shards_[0]->shard_id();
}

Status LocalTable::Throttle(int64_t rows) {
  std::shared_ptr<base::BaseTable> b;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    // A poisoned or fenced writer answers with its error now, not after the write stop's
    // timeout as 503 backpressure (its frozen MemTables cannot flush, so a stop would last).
    STRATA_RETURN_IF_ERROR(HealthLocked());
    b = base_;
  }
  if (b == nullptr) return Status::OK();
  return b->throttle().Admit(
      rows,
      [this] {
        std::shared_lock<std::shared_mutex> lock(mu_);
        base::L0Backlog sum;
        if (dropped_) return sum;
        for (const auto& w : shards_) {
          const auto s = w->backlog();
          sum.sstables += s.sstables;
          sum.frozen += s.frozen;
          sum.active_rows += s.active_rows;
          sum.memtable_rows += s.memtable_rows;
        }
        return sum;
      },
      shard::Clock::now() + options_.write_stall_timeout);
}

namespace {
int64_t RowsOf(const std::vector<arrow::RecordBatchPtr>& batches) {
  int64_t n = 0;
  for (const auto& b : batches) n += b == nullptr ? 0 : b->num_rows();
  return n;
}
}  // namespace

Result<uint64_t> LocalTable::Insert(const std::vector<arrow::RecordBatchPtr>& batches) {
  STRATA_RETURN_IF_ERROR(Throttle(RowsOf(batches)));
  std::shared_lock<std::shared_mutex> write_lock(write_mu_);
  return WriteAddingShards(WriteKind::kPut, {}, batches);
}

Result<uint64_t> LocalTable::Overwrite(arrow::SchemaPtr schema,
                                       const std::vector<arrow::RecordBatchPtr>& batches) {
  if (schema == nullptr) return Status::Invalid("table schema is missing");
  std::shared_lock<std::shared_mutex> write_lock(write_mu_);
  std::unique_lock<std::shared_mutex> lock(mu_);
  STRATA_RETURN_IF_ERROR(CheckNotDropped());
  STRATA_ASSIGN_OR_RETURN(std::string schema_bytes, format::EncodeSchema(*schema));
  // The key of the NEW schema (its field metadata; none -> hidden _rowid); no index
  // definitions and no LSM write spec (the schema and key may change): one fresh shard.
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> key, PrimaryKeyOf(*schema));
  const uint64_t old_version = VersionLocked();
  format::TableManifest m = manifest_;
  m.set_version(manifest_.version() + 1);
  m.set_arrow_schema(std::move(schema_bytes));
  m.clear_primary_key();
  for (const auto& k : key) m.add_primary_key(k);
  m.clear_index_specs_json();
  m.clear_lsm_write_spec();  // like the index definitions: the schema and key may change
  m.clear_shard_values();
  m.clear_base();  // the fresh shard holds every row
  STRATA_ASSIGN_OR_RETURN(Tier fresh, WriteFreshTier(m, schema, 1, batches));
  m.clear_shard_ids();
  m.add_shard_ids(fresh.shards[0]->shard_id());
  m.set_created_at_micros(WallClockMicros());
  m.set_base_version(old_version + 1);
  Status committed = CommitNextManifest(m, "overwrite of table '" + name_ + "'");
  if (!committed.ok()) {
    DiscardTier(fresh, "cleanup after a failed overwrite");
    return committed;
  }
  for (auto& w : shards_) w->close();
  // The old base's thread may be waiting for mu_ (CommitBase): stop it once mu_ is released,
  // and keep the old shard writers alive until then.
  Tier old{std::move(base_), std::move(shards_), {}};
  manifest_ = std::move(m);
  schema_ = std::move(schema);
  shards_ = std::move(fresh.shards);
  base_ = std::move(fresh.base);
  ForgetView();
  StartBaseLocked();
  NoteCommit();
  const uint64_t result = VersionLocked();
  lock.unlock();
  DiscardTier(old, "overwrite");
  return result;
}

TableSnapshot LocalTable::Snapshot() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  TableSnapshot out;
  out.schema = schema_;
  out.key_columns = shards_[0]->key_columns();
  Result<std::shared_ptr<const shard::ShardSnapshot>> snap =
      std::shared_ptr<const shard::ShardSnapshot>();
  if (!SharedBaseLocked()) {
    snap = shards_[0]->Snapshot();
  } else if (auto v = ShardedViewLocked(); v.ok()) {
    snap = (*v)->merged;
    out.shard_views = (*v)->by_shard;
    out.num_shards = static_cast<int64_t>(shards_.size());
    std::lock_guard<std::mutex> cache(view_mu_);
    if (sharding_version_ != manifest_.version() || sharding_ == nullptr) {
      auto spec = LsmWriteSpecFromProto(manifest_.lsm_write_spec());
      sharding_ = spec.ok() ? std::make_shared<const LsmWriteSpec>(std::move(*spec)) : nullptr;
      shard_values_ = nullptr;
      if (manifest_.shard_values_size() > 0) {
        shard_values_ = std::make_shared<const std::vector<std::string>>(
            manifest_.shard_values().begin(), manifest_.shard_values().end());
      }
      sharding_version_ = manifest_.version();
    }
    out.sharding = sharding_;
    out.shard_values = shard_values_;
  } else {
    snap = v.status();
  }
  if (!snap.ok()) {
    // Answer with no rows rather than wrong ones, and say so in the log.
    spdlog::error("table '{}': snapshot failed: {}", name_, snap.status().ToString());
    out.version = ReportedVersionLocked();
    return out;
  }
  const shard::ShardSnapshot& s = **snap;
  out.version = manifest_.base_version() + s.last_wal_position;
  out.num_rows = s.num_rows;
  out.shard = *snap;
  return out;
}

Result<uint64_t> LocalTable::Delete(const std::vector<arrow::RecordBatchPtr>& keys) {
  STRATA_RETURN_IF_ERROR(Throttle(RowsOf(keys)));
  std::shared_lock<std::shared_mutex> write_lock(write_mu_);
  return WriteAddingShards(WriteKind::kDelete, {}, keys);
}

Result<uint64_t> LocalTable::ReadModifyWrite(
    const std::function<Result<Mutation>(const TableSnapshot&)>& fn) {
  std::unique_lock<std::shared_mutex> write_lock(write_mu_);
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
  }
  // Every write acknowledged before this point is visible (puts return once durable and
  // visible), and none can start until write_lock is released.
  const TableSnapshot snapshot = Snapshot();
  if (snapshot.shard == nullptr) {
    return Status::Internal("table '" + name_ + "': snapshot failed; read-modify-write refused");
  }
  STRATA_ASSIGN_OR_RETURN(Mutation mutation, fn(snapshot));
  // Throttled holding write_mu_ (other writers wait behind it anyway) but not mu_, which the
  // compaction that frees the backlog needs exclusively.
  if (!mutation.empty()) {
    STRATA_RETURN_IF_ERROR(Throttle(RowsOf(mutation.storage_rows) + RowsOf(mutation.inserts)));
  }
  if (mutation.empty()) {
    std::shared_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    return ReportedVersionLocked();
  }
  return WriteAddingShards(WriteKind::kApply, mutation.storage_rows, mutation.inserts);
}

Result<std::vector<ShardFlushResult>> LocalTable::Flush(shard::Deadline deadline) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  STRATA_RETURN_IF_ERROR(CheckNotDropped());
  // Each shard seals first, then each waits for the generation IT sealed (the seed contract
  // per shard): the waits overlap instead of adding up.
  std::vector<ShardFlushResult> out(shards_.size());
  for (size_t i = 0; i < shards_.size(); ++i) {
    shard::ShardWriter& w = *shards_[i];
    ShardFlushResult& r = out[i];
    r.shard_id = w.shard_id();
    STRATA_ASSIGN_OR_RETURN(auto sealed, w.force_seal_active());
    if (sealed) {
      r.sealed_generation = sealed->generation;
      r.waited_generation = sealed->generation;
    } else {
      r.waited_generation = w.newest_unpublished_generation();
    }
  }
  for (size_t i = 0; i < shards_.size(); ++i) {
    ShardFlushResult& r = out[i];
    if (r.waited_generation) {
      STRATA_RETURN_IF_ERROR(shards_[i]->wait_for_generation(*r.waited_generation, deadline));
    }
    r.current_generation = shards_[i]->Describe().current_generation;
  }
  return out;
}

std::vector<shard::ShardDescription> LocalTable::DescribeShards() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<shard::ShardDescription> out;
  for (const auto& w : shards_) out.push_back(w->Describe());
  return out;
}

Status LocalTable::Drop() {
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (;;) {
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    std::shared_ptr<base::BaseTable> base = base_;
    lock.unlock();
    base->Stop();  // without mu_: its thread may be waiting for it
    lock.lock();
    if (base_ == base) break;  // else an Overwrite / RewriteColumns replaced it meanwhile
  }
  dropped_ = true;
  ForgetView();
  for (auto& w : shards_) w->close();
  STRATA_ASSIGN_OR_RETURN(auto versions, store_->List(prefix_ + "/_versions/"));
  std::vector<std::pair<uint64_t, std::string>> ordered;
  for (const auto& o : versions) {
    std::string name = o.key.substr(o.key.rfind('/') + 1);
    ordered.emplace_back(std::strtoull(name.c_str(), nullptr, 10), o.key);
  }
  std::sort(ordered.begin(), ordered.end());
  for (const auto& v : ordered) STRATA_RETURN_IF_ERROR(store_->Remove(v.second));
  STRATA_ASSIGN_OR_RETURN(auto rest, store_->List(prefix_ + "/"));
  for (const auto& o : rest) STRATA_RETURN_IF_ERROR(store_->Remove(o.key));
  return Status::OK();
}

LocalTable::~LocalTable() {
  std::shared_ptr<base::BaseTable> base;
  bool dropped = false;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    base = base_;
    dropped = dropped_;
  }
  if (base && !dropped) {
    base->CloseWithCheckpoints();  // the next open loads the base indexes instead of rebuilding
  } else if (base) {
    base->Stop();
  }
}

Result<std::shared_ptr<base::BaseTable>> LocalTable::OpenBase(
    const format::BaseTable& stored, const arrow::SchemaPtr& schema, const std::string& shard_id,
    shard::ShardWriterOptions* options) const {
  STRATA_ASSIGN_OR_RETURN(memtable::StorageLayout layout,
                          memtable::MakeStorageLayout(schema, options->primary_key));
  STRATA_ASSIGN_OR_RETURN(auto base,
                          base::BaseTable::Open(store_, prefix_, stored, layout.storage_schema,
                                                layout.key_columns, options->indexes, compaction_));
  AttachBase(base, options);
  auto it = stored.compacted_generation().find(shard_id);
  options->compacted_generation = it == stored.compacted_generation().end() ? 0 : it->second;
  return base;
}

void LocalTable::StartBaseLocked() {
  base::BaseTable* b = base_.get();
  b->StartMaintenance(
      ShardListLocked(),
      [this, b](const format::BaseTable& next, const std::function<Status()>& install) {
        return CommitBase(b, next, install);
      },
      [this] { return GcOnce(); });
}

Result<base::GcStats> LocalTable::GcOnce() {
  base::GcInput in;
  in.table_prefix = prefix_;
  std::map<std::string, uint64_t> replay_after;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    in.current = manifest_;
    for (const auto& w : shards_) {
      in.shards.push_back({w->committed_manifest()});
      replay_after[w->shard_id()] = w->committed_manifest().replay_after_wal_entry_position();
    }
  }
  in.now_micros = WallClockMicros();
  STRATA_ASSIGN_OR_RETURN(base::GcStats stats,
                          base::CollectGarbage(*store_, in, compaction_.gc_options));
  // Decisions of multi-shard writes no replay can read again (txn_log.h Prune).
  auto pruned = txn_log_->Prune(
      [&](const std::string& id) -> std::optional<uint64_t> {
        auto it = replay_after.find(id);
        if (it == replay_after.end()) return std::nullopt;
        return it->second;
      },
      in.now_micros);
  if (!pruned.ok()) {
    spdlog::warn("table '{}': transaction records not pruned: {}", name_,
                 pruned.status().ToString());
  }
  return stats;
}

Result<base::GcStats> LocalTable::CollectGarbage() {
  std::shared_ptr<base::BaseTable> b;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    b = base_;
  }
  return b->RunGc([this] { return GcOnce(); });
}

Status LocalTable::CommitNextManifest(const format::TableManifest& m,
                                      const std::string& what) const {
  // Another server that opened the table claimed its shards but, writing rows only, made no
  // manifest version: without this check a server it fenced could still commit a manifest (a
  // spec, an index, an overwrite) over rows it cannot see, and a change of the shard count
  // would remove the shards holding them.
  for (const auto& w : shards_) {
    Status owner = w->CheckOwner();
    if (!owner.ok()) return owner.WithContext(what + " not applied");
  }
  Status st = format::CommitTableManifest(*store_, prefix_, m);
  if (st.IsAlreadyExists()) {
    return Status::Fenced("another server committed manifest version " +
                          std::to_string(m.version()) + " of table '" + name_ + "' first; " + what +
                          " was not applied");
  }
  return st.ok() ? st : st.WithContext(what);
}

Status LocalTable::CommitBase(const base::BaseTable* b, const format::BaseTable& next,
                              const std::function<Status()>& install) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  STRATA_RETURN_IF_ERROR(CheckNotDropped());
  if (base_.get() != b) {
    return Status::Invalid("table '" + name_ + "' was overwritten while compacting");
  }
  for (const auto& w : shards_) STRATA_RETURN_IF_ERROR(w->CheckOwner());
  format::TableManifest m = manifest_;
  m.set_version(manifest_.version() + 1);
  m.set_created_at_micros(WallClockMicros());
  *m.mutable_base() = next;
  Status st = format::CommitTableManifest(*store_, prefix_, m);
  if (st.IsAlreadyExists()) {
    return Status::Fenced("another server committed manifest version " +
                          std::to_string(m.version()) + " of table '" + name_ +
                          "' first; compaction was not applied");
  }
  if (!st.ok()) {
    // The put may have landed: read it back before calling it failed.
    auto back = store_->Get(format::TableManifestKey(prefix_, m.version()));
    format::TableManifest stored;
    if (back.ok() && stored.ParseFromString(*back) &&
        stored.created_at_micros() == m.created_at_micros() &&
        stored.base().compactions() == next.compactions()) {
      st = Status::OK();
    } else if (back.ok() || !back.status().IsNotFound()) {
      return Status::Internal("table '" + name_ +
                              "': manifest commit outcome unknown: " + st.ToString());
    }
  }
  if (!st.ok()) return st.WithContext("compaction of table '" + name_ + "'");
  manifest_ = std::move(m);
  Status installed = install();
  if (!installed.ok()) {
    spdlog::error("table '{}': compaction committed but not installed ({}); reopen the table",
                  name_, installed.ToString());
    return Status::Internal("compaction committed but not installed: " + installed.ToString());
  }
  return Status::OK();
}

Result<base::CompactionResult> LocalTable::Compact(shard::Deadline deadline) {
  std::shared_ptr<base::BaseTable> b;
  base::ShardList writers;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    b = base_;
    writers = ShardListLocked();
  }
  // `writers` outlive this call: a table that replaces its shards keeps the old writers until
  // the old base is stopped, and Stop waits for a running compaction (its work lock).
  return b->Compact(
      writers,
      [this, raw = b.get()](const format::BaseTable& next, const std::function<Status()>& install) {
        return CommitBase(raw, next, install);
      },
      deadline);
}

Result<base::RewriteResult> LocalTable::RewriteBase(shard::Deadline deadline) {
  std::shared_ptr<base::BaseTable> b;
  base::ShardList writers;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    b = base_;
    writers = ShardListLocked();
  }
  // `writers` outlive this call as for Compact (Stop waits for the work lock).
  return b->Rewrite(
      writers,
      [this, raw = b.get()](const format::BaseTable& next, const std::function<Status()>& install) {
        return CommitBase(raw, next, install);
      },
      deadline);
}

std::optional<BaseDescription> LocalTable::DescribeBase() const {
  std::shared_ptr<base::BaseTable> b;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (dropped_) return std::nullopt;
    b = base_;
  }
  const format::BaseTable st = b->state();
  BaseDescription d;
  d.stats = b->stats();
  d.version = st.compactions();
  d.rows = d.stats.rows;
  d.live_rows = d.stats.live_rows;
  d.fragments = d.stats.fragments;
  d.bytes = d.stats.bytes;
  for (const auto& [shard, g] : st.compacted_generation()) d.compacted_generation[shard] = g;
  d.indexes = b->Indexes();
  return d;
}

void LocalTable::AwaitIndexLoads(const std::string& column) {
  if (compaction_.index_load_wait.count() <= 0) return;
  std::shared_ptr<base::BaseTable> b;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (dropped_) return;
    b = base_;
  }
  if (b != nullptr) {
    b->AwaitCheckpointLoads(std::chrono::steady_clock::now() + compaction_.index_load_wait, column);
  }
}

}  // namespace strata::table
