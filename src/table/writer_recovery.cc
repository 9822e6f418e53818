#include "table/writer_recovery.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>

#include "format/shard_manifest.h"
#include "index/index_spec.h"
#include "table/local_table.h"

namespace strata::table {

bool RecoveryBackoff::Due(Clock::time_point now, bool* first, const RecoveryOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  *first = !poisoned_;
  if (!poisoned_) {
    poisoned_ = true;
    poisoned_at_ = now;
    if (info_.recoveries > 0 && now - recovered_at_ < kStablePeriod) {
      // Poisoned again soon after a reopen (a disk that takes a probe but not the next
      // write): keep backing off instead of reopening at once every time.
      backoff_ = backoff_.count() == 0 ? options.initial_backoff
                                       : std::min(backoff_ * 2, options.max_backoff);
      next_attempt_ = now + backoff_;
    } else {
      next_attempt_ = now;
      backoff_ = std::chrono::milliseconds(0);
    }
  }
  return now >= next_attempt_;
}

void RecoveryBackoff::Healthy() {
  std::lock_guard<std::mutex> lock(mu_);
  poisoned_ = false;
}

void RecoveryBackoff::Failed(const Status& error, Clock::time_point now,
                             const RecoveryOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  ++info_.attempts;
  info_.last_error = error.ToString();
  backoff_ =
      backoff_.count() == 0 ? options.initial_backoff : std::min(backoff_ * 2, options.max_backoff);
  next_attempt_ = now + backoff_;
}

int64_t RecoveryBackoff::Succeeded(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  ++info_.attempts;
  ++info_.recoveries;
  info_.last_error.clear();
  poisoned_ = false;
  recovered_at_ = now;
  info_.last_recovery_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now - poisoned_at_).count();
  return info_.last_recovery_ms;
}

WriterRecoveryInfo RecoveryBackoff::info() const {
  std::lock_guard<std::mutex> lock(mu_);
  WriterRecoveryInfo out = info_;
  out.next_attempt_ms =
      poisoned_ ? std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(
                                           next_attempt_ - Clock::now())
                                           .count())
                : -1;
  return out;
}

// --- LocalTable's side ---------------------------------------------------------------------

WriterRecoveryInfo LocalTable::RecoveryInfo() const { return recovery_.info(); }

void LocalTable::Supervise(RecoveryBackoff::Clock::time_point now, const RecoveryOptions& options) {
  Status health;
  std::string shard_id;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (dropped_) return;
    // A poisoned shard first: a failed reopen attempt may have fenced healthy shards with this
    // table's own claims, and those must not hide the shard to recover (RecoverWriter treats
    // epochs up to attempt_epochs_ as ours).
    for (int pass = 0; pass < 2 && shard_id.empty(); ++pass) {
      for (const auto& w : shards_) {
        Status h = w->health();
        if (h.ok() || (pass == 0 && h.code() != StatusCode::kWriterPoisoned)) continue;
        health = h;
        shard_id = w->shard_id();
        break;
      }
    }
    if (shard_id.empty()) shard_id = shards_[0]->shard_id();
  }
  if (health.ok() && options.owner_check.count() > 0 && now >= next_owner_check_) {
    // Fencing found without a write: another server claimed the shard (a second server on the
    // same bucket, or one started with --no-data-dir-lock). CheckOwner makes the writer
    // FENCED (sticky) when the newest manifest names another epoch.
    next_owner_check_ = now + options.owner_check;
    std::shared_lock<std::shared_mutex> lock(mu_);
    Status owner;
    for (size_t i = 0; !dropped_ && i < shards_.size() && owner.ok(); ++i) {
      owner = shards_[i]->CheckOwner();
    }
    if (!dropped_) {
      if (owner.code() == StatusCode::kFenced) {
        spdlog::error(
            "table '{}': another server took over this table's writes ({}); this server is "
            "fenced: its writes answer 409, /readyz 503, and its reads may be stale until it "
            "restarts",
            name_, owner.message());
        health = owner;
      } else if (!owner.ok()) {
        spdlog::debug("table '{}': owner check failed: {}", name_, owner.ToString());
      }
    }
  }
  if (health.code() != StatusCode::kWriterPoisoned || !options.enabled) {
    recovery_.Healthy();
    return;
  }
  bool first = false;
  if (!recovery_.Due(now, &first, options)) return;
  if (first) {
    spdlog::error(
        "table '{}' shard '{}': writes fail ({}); reopening the shard in the "
        "background (backoff {} ms up to {} ms)",
        name_, shard_id, health.message(), options.initial_backoff.count(),
        options.max_backoff.count());
  }
  auto r = RecoverWriter();
  const auto done = RecoveryBackoff::Clock::now();
  if (r.ok() && *r) {
    const int64_t ms = recovery_.Succeeded(done);
    spdlog::info(
        "table '{}' shard '{}': writer reopened {} ms after it was poisoned; writes "
        "accepted again",
        name_, shard_id, ms);
  } else if (r.status().code() == StatusCode::kFenced) {
    recovery_.Healthy();  // not ours to reopen any more
    spdlog::error("table '{}' shard '{}': not reopened: {}", name_, shard_id, r.status().message());
  } else if (!r.ok()) {
    recovery_.Failed(r.status(), done, options);
    spdlog::debug("table '{}' shard '{}': reopen attempt failed: {}", name_, shard_id,
                  r.status().ToString());
  } else {
    recovery_.Healthy();  // no longer poisoned (dropped, or replaced by an overwrite)
  }
}

