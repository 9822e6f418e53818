// LocalTable's shards (local_table.h, docs/SHARDING.md): opening the base and N shard writers
// over it, routing a write's rows to the shards of their keys (all or nothing across shards,
// multi_shard_write.h), and the table's view over every shard.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "common/wall_clock.h"
#include "format/ids.h"
#include "shard/batch_conformance.h"
#include "table/local_table.h"
#include "table/lsm_write_spec.h"
#include "table/multi_shard_write.h"
#include "table/shard_router.h"

namespace strata::table {
namespace {

int64_t RowsOf(const std::vector<arrow::RecordBatchPtr>& batches) {
  int64_t n = 0;
  for (const auto& b : batches) n += b == nullptr ? 0 : b->num_rows();
  return n;
}

void CloseAll(std::vector<std::unique_ptr<shard::ShardWriter>>& shards) {
  for (auto& w : shards) {
    if (w) w->close();
  }
}

// The longest identity value a shard takes, encoded (format/key_encoding.h: a tag byte, then
// the bytes and a 2-byte terminator for strings). Each manifest lists every shard's value, and
// each new value commits a manifest: 1,024 values of 1 KiB keep one under about 1 MiB.
constexpr size_t kMaxIdentityValueBytes = 1024;

}  // namespace

void LocalTable::AttachBase(const std::shared_ptr<base::BaseTable>& base,
                            shard::ShardWriterOptions* options) {
  options->base = base->source();
  options->on_publish = [weak = std::weak_ptr<base::BaseTable>(base)] {
    if (auto b = weak.lock()) b->Notify();
  };
}

shard::ShardWriterOptions LocalTable::LaneOptions(shard::ShardWriterOptions o,
                                                  const format::TableManifest& m,
                                                  const std::string& id, size_t lane,
                                                  bool shared) const {
  auto it = m.base().compacted_generation().find(id);
  o.compacted_generation = it == m.base().compacted_generation().end() ? 0 : it->second;
  o.base_lane = static_cast<int>(lane);
  o.base_in_view = !shared;
  // A WAL entry of a multi-shard write counts only if its write committed (txn_log.h).
  o.txn_committed = [log = txn_log_, id](const std::string& txn, uint64_t position) {
    return log->PartCommitted(txn, id, position);
  };
  return o;
}

bool LocalTable::SharedBaseLocked() const {
  return shards_.size() > 1 || HasIdentitySpec(manifest_);
}

Result<LocalTable::Tier> LocalTable::OpenTier(const format::TableManifest& m,
                                              const arrow::SchemaPtr& schema,
                                              const std::vector<std::string>& shard_ids) const {
  if (shard_ids.empty() || shard_ids.size() > static_cast<size_t>(shard::Liveness::kMaxLanes)) {
    return Status::Corruption("table '" + name_ + "' lists " + std::to_string(shard_ids.size()) +
                              " shards; a table has 1 to " +
                              std::to_string(shard::Liveness::kMaxLanes));
  }
  STRATA_ASSIGN_OR_RETURN(shard::ShardWriterOptions opts, ShardOptionsFor(m));
  if (HasIdentitySpec(m) && m.shard_values_size() != static_cast<int>(shard_ids.size())) {
    return Status::Corruption("table '" + name_ + "' lists " + std::to_string(shard_ids.size()) +
                              " shards but " + std::to_string(m.shard_values_size()) +
                              " identity shard values");
  }
  Tier tier;
  STRATA_ASSIGN_OR_RETURN(tier.base, OpenBase(m.base(), schema, shard_ids[0], &opts));
  // Identity sharding adds shards later: its base is shared from the first one.
  const bool shared = shard_ids.size() > 1 || HasIdentitySpec(m);
  if (shared) tier.base->MarkShared();
  tier.values.assign(m.shard_values().begin(), m.shard_values().end());
  for (size_t i = 0; i < shard_ids.size(); ++i) {
    const shard::ShardWriterOptions o = LaneOptions(opts, m, shard_ids[i], i, shared);
    auto w = shard::ShardWriter::Open(store_, prefix_, shard_ids[i], schema, o);
    if (!w.ok()) {
      CloseAll(tier.shards);
      tier.base->Stop();
      return w.status().WithContext("shard '" + shard_ids[i] + "'");
    }
    tier.shards.push_back(std::move(*w));
  }
  return tier;
}

Result<LocalTable::Tier> LocalTable::WriteFreshTier(
    const format::TableManifest& m, const arrow::SchemaPtr& schema, int count,
    const std::vector<arrow::RecordBatchPtr>& batches) const {
  STRATA_RETURN_IF_ERROR(shard::ValidateTableSchema(*schema));
  // Validate before creating anything, so bad input leaves no files behind.
  STRATA_RETURN_IF_ERROR(shard::ConformBatches(schema, batches).status());
  std::vector<std::vector<arrow::RecordBatchPtr>> parts;
  std::vector<std::string> values;  // identity: each shard's value
  if (HasIdentitySpec(m)) {
    STRATA_ASSIGN_OR_RETURN(LsmWriteSpec spec, LsmWriteSpecFromProto(m.lsm_write_spec()));
    if (RowsOf(batches) > 0) {
      STRATA_ASSIGN_OR_RETURN(auto routed, RouteRows(spec, batches));
      for (auto& p : routed) {
        values.push_back(std::move(p.identity_key));
        parts.push_back(std::move(p.batches));
      }
    }
    for (const auto& v : values) {
      if (v.size() > kMaxIdentityValueBytes) {
        return Status::Invalid("identity sharding: a value of column '" + spec.column + "' is " +
                               std::to_string(v.size()) + " bytes encoded; at most " +
                               std::to_string(kMaxIdentityValueBytes) +
                               " (every table manifest holds each shard's value)");
      }
    }
    if (values.size() > static_cast<size_t>(shard::Liveness::kMaxLanes)) {
      return Status::Invalid("identity sharding: the rows hold " + std::to_string(values.size()) +
                             " values of column '" + spec.column + "'; a table holds at most " +
                             std::to_string(shard::Liveness::kMaxLanes) + " (one shard each)");
    }
    if (values.empty()) {
      values.emplace_back();  // the spare shard: the first value takes it
      parts.emplace_back();
    }
    count = static_cast<int>(values.size());
  } else {
    parts.resize(static_cast<size_t>(count));
    if (count == 1) {
      parts[0] = batches;
    } else if (RowsOf(batches) > 0) {
      STRATA_ASSIGN_OR_RETURN(LsmWriteSpec spec, LsmWriteSpecFromProto(m.lsm_write_spec()));
      STRATA_ASSIGN_OR_RETURN(auto routed, RouteRows(spec, batches));
      for (auto& p : routed) parts[static_cast<size_t>(p.bucket)] = std::move(p.batches);
    }
  }
  std::vector<std::string> ids;
  for (int i = 0; i < count; ++i) ids.push_back(format::RandomUuid());
  format::TableManifest fresh = m;
  fresh.clear_base();
  fresh.clear_shard_values();
  for (const auto& v : values) fresh.add_shard_values(v);
  STRATA_ASSIGN_OR_RETURN(Tier tier, OpenTier(fresh, schema, ids));
  // The table is not committed yet: the parts need no transaction (a failure removes them all).
  Status st;
  for (size_t i = 0; i < tier.shards.size() && st.ok(); ++i) {
    if (RowsOf(parts[i]) > 0) st = tier.shards[i]->Put(parts[i]).status();
  }
  if (!st.ok()) {
    DiscardTier(tier, "cleanup of a failed write into fresh shards");
    return st;
  }
  return tier;
}

void LocalTable::DiscardTier(Tier& tier, const std::string& what) const {
  if (tier.base) tier.base->Stop();
  std::vector<std::string> ids;
  for (auto& w : tier.shards) {
    ids.push_back(w->shard_id());
    w->close();
  }
  tier.shards.clear();
  for (const auto& id : ids) {
    Status removed = shard::ShardWriter::RemoveShardFiles(*store_, prefix_, id);
    if (!removed.ok()) {
      spdlog::warn("table '{}': {}: shard '{}' not fully removed: {}", name_, what, id,
                   removed.ToString());
    }
  }
}

uint64_t LocalTable::VersionLocked() const {
  uint64_t v = manifest_.base_version();
  for (const auto& w : shards_) v += w->last_wal_position();
  return v;
}

uint64_t LocalTable::VisibleVersionLocked() const {
  uint64_t v = manifest_.base_version();
  for (const auto& w : shards_) {
    auto s = w->Snapshot();
    v += s.ok() ? (*s)->last_wal_position : 0;
  }
  return v;
}

uint64_t LocalTable::ReportedVersionLocked() const {
  return SharedBaseLocked() ? VisibleVersionLocked() : VersionLocked();
}

base::ShardList LocalTable::ShardListLocked() const {
  base::ShardList out;
  for (const auto& w : shards_) out.push_back(w.get());
  return out;
}

Status LocalTable::HealthLocked() const {
  for (const auto& w : shards_) STRATA_RETURN_IF_ERROR(w->health());
  return Status::OK();
}

std::vector<std::string> LocalTable::shard_ids() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& w : shards_) out.push_back(w->shard_id());
  return out;
}

