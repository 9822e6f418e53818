// LocalTable's LSM write spec (table.h SetLsmWriteSpec; docs/SHARDING.md): kept in the table
// manifest (lsm_write_spec), applied to the one shard writer: writer_config_defaults over the
// server's writer options, maintained_indexes as the MemTables' index set.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>

#include "common/wall_clock.h"
#include "format/table_manifest.h"
#include "index/column_index.h"
#include "table/local_table.h"
#include "table/writer_config.h"

namespace strata::table {

Result<shard::ShardWriterOptions> LocalTable::ShardOptionsFor(
    const format::TableManifest& m) const {
  shard::ShardWriterOptions o = options_;
  o.primary_key.assign(m.primary_key().begin(), m.primary_key().end());
  o.indexes.clear();
  for (const auto& j : m.index_specs_json()) {
    auto spec = index::IndexSpecFromJson(j);
    if (!spec.ok()) return spec.status().WithContext("table '" + name_ + "' manifest");
    o.indexes.push_back(std::move(*spec));
  }
  o.memtable_indexes.reset();
  if (m.has_lsm_write_spec()) {
    auto spec = LsmWriteSpecFromProto(m.lsm_write_spec());
    if (!spec.ok()) return spec.status().WithContext("table '" + name_ + "' manifest");
    Status applied = ApplyWriterConfig(spec->writer_config_defaults, &o);
    if (!applied.ok()) {
      return Status::Corruption("table '" + name_ + "' manifest: " + applied.message());
    }
    o.memtable_indexes = spec->maintained_indexes;
  }
  return o;
}

std::optional<LsmWriteSpec> LocalTable::GetLsmWriteSpec() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (dropped_ || !manifest_.has_lsm_write_spec()) return std::nullopt;
  auto spec = LsmWriteSpecFromProto(manifest_.lsm_write_spec());
  if (!spec.ok()) return std::nullopt;
  return *spec;
}

Status LocalTable::SetLsmWriteSpec(std::optional<LsmWriteSpec> spec) {
  // write_mu_ exclusively: no put runs while the writer options change, and a column rewrite
  // or a writer reopen (which read the spec before they swap a shard in) never interleaves.
  std::unique_lock<std::shared_mutex> write_lock(write_mu_);
  std::unique_lock<std::shared_mutex> lock(mu_);
  STRATA_RETURN_IF_ERROR(CheckNotDropped());
  if (!spec) {
    if (!manifest_.has_lsm_write_spec()) {
      return Status::Invalid("table '" + name_ + "' has no LSM write spec to unset");
    }
  } else {
    LsmSpecTarget target;
    target.schema = schema_.get();
    target.primary_key.assign(manifest_.primary_key().begin(), manifest_.primary_key().end());
    for (const auto& j : manifest_.index_specs_json()) {
      STRATA_ASSIGN_OR_RETURN(auto s, index::IndexSpecFromJson(j));
      target.indexes.push_back(std::move(s));
    }
    STRATA_RETURN_IF_ERROR(ValidateLsmWriteSpec(*spec, target));
  }
  format::TableManifest m = manifest_;
  m.set_version(manifest_.version() + 1);
  m.set_created_at_micros(WallClockMicros());
  if (spec) {
    *m.mutable_lsm_write_spec() = LsmWriteSpecToProto(*spec);
  } else {
    m.clear_lsm_write_spec();
  }
  const size_t count = spec ? static_cast<size_t>(std::max<int64_t>(1, spec->NumShards())) : 1;
  // Identity keeps its shards only for the same column; any other change of mode, column or
  // bucket count moves rows between shards.
  const bool was_identity = HasIdentitySpec(manifest_);
  const bool identity = spec && spec->mode == ShardingMode::kIdentity;
  const bool reshard =
      identity || was_identity
          ? !(identity && was_identity && spec->column == manifest_.lsm_write_spec().column())
          : count != shards_.size();
  if (reshard) {
    Tier old;
    STRATA_RETURN_IF_ERROR(ReshardEmptyLocked(std::move(m), count, &old));
    // As Overwrite: the old base stops with mu_ released (its thread may wait for mu_ in
    // CommitBase), the old writers live until then; their files go last (no live row).
    lock.unlock();
    write_lock.unlock();
    DiscardTier(old, "change of the shard count");
    return Status::OK();
  }
  // The rows do not change: base_version (hence the table version) stays.
  STRATA_ASSIGN_OR_RETURN(shard::ShardWriterOptions options, ShardOptionsFor(m));
  STRATA_RETURN_IF_ERROR(CommitNextManifest(m, "LSM write spec of table '" + name_ + "'"));
  manifest_ = std::move(m);
  NoteCommit();
  // The spec's options go to every shard's writer.
  Status tuned;
  for (const auto& w : shards_) {
    if (tuned.ok()) tuned = w->Retune(options);
    if (tuned.ok()) tuned = w->SetMemTableIndexes(options.memtable_indexes);
  }
  if (!tuned.ok()) {
    // The manifest holds the spec: a reopen applies it.
    spdlog::error("table '{}': LSM write spec committed but not applied: {}", name_,
                  tuned.ToString());
  }
  return Status::OK();
}

Status LocalTable::ReshardEmptyLocked(format::TableManifest m, size_t count, Tier* old) {
  // Moving rows between shards (a reshard through compaction) is not built: only a table
  // without live rows changes its shard count, so nothing can be lost or duplicated.
  STRATA_ASSIGN_OR_RETURN(auto view, SnapshotLocked());
  if (view->num_rows > 0) {
    const bool identity = HasIdentitySpec(m);
    const bool was_identity = HasIdentitySpec(manifest_);
    const std::string change =
        identity || was_identity
            ? "changing how rows map to shards (identity sharding by a column is kept only "
              "for that same column)"
            : "changing its shard count from " + std::to_string(shards_.size()) + " to " +
                  std::to_string(count);
    return Status::Invalid("table '" + name_ + "' has " + std::to_string(view->num_rows) +
                           " rows: " + change +
                           " would move rows between shards (resharding), which is not "
                           "supported yet (issue 16); set the spec on an empty table or at "
                           "create time (create/?lsm_write_spec=), then insert the rows");
  }
  const uint64_t old_version = VersionLocked();
  STRATA_ASSIGN_OR_RETURN(Tier fresh, WriteFreshTier(m, schema_, static_cast<int>(count), {}));
  m.clear_shard_ids();
  for (const auto& w : fresh.shards) m.add_shard_ids(w->shard_id());
  m.clear_shard_values();
  for (const auto& v : fresh.values) m.add_shard_values(v);  // identity: the spare shard
  m.clear_base();                                            // no row anywhere
  m.set_base_version(old_version + 1);
  Status committed = CommitNextManifest(m, "LSM write spec of table '" + name_ + "'");
  if (!committed.ok()) {
    DiscardTier(fresh, "cleanup after a failed change of the shard count");
    return committed;
  }
  for (auto& w : shards_) w->close();
  old->base = std::move(base_);
  old->shards = std::move(shards_);
  manifest_ = std::move(m);
  shards_ = std::move(fresh.shards);
  ForgetView();
  base_ = std::move(fresh.base);
  StartBaseLocked();
  NoteCommit();
  return Status::OK();
}

}  // namespace strata::table