Result<bool> LocalTable::RecoverWriter() {
  // The poisoned shard; a table of several shards reopens every shard (they share the base,
  // whose marks of the poisoned shard's lane only a reopen of the whole tier clears).
  std::string shard_id;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    for (const auto& w : shards_) {
      if (w->health().code() == StatusCode::kWriterPoisoned) {
        shard_id = w->shard_id();
        break;
      }
    }
    if (shard_id.empty()) return false;
  }
  // 1. Is the store taking writes again? One MiB, so a disk with only a few KiB left (full,
  // no floor) does not pass and then fail again at the next write. Cheap next to a reopen.
  const std::string probe = shard::ShardPrefix(prefix_, shard_id) + "/recovery-probe";
  STRATA_RETURN_IF_ERROR(
      store_->Put(probe, std::string(kProbeBytes, '\0')).WithContext("recovery probe write"));
  STRATA_RETURN_IF_ERROR(store_->Remove(probe).WithContext("recovery probe remove"));

  // 2. No row write runs from here to the swap (they would fail on the poisoned writer).
  std::unique_lock<std::shared_mutex> write_lock(write_mu_);
  std::shared_ptr<base::BaseTable> old_base;
  format::TableManifest m;
  arrow::SchemaPtr schema;
  std::vector<std::pair<std::string, uint64_t>> owned;  // shard id, this writer's epoch
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    bool poisoned = false;
    for (const auto& w : shards_) {
      poisoned |= w->health().code() == StatusCode::kWriterPoisoned && w->shard_id() == shard_id;
      owned.emplace_back(w->shard_id(), w->writer_epoch());
    }
    if (!poisoned) return false;
    old_base = base_;
  }
  // Another writer (a second server) may have claimed a shard while this one was poisoned:
  // then this table is fenced and is not reopened. Epochs above the writer's own up to
  // attempt_epochs_ may have been claimed by earlier attempts of this recovery that failed
  // after their claim (e.g. at the fence sentinel); they are ours.
  for (size_t i = 0; i < owned.size(); ++i) {
    const auto& [id, own] = owned[i];
    format::ShardManifestStore manifests(store_, shard::ShardPrefix(prefix_, id), id);
    STRATA_ASSIGN_OR_RETURN(auto latest, manifests.LoadLatest());
    const uint64_t latest_epoch = latest.has_value() ? latest->writer_epoch() : 0;
    if (latest_epoch != own && (latest_epoch < own || latest_epoch > attempt_epochs_[id])) {
      std::shared_lock<std::shared_mutex> lock(mu_);
      if (dropped_ || i >= shards_.size() || shards_[i]->shard_id() != id) return false;
      Status owner = shards_[i]->CheckOwner();  // Fenced, and makes the writer fenced
      if (owner.ok()) return false;             // read again: ours after all; retry later
      return owner;
    }
    attempt_epochs_[id] = std::max(attempt_epochs_[id], latest_epoch + 1);  // Open's claim
  }
  // Without mu_: its thread may be waiting for it in CommitBase. Idempotent, so a failed
  // attempt leaves it stopped and the next attempt stops it again at no cost. Afterwards no
  // compaction can commit, so the table manifest's base stays as read below.
  old_base->Stop();
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    m = manifest_;
    schema = schema_;
  }

  // 3. The ordinary open path: base from the manifest, then every shard (new epoch, replay),
  // with the manifest's key, index definitions and LSM write spec (writer options).
  const std::vector<std::string> ids(m.shard_ids().begin(), m.shard_ids().end());
  auto tier = OpenTier(m, schema, ids);
  if (!tier.ok()) return tier.status().WithContext("reopen of table '" + name_ + "'");

  // 4. Swap under the table lock.
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (dropped_ || base_ != old_base) {
    lock.unlock();
    for (auto& w : tier->shards) w->close();
    tier->base->Stop();
    return false;
  }
  std::vector<std::unique_ptr<shard::ShardWriter>> old_writers = std::move(shards_);
  shards_ = std::move(tier->shards);
  ForgetView();
  base_ = std::move(tier->base);
  // Index definitions changed while the shards reopened (create_index/ takes only mu_).
  if (manifest_.index_specs_json().size() != m.index_specs_json().size() ||
      !std::equal(manifest_.index_specs_json().begin(), manifest_.index_specs_json().end(),
                  m.index_specs_json().begin())) {
    std::vector<index::IndexSpec> specs;
    for (const auto& j : manifest_.index_specs_json()) {
      auto spec = index::IndexSpecFromJson(j);
      if (spec.ok()) specs.push_back(std::move(*spec));
    }
    base_->SetIndexes(specs);
    for (const auto& w : shards_) {
      Status applied = w->SetIndexes(specs);
      if (!applied.ok()) {
        spdlog::error("table '{}': index definitions not applied after reopen: {}", name_,
                      applied.ToString());
      }
    }
  }
  StartBaseLocked();
  lock.unlock();
  // Readers hold snapshots (shared sources), never the writers; the old base is stopped, so
  // nothing uses the old writers any more.
  for (auto& w : old_writers) w->close();
  old_writers.clear();
  return true;
}

}  // namespace strata::table