Result<uint64_t> LocalTable::WriteLocked(WriteKind kind,
                                         const std::vector<arrow::RecordBatchPtr>& storage_rows,
                                         const std::vector<arrow::RecordBatchPtr>& user_rows,
                                         std::vector<std::string>* missing) {
  shard::PutResult put;
  if (!SharedBaseLocked()) {
    shard::ShardWriter& w = *shards_[0];
    Result<shard::PutResult> r = kind == WriteKind::kPut      ? w.Put(user_rows)
                                 : kind == WriteKind::kDelete ? w.Delete(user_rows)
                                                              : w.Apply(storage_rows, user_rows);
    if (!r.ok()) return r.status();
    put = *r;
    if (put.wal_position > 0) NoteCommit();
    return manifest_.base_version() +
           (put.wal_position > 0 ? put.wal_position : w.last_wal_position());
  }
  // Several shards: each row to the shard of its key (bucket i = shards_[i]; identity: the
  // shard holding its value, manifest_.shard_values[i]).
  STRATA_ASSIGN_OR_RETURN(LsmWriteSpec spec, LsmWriteSpecFromProto(manifest_.lsm_write_spec()));
  const bool identity = spec.mode == ShardingMode::kIdentity;
  std::vector<ShardWrite> parts(shards_.size());
  for (size_t i = 0; i < shards_.size(); ++i) parts[i].writer = shards_[i].get();
  std::set<std::string> unknown;  // identity values without a shard
  auto route = [&](const std::vector<arrow::RecordBatchPtr>& rows,
                   std::vector<arrow::RecordBatchPtr> ShardWrite::*into) -> Status {
    if (RowsOf(rows) == 0) return Status::OK();
    STRATA_ASSIGN_OR_RETURN(auto routed, RouteRows(spec, rows));
    for (auto& p : routed) {
      if (identity) {
        const auto& values = manifest_.shard_values();
        const auto it = std::find(values.begin(), values.end(), p.identity_key);
        if (it == values.end()) {
          // A delete's key of a value no shard holds has no row to delete.
          if (kind != WriteKind::kDelete) unknown.insert(p.identity_key);
          continue;
        }
        p.bucket = it - values.begin();
      }
      if (p.bucket < 0 || p.bucket >= static_cast<int64_t>(parts.size())) {
        return Status::Internal("bucket " + std::to_string(p.bucket) + " of " +
                                std::to_string(parts.size()) + " shards");
      }
      auto& dst = parts[static_cast<size_t>(p.bucket)].*into;
      dst.insert(dst.end(), p.batches.begin(), p.batches.end());
    }
    return Status::OK();
  };
  if (kind == WriteKind::kDelete) {
    // Keys -> each shard's tombstone rows (validated there: key columns, nulls).
    STRATA_RETURN_IF_ERROR(route(user_rows, &ShardWrite::user_rows));
    for (auto& p : parts) {
      if (p.user_rows.empty()) continue;
      STRATA_ASSIGN_OR_RETURN(p.storage_rows, p.writer->TombstoneRows(p.user_rows));
      p.user_rows.clear();
    }
  } else {
    STRATA_RETURN_IF_ERROR(route(storage_rows, &ShardWrite::storage_rows));
    STRATA_RETURN_IF_ERROR(route(user_rows, &ShardWrite::user_rows));
  }
  if (!unknown.empty()) {
    // Nothing written: the caller adds the shards and writes again. The rows are checked
    // first, so a write that will be refused adds no shard (a break test's null key left four
    // shards behind a 400).
    if (kind != WriteKind::kDelete) {
      STRATA_RETURN_IF_ERROR(shards_[0]->CheckApply(storage_rows, user_rows));
    }
    missing->assign(unknown.begin(), unknown.end());
    return VisibleVersionLocked();
  }
  size_t touched = 0;
  for (const auto& p : parts) touched += RowsOf(p.storage_rows) + RowsOf(p.user_rows) > 0 ? 1 : 0;
  if (touched <= 1) {
    STRATA_ASSIGN_OR_RETURN(auto r, WriteAllOrNothing(*txn_log_, std::move(parts), "", &publish_mu_,
                                                      options_.write_stall_timeout));
    for (const auto& p : r.puts) {
      if (p.wal_position > 0) NoteCommit();
    }
    return VisibleVersionLocked();
  }
  // Each write's rows are checked here, before it joins a group: one client's bad rows must
  // refuse its own write only (the merged transaction checks the merged parts again). The
  // write as sent is checked (the check depends on the table's layout, not the shard), so an
  // error names a row by its position in the write, not in one shard's part.
  if (kind == WriteKind::kDelete) {
    for (const auto& p : parts) {
      if (RowsOf(p.storage_rows) == 0) continue;
      STRATA_RETURN_IF_ERROR(p.writer->CheckApply(p.storage_rows, p.user_rows));
    }
  } else {
    STRATA_RETURN_IF_ERROR(shards_[0]->CheckApply(storage_rows, user_rows));
  }
  STRATA_RETURN_IF_ERROR(txn_group_.Write(
      std::move(parts),
      [this](std::vector<ShardWrite> merged) -> Status {
        return WriteAllOrNothing(*txn_log_, std::move(merged), "", &publish_mu_,
                                 options_.write_stall_timeout)
            .status();
      },
      "table '" + name_ + "': a write across " + std::to_string(touched) + " shards",
      options_.write_stall_timeout));
  NoteCommit();
  return VisibleVersionLocked();
}

