// LocalTable::RewriteColumns (table.h): schema evolution by rewriting every live row into a
// fresh shard, committed and swapped in like Overwrite (local_table.cc).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>

#include "common/wall_clock.h"
#include "format/ids.h"
#include "format/table_manifest.h"
#include "index/column_index.h"
#include "shard/batch_conformance.h"
#include "table/local_table.h"

namespace strata::table {
namespace {

/// Checks the layout a plan returned: a valid schema, primary-key columns in it (no
/// duplicates), index definitions valid against it with unique names.
Status ValidateRewrite(const ColumnRewrite& r) {
  if (r.schema == nullptr) return Status::Invalid("column rewrite: the new schema is missing");
  if (!r.transform) return Status::Invalid("column rewrite: the transform is missing");
  STRATA_RETURN_IF_ERROR(shard::ValidateTableSchema(*r.schema));
  std::set<std::string> seen;
  for (const auto& k : r.primary_key) {
    if (r.schema->GetFieldIndex(k) < 0) {
      return Status::Invalid("column rewrite: primary-key column '" + k +
                             "' is not in the new schema");
    }
    if (!seen.insert(k).second) {
      return Status::Invalid("column rewrite: primary-key column '" + k + "' is listed twice");
    }
  }
  seen.clear();
  for (const auto& spec : r.indexes) {
    if (!seen.insert(spec.name).second) {
      return Status::Invalid("column rewrite: index name '" + spec.name + "' is listed twice");
    }
    STRATA_RETURN_IF_ERROR(index::ValidateIndexSpec(spec, *r.schema));
  }
  return Status::OK();
}

/// Invalid unless `got` (the schema of transformed batch `index`) has exactly the columns of
/// `want` (names and types, in order).
Status SameColumns(const arrow::Schema& got, const arrow::Schema& want, size_t index) {
  bool same = got.num_fields() == want.num_fields();
  for (int c = 0; same && c < got.num_fields(); ++c) {
    same = got.field(c)->name == want.field(c)->name &&
           got.field(c)->type->Equals(*want.field(c)->type);
  }
  if (same) return Status::OK();
  return Status::Invalid("the transform of batch " + std::to_string(index) + " returned columns (" +
                         got.ToString() + ") that are not the new schema's (" + want.ToString() +
                         ")");
}

/// Put with a few retries on Backpressure (nothing was written then): the fresh shard's
/// flusher drains MemTables concurrently, so a long rewrite can outpace it briefly.
Status PutChunk(shard::ShardWriter& writer, const arrow::RecordBatchPtr& chunk) {
  for (int attempt = 0;; ++attempt) {
    auto put = writer.Put({chunk});
    if (put.ok()) return Status::OK();
    if (put.status().code() != StatusCode::kBackpressure || attempt >= 5) return put.status();
  }
}

}  // namespace

Result<uint64_t> LocalTable::RewriteColumns(
    const std::function<Result<ColumnRewrite>(const RewriteSource&)>& plan) {
  std::unique_lock<std::shared_mutex> write_lock(write_mu_);
  std::vector<std::string> index_specs_json;  // to detect a concurrent CreateIndex / DropIndex
  std::vector<index::IndexSpec> indexes;
  std::vector<std::string> primary_key;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    if (SharedBaseLocked()) {
      return Status::NotSupported(
          "table '" + name_ + "' has " + std::to_string(shards_.size()) +
          " shard(s) sharing one base (bucket or identity sharding): column changes (add, "
          "alter, drop) of a sharded table are not built yet (issue 16); unset its LSM write "
          "spec on an empty table, or copy the rows into a new table");
    }
    index_specs_json.assign(manifest_.index_specs_json().begin(),
                            manifest_.index_specs_json().end());
    primary_key.assign(manifest_.primary_key().begin(), manifest_.primary_key().end());
    for (const auto& j : manifest_.index_specs_json()) {
      STRATA_ASSIGN_OR_RETURN(auto spec, index::IndexSpecFromJson(j));
      indexes.push_back(std::move(spec));
    }
  }
  // Every write acknowledged before this point is visible, and none can start until
  // write_lock is released.
  const TableSnapshot snapshot = Snapshot();
  if (snapshot.shard == nullptr) {
    return Status::Internal("table '" + name_ + "': snapshot failed; column rewrite refused");
  }
  // A rewrite reads every live row: materialise them once.
  STRATA_ASSIGN_OR_RETURN(const std::vector<arrow::RecordBatchPtr> live,
                          shard::LiveBatches(*snapshot.shard));
  STRATA_ASSIGN_OR_RETURN(
      ColumnRewrite rewrite,
      plan(RewriteSource{snapshot, live, std::move(primary_key), std::move(indexes)}));
  STRATA_RETURN_IF_ERROR(ValidateRewrite(rewrite));
  STRATA_ASSIGN_OR_RETURN(std::string schema_bytes, format::EncodeSchema(*rewrite.schema));

