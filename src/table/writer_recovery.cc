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
    health = shard_->health();
    shard_id = shard_->shard_id();
  }
  if (health.ok() && options.owner_check.count() > 0 && now >= next_owner_check_) {
    // Fencing found without a write: another server claimed the shard (a second server on the
    // same bucket, or one started with --no-data-dir-lock). CheckOwner makes the writer
    // FENCED (sticky) when the newest manifest names another epoch.
    next_owner_check_ = now + options.owner_check;
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (!dropped_) {
      Status owner = shard_->CheckOwner();
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
  std::string shard_id;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    if (shard_->health().code() != StatusCode::kWriterPoisoned) return false;
    shard_id = shard_->shard_id();
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
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(CheckNotDropped());
    if (shard_->health().code() != StatusCode::kWriterPoisoned || shard_->shard_id() != shard_id) {
      return false;
    }
    old_base = base_;
  }
  // Another writer (a second server) may have claimed the shard while this one was poisoned:
  // then this writer is fenced and is not reopened. Epochs above the writer's own up to
  // attempt_epoch_ may have been claimed by earlier attempts of this recovery that failed
  // after their claim (e.g. at the fence sentinel); they are ours.
  format::ShardManifestStore manifests(store_, shard::ShardPrefix(prefix_, shard_id), shard_id);
  STRATA_ASSIGN_OR_RETURN(auto latest, manifests.LoadLatest());
  const uint64_t latest_epoch = latest.has_value() ? latest->writer_epoch() : 0;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    const uint64_t own = shard_->writer_epoch();
    if (latest_epoch != own && (latest_epoch < own || latest_epoch > attempt_epoch_)) {
      Status owner = shard_->CheckOwner();  // Fenced, and makes the writer fenced
      if (owner.ok()) return false;         // read again: ours after all; retry later
      return owner;
    }
  }
  attempt_epoch_ = std::max(attempt_epoch_, latest_epoch + 1);  // the claim Open makes
  // Without mu_: its thread may be waiting for it in CommitBase. Idempotent, so a failed
  // attempt leaves it stopped and the next attempt stops it again at no cost. Afterwards no
  // compaction can commit, so the table manifest's base stays as read below.
  old_base->Stop();
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    m = manifest_;
    schema = schema_;
  }

  // 3. The ordinary open path: base from the manifest, then the shard (new epoch, replay).
  // The manifest's key, index definitions and LSM write spec (writer options).
  STRATA_ASSIGN_OR_RETURN(shard::ShardWriterOptions opts, ShardOptionsFor(m));
  auto base = OpenBase(m.base(), schema, shard_id, &opts);
  if (!base.ok()) return base.status().WithContext("reopen of the base");
  auto writer = shard::ShardWriter::Open(store_, prefix_, shard_id, schema, opts);
  if (!writer.ok()) {
    (*base)->Stop();
    return writer.status().WithContext("reopen of shard '" + shard_id + "'");
  }

  // 4. Swap under the table lock.
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (dropped_ || base_ != old_base) {
    lock.unlock();
    (*writer)->close();
    (*base)->Stop();
    return false;
  }
  std::unique_ptr<shard::ShardWriter> old_writer = std::move(shard_);
  shard_ = std::move(writer).value();
  base_ = std::move(*base);
  // Index definitions changed while the shard reopened (create_index/ takes only mu_).
  if (manifest_.index_specs_json().size() != m.index_specs_json().size() ||
      !std::equal(manifest_.index_specs_json().begin(), manifest_.index_specs_json().end(),
                  m.index_specs_json().begin())) {
    std::vector<index::IndexSpec> specs;
    for (const auto& j : manifest_.index_specs_json()) {
      auto spec = index::IndexSpecFromJson(j);
      if (spec.ok()) specs.push_back(std::move(*spec));
    }
    base_->SetIndexes(specs);
    Status applied = shard_->SetIndexes(specs);
    if (!applied.ok()) {
      spdlog::error("table '{}': index definitions not applied after reopen: {}", name_,
                    applied.ToString());
    }
  }
  StartBaseLocked();
  lock.unlock();
  // Readers hold snapshots (shared sources), never the writer; the old base is stopped, so
  // nothing uses the old writer any more.
  old_writer->close();
  old_writer.reset();
  return true;
}

}  // namespace strata::table