Result<uint64_t> LocalTable::WriteAddingShards(
    WriteKind kind, const std::vector<arrow::RecordBatchPtr>& storage_rows,
    const std::vector<arrow::RecordBatchPtr>& user_rows) {
  // Each round adds the shards the last one missed; only a spec change or an overwrite
  // between rounds (both replace the shards) makes another round find values missing.
  for (int round = 0;; ++round) {
    std::vector<std::string> missing;
    {
      std::shared_lock<std::shared_mutex> lock(mu_);
      STRATA_RETURN_IF_ERROR(CheckNotDropped());
      STRATA_ASSIGN_OR_RETURN(uint64_t v, WriteLocked(kind, storage_rows, user_rows, &missing));
      if (missing.empty()) return v;
    }
    if (round == 3) {
      return Status::Backpressure("table '" + name_ +
                                  "': its shards kept changing while a write added shards for new "
                                  "values; nothing was written, retry the write");
    }
    std::unique_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    STRATA_RETURN_IF_ERROR(AddIdentityShardsLocked(missing));
  }
}

Status LocalTable::AddIdentityShardsLocked(const std::vector<std::string>& values) {
  if (!HasIdentitySpec(manifest_))
    return Status::OK();  // the spec changed: the caller routes again
  std::vector<std::string> need;
  for (const auto& v : values) {
    if (std::find(manifest_.shard_values().begin(), manifest_.shard_values().end(), v) ==
        manifest_.shard_values().end()) {
      need.push_back(v);
    }
  }
  if (need.empty()) return Status::OK();
  for (const auto& v : need) {
    // Every manifest holds every shard's value: a long value would make each one large.
    if (v.size() > kMaxIdentityValueBytes) {
      return Status::Invalid("table '" + name_ + "': a value of identity shard column '" +
                             manifest_.lsm_write_spec().column() + "' is " +
                             std::to_string(v.size()) + " bytes encoded; at most " +
                             std::to_string(kMaxIdentityValueBytes) +
                             " (every table manifest holds each shard's value); nothing was "
                             "written");
    }
  }
  format::TableManifest m = manifest_;
  m.set_version(manifest_.version() + 1);
  m.set_created_at_micros(WallClockMicros());
  size_t at = 0;
  // The spare shard (a table that held no value yet) takes the first value.
  for (int i = 0; i < m.shard_values_size() && at < need.size(); ++i) {
    if (m.shard_values(i).empty()) m.set_shard_values(i, need[at++]);
  }
  const size_t lanes = static_cast<size_t>(m.shard_ids_size()) + (need.size() - at);
  if (lanes > static_cast<size_t>(shard::Liveness::kMaxLanes)) {
    return Status::Invalid("table '" + name_ + "': identity sharding on column '" +
                           m.lsm_write_spec().column() + "' would need " + std::to_string(lanes) +
                           " shards (one per value); a table holds at "
                           "most " +
                           std::to_string(shard::Liveness::kMaxLanes) + "; nothing was written");
  }
  std::vector<std::unique_ptr<shard::ShardWriter>> added;
  auto discard = [&](const std::string& what) {
    Tier t;
    t.shards = std::move(added);
    DiscardTier(t, what);
  };
  if (at < need.size()) {
    STRATA_ASSIGN_OR_RETURN(shard::ShardWriterOptions opts, ShardOptionsFor(manifest_));
    AttachBase(base_, &opts);
    for (; at < need.size(); ++at) {
      const std::string id = format::RandomUuid();
      const size_t lane = static_cast<size_t>(m.shard_ids_size());
      auto w = shard::ShardWriter::Open(store_, prefix_, id, schema_,
                                        LaneOptions(opts, manifest_, id, lane, true));
      if (!w.ok()) {
        discard("cleanup after a failed shard creation");
        return w.status().WithContext("table '" + name_ + "': new identity shard");
      }
      added.push_back(std::move(*w));
      m.add_shard_ids(id);
      m.add_shard_values(need[at]);
    }
  }
  Status committed = CommitNextManifest(m, "new identity shards of table '" + name_ + "'");
  if (!committed.ok()) {
    if (committed.code() == StatusCode::kInternal) {
      // The commit's outcome is unknown: a manifest may name the new shards, so their files
      // stay (they hold no row; GC removes them once no manifest names them).
      for (auto& w : added) w->close();
    } else {
      discard("cleanup after a failed commit of new shards");
    }
    return committed;
  }
  for (auto& w : added) shards_.push_back(std::move(w));
  manifest_ = std::move(m);
  base_->SetShards(ShardListLocked());
  ForgetView();
  NoteCommit();
  return Status::OK();
}

