// LocalTable: versions, tags, stats and the rename hand-off (see local_table.h and table.h).
// Tags live in the table manifest (TableManifest.tags); a tag change commits manifest
// version + 1 with base_version unchanged, so the reported table version stays the same.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <mutex>

#include "common/wall_clock.h"
#include "format/table_manifest.h"
#include "table/local_table.h"
#include "table/table_name.h"

namespace strata::table {
namespace {

Status CheckTagVersion(const std::string& tag, uint64_t version, uint64_t current) {
  if (version < 1 || version > current) {
    return Status::Invalid("tag '" + tag + "': version must be between 1 and the current version " +
                           std::to_string(current) + ", got " + std::to_string(version));
  }
  return Status::OK();
}

}  // namespace

void LocalTable::NoteCommit() {
  const int64_t now = WallClockMicros();
  int64_t seen = last_commit_micros_.load(std::memory_order_relaxed);
  while (seen < now && !last_commit_micros_.compare_exchange_weak(seen, now)) {
  }
}

VersionInfo LocalTable::CurrentVersion() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  VersionInfo v;
  v.version = ReportedVersionLocked();
  v.timestamp_micros =
      std::max(last_commit_micros_.load(std::memory_order_relaxed), manifest_.created_at_micros());
  return v;
}

Result<std::map<std::string, TagInfo>> LocalTable::ListTags() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  STRATA_RETURN_IF_ERROR(CheckNotDropped());
  std::map<std::string, TagInfo> out;
  for (const auto& [name, tag] : manifest_.tags()) {
    out[name] = TagInfo{tag.version(), tag.manifest_size()};
  }
  return out;
}

Status LocalTable::CreateTag(const std::string& tag, uint64_t version) {
  return SetTag(tag, version, /*create=*/true);
}

Status LocalTable::UpdateTag(const std::string& tag, uint64_t version) {
  return SetTag(tag, version, /*create=*/false);
}

Status LocalTable::SetTag(const std::string& tag, uint64_t version, bool create) {
  STRATA_RETURN_IF_ERROR(ValidateTableName(tag, "tag name"));
  std::unique_lock<std::shared_mutex> lock(mu_);
  STRATA_RETURN_IF_ERROR(CheckNotDropped());
  const bool exists = manifest_.tags().count(tag) > 0;
  if (create && exists) {
    return Status::AlreadyExists("tag '" + tag + "' already exists on table '" + name_ + "'");
  }
  if (!create && !exists) {
    return Status::Invalid("tag '" + tag + "' does not exist on table '" + name_ + "'");
  }
  const uint64_t current = VersionLocked();
  STRATA_RETURN_IF_ERROR(CheckTagVersion(tag, version, current));
  format::TableManifest m = manifest_;
  m.set_version(manifest_.version() + 1);
  m.set_created_at_micros(WallClockMicros());
  format::TableTag& t = (*m.mutable_tags())[tag];
  t.set_version(version);
  t.set_manifest_size(static_cast<int64_t>(manifest_.ByteSizeLong()));
  STRATA_RETURN_IF_ERROR(CommitNextManifest(m, "tag change of table '" + name_ + "'"));
  manifest_ = std::move(m);
  return Status::OK();
}

Status LocalTable::DeleteTag(const std::string& tag) {
  STRATA_RETURN_IF_ERROR(ValidateTableName(tag, "tag name"));
  std::unique_lock<std::shared_mutex> lock(mu_);
  STRATA_RETURN_IF_ERROR(CheckNotDropped());
  if (manifest_.tags().count(tag) == 0) {
    return Status::Invalid("tag '" + tag + "' does not exist on table '" + name_ + "'");
  }
  format::TableManifest m = manifest_;
  m.set_version(manifest_.version() + 1);
  m.set_created_at_micros(WallClockMicros());
  m.mutable_tags()->erase(tag);
  STRATA_RETURN_IF_ERROR(CommitNextManifest(m, "tag change of table '" + name_ + "'"));
  manifest_ = std::move(m);
  return Status::OK();
}

Result<TableStats> LocalTable::Stats() const {
  TableStats out;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    out.num_indices = manifest_.index_specs_json_size();
    auto add = [&out](int64_t rows, int64_t bytes) {
      if (rows <= 0) return;
      out.fragment_rows.push_back(rows);
      out.total_bytes += bytes;
    };
    // The base's fragments, then the uncompacted tiers.
    const format::BaseTable base = base_->state();
    for (const auto& f : base.fragments()) add(f.rows(), f.bytes());
    for (const auto& w : shards_) {
      const shard::ShardDescription d = w->Describe();
      for (const auto& s : d.sstables) add(s.rows, s.bytes);
      for (const auto& f : d.frozen) add(f.rows, f.bytes);
      add(d.active.rows, d.active.bytes);
    }
  }
  // Snapshot takes mu_ itself (not recursively).
  out.num_rows = Snapshot().num_rows;
  std::sort(out.fragment_rows.begin(), out.fragment_rows.end());
  return out;
}

Status LocalTable::CloseForRename() {
  std::shared_ptr<base::BaseTable> base;
  {
    std::unique_lock<std::shared_mutex> write_lock(write_mu_);
    std::unique_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    dropped_ = true;
    renamed_ = true;
    ForgetView();
    for (auto& w : shards_) w->close();
    base = base_;
  }
  base->Stop();  // without mu_: its thread may be waiting for it
  return Status::OK();
}

}  // namespace strata::table