  // The LSM write spec stays when it still fits the new layout (else it is dropped, as an
  // overwrite drops it): its writer options and maintained indexes apply to the fresh shard.
  format::TableManifest spec_holder;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (manifest_.has_lsm_write_spec()) {
      *spec_holder.mutable_lsm_write_spec() = manifest_.lsm_write_spec();
    }
  }
  if (spec_holder.has_lsm_write_spec()) {
    auto spec = LsmWriteSpecFromProto(spec_holder.lsm_write_spec());
    Status fits = spec.status();
    if (fits.ok()) {
      fits = ValidateLsmWriteSpec(
          *spec, LsmSpecTarget{rewrite.schema.get(), rewrite.primary_key, rewrite.indexes});
    }
    if (!fits.ok()) {
      spdlog::warn("table '{}': the column change drops the LSM write spec: {}", name_,
                   fits.ToString());
      spec_holder.clear_lsm_write_spec();
    }
  }
  for (const auto& k : rewrite.primary_key) spec_holder.add_primary_key(k);
  for (const auto& spec : rewrite.indexes) {
    spec_holder.add_index_specs_json(index::IndexSpecToJson(spec));
  }
  STRATA_ASSIGN_OR_RETURN(shard::ShardWriterOptions fresh_options, ShardOptionsFor(spec_holder));
  STRATA_ASSIGN_OR_RETURN(auto fresh_base, OpenBase({}, rewrite.schema, "", &fresh_options));
  const std::string shard_id = format::RandomUuid();
  STRATA_ASSIGN_OR_RETURN(auto fresh, shard::ShardWriter::Open(store_, prefix_, shard_id,
                                                               rewrite.schema, fresh_options));
  auto discard = [&](Status why) -> Status {
    fresh->close();
    Status cleanup = shard::ShardWriter::RemoveShardFiles(*store_, prefix_, shard_id);
    if (!cleanup.ok()) {
      spdlog::warn("table '{}': cleanup of rewrite shard '{}': {}", name_, shard_id,
                   cleanup.ToString());
    }
    return why;
  };

  for (size_t i = 0; i < live.size(); ++i) {
    const arrow::RecordBatchPtr& batch = live[i];
    if (batch->num_rows() == 0) continue;
    Result<arrow::RecordBatchPtr> out = rewrite.transform(batch, i);
    if (!out.ok()) return discard(out.status());
    if (*out == nullptr || (*out)->num_rows() != batch->num_rows()) {
      return discard(Status::Internal("column rewrite of table '" + name_ +
                                      "': the transform changed the row count of batch " +
                                      std::to_string(i)));
    }
    // Conformance alone would accept a batch lacking a nullable column (inserts may omit
    // one), silently losing that column's values: demand the new schema's exact columns.
    if (Status same = SameColumns(*(*out)->schema(), *rewrite.schema, i); !same.ok()) {
      return discard(same.WithContext("column rewrite of table '" + name_ + "'"));
    }
    const int64_t n = (*out)->num_rows();
    for (int64_t off = 0; off < n; off += kRewriteChunkRows) {
      const int64_t len = std::min(kRewriteChunkRows, n - off);
      arrow::RecordBatchPtr chunk = (off == 0 && len == n) ? *out : (*out)->Slice(off, len);
      Status put = PutChunk(*fresh, chunk);
      if (!put.ok()) {
        return discard(put.WithContext("column rewrite of table '" + name_ + "'"));
      }
    }
  }
  const uint64_t fresh_position = fresh->last_wal_position();

  std::unique_lock<std::shared_mutex> lock(mu_);
  if (Status live = CheckNotDropped(); !live.ok()) return discard(live);
  if (!std::equal(index_specs_json.begin(), index_specs_json.end(),
                  manifest_.index_specs_json().begin(), manifest_.index_specs_json().end())) {
    return discard(Status::Invalid(
        "table '" + name_ +
        "': index definitions changed during the column rewrite; nothing changed, retry"));
  }
  // A second shard cannot have appeared meanwhile: the spec changes only under write_mu_.
  const uint64_t old_version = VersionLocked();
  format::TableManifest m = manifest_;
  m.set_version(manifest_.version() + 1);
  m.set_arrow_schema(std::move(schema_bytes));
  m.clear_shard_ids();
  m.add_shard_ids(shard_id);
  m.clear_primary_key();
  for (const auto& k : rewrite.primary_key) m.add_primary_key(k);
  m.clear_index_specs_json();
  for (const auto& spec : rewrite.indexes) m.add_index_specs_json(index::IndexSpecToJson(spec));
  m.clear_lsm_write_spec();
  if (spec_holder.has_lsm_write_spec()) *m.mutable_lsm_write_spec() = spec_holder.lsm_write_spec();
  m.clear_base();  // the fresh shard holds every row
  m.set_created_at_micros(WallClockMicros());
  m.set_base_version(old_version + 1);
  Status committed = CommitNextManifest(m, "column rewrite of table '" + name_ + "'");
  if (!committed.ok()) {
    return discard(committed);
  }
  const std::string old_shard = shards_[0]->shard_id();
  shards_[0]->close();
  // As Overwrite: the old base stops once mu_ is released; the old writer lives until then.
  std::shared_ptr<base::BaseTable> old_base = std::move(base_);
  std::vector<std::unique_ptr<shard::ShardWriter>> old_writers = std::move(shards_);
  manifest_ = std::move(m);
  schema_ = rewrite.schema;
  shards_.clear();
  ForgetView();
  shards_.push_back(std::move(fresh));
  base_ = std::move(fresh_base);
  StartBaseLocked();
  NoteCommit();
  const uint64_t result = manifest_.base_version() + fresh_position;
  lock.unlock();
  old_base->Stop();
  old_writers.clear();
  Status removed = shard::ShardWriter::RemoveShardFiles(*store_, prefix_, old_shard);
  if (!removed.ok()) {
    spdlog::warn("table '{}': old shard '{}' not fully removed: {}", name_, old_shard,
                 removed.ToString());
  }
  return result;
}

}  // namespace strata::table