std::vector<std::string> LocalTable::IdentityValues() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (dropped_ || !HasIdentitySpec(manifest_)) return {};
  return {manifest_.shard_values().begin(), manifest_.shard_values().end()};
}

Result<std::shared_ptr<const shard::ShardSnapshot>> LocalTable::SnapshotLocked() const {
  if (!SharedBaseLocked()) return shards_[0]->Snapshot();
  STRATA_ASSIGN_OR_RETURN(auto v, ShardedViewLocked());
  return v->merged;
}

namespace {

// The base indexes a view of `st` takes (BaseSource::View: those covering every row).
std::vector<std::shared_ptr<index::ColumnIndex>> CoveringIndexes(
    const shard::BaseSource& base, const shard::BaseSource::State& st) {
  auto all = base.indexes();
  std::erase_if(all, [&](const auto& idx) { return idx->rows_indexed() < st.rows; });
  return all;
}

// Whether two base states are the same one (every field a view reads).
bool SameBaseState(const shard::BaseSource::State& a, const shard::BaseSource::State& b) {
  return a.rows == b.rows && a.num_batches == b.num_batches && a.epoch == b.epoch &&
         a.fragments == b.fragments && a.carried == b.carried &&
         a.carried_folded == b.carried_folded && a.batches == b.batches && a.starts == b.starts &&
         a.live == b.live;
}

}  // namespace

Result<std::shared_ptr<const LocalTable::ShardedView>> LocalTable::ShardedViewLocked() const {
  // A multi-shard write publishes its parts under publish_mu_: this view holds all of it or
  // none. Compactions install under mu_ exclusively, which the caller holds shared.
  auto made = std::make_shared<ShardedView>();
  ShardedView& out = *made;
  std::shared_lock<std::shared_mutex> pub(publish_mu_);
  const shard::BaseSource& base = *base_->source();
  out.base = base.CurrentState();
  for (const auto& w : shards_) {
    STRATA_ASSIGN_OR_RETURN(auto s, w->Snapshot());
    out.parts.push_back(std::move(s));
  }
  pub.unlock();
  // The same shard views, base state and base indexes build the same view: reuse the last
  // one. (The cached view holds its parts and base state, so no pointer compared here can
  // be a freed one's reused address.)
  out.covering = CoveringIndexes(base, out.base);
  {
    std::lock_guard<std::mutex> lock(view_mu_);
    if (view_ != nullptr && view_->parts == out.parts && SameBaseState(view_->base, out.base) &&
        view_->covering == out.covering) {
      return view_;
    }
  }
  auto vis = std::make_shared<shard::Visibility>();
  for (const auto& s : out.parts) vis->lanes.push_back(s->visibility);
  auto merged = std::make_shared<shard::ShardSnapshot>();
  const shard::ShardSnapshot& first = *out.parts[0];
  merged->schema = first.schema;
  merged->storage_schema = first.storage_schema;
  merged->rowid_column = first.rowid_column;
  merged->index_specs = first.index_specs;
  merged->visibility = vis;
  merged->base_epoch = out.base.epoch;
  // Point lookups of the base over the storage key columns (a sharded table has a primary key).
  std::vector<int> keys;
  for (const auto& name : shards_[0]->key_columns()) {
    const int k = first.storage_schema->GetFieldIndex(name);
    if (k >= 0) keys.push_back(k);
  }
  if (auto v = base.View(out.base, vis, first.index_specs, keys)) {
    merged->num_rows += v->live_rows;
    merged->sources.push_back(std::move(*v));
  }
  for (size_t i = 0; i < out.parts.size(); ++i) {
    const shard::ShardSnapshot& s = *out.parts[i];
    merged->num_rows += s.num_rows;  // its own sources only (base_in_view = false)
    merged->last_wal_position += s.last_wal_position;
    merged->compacted_generation += s.compacted_generation;
    for (const auto& src : s.sources) {
      merged->sources.push_back(src);
      merged->sources.back().shard = static_cast<int>(i);
      merged->sources.back().name = "shard " + std::to_string(i) + " " + src.name;
    }
  }
  // Per shard: the base and that shard's sources (TableSnapshot::shard_views).
  auto by_shard = std::make_shared<std::vector<std::shared_ptr<const shard::ShardSnapshot>>>();
  for (size_t i = 0; i < out.parts.size(); ++i) {
    by_shard->push_back(shard::NarrowedView(*merged, [i](const shard::SourceView& src) {
      return src.shard < 0 || src.shard == static_cast<int>(i);
    }));
  }
  out.merged = std::move(merged);
  out.by_shard = std::move(by_shard);
  std::shared_ptr<const ShardedView> shared = std::move(made);
  std::shared_ptr<const ShardedView> old;  // freed after view_mu_ is released (a leaf lock)
  {
    std::lock_guard<std::mutex> lock(view_mu_);
    old = std::exchange(view_, shared);
  }
  return shared;
}

void LocalTable::ForgetView() const {
  std::shared_ptr<const ShardedView> old;
  {
    std::lock_guard<std::mutex> lock(view_mu_);
    old = std::move(view_);
    view_ = nullptr;
  }
}

}  // namespace strata::table
