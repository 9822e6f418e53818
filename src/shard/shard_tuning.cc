// ShardWriter::Retune, settings and SetMemTableIndexes (shard_writer.h): what a table's LSM
// write spec changes in a running shard writer (table/lsm_write_spec.h, docs/SHARDING.md).
#include <spdlog/spdlog.h>

#include "shard/shard_writer_impl.h"

namespace strata::shard {

Status ShardWriter::Retune(const ShardWriterOptions& o) {
  if (o.max_memtable_rows < 1 || o.max_memtable_bytes < 1 || o.max_unflushed_bytes < 1 ||
      o.max_memtable_age.count() < 1 || o.max_frozen_memtables < 0) {
    return Status::Invalid(
        "shard options: max_memtable_rows, max_memtable_bytes, max_unflushed_bytes and "
        "max_memtable_age must be >= 1, max_frozen_memtables >= 0");
  }
  Impl& s = *impl_;
  std::unique_lock<std::mutex> lock(s.mu);
  if (s.closed) return Status::Invalid("shard '" + s.shard_id + "' writer is closed");
  if (!s.options.durable_write && o.durable_write) {
    // Back to durable: first let the syncer settle the non-durable appends it owes (it marks
    // every MemTable settled after a sync, which must not race durable puts' own accounting).
    s.cv.wait(lock, [&] { return s.nondurable_pending == 0 || s.closed || !s.sticky.ok(); });
    if (s.closed) return Status::Invalid("shard '" + s.shard_id + "' writer is closed");
  }
  s.options.durable_write = o.durable_write;
  s.options.max_memtable_rows = o.max_memtable_rows;
  s.options.max_memtable_bytes = o.max_memtable_bytes;
  s.options.max_memtable_age = o.max_memtable_age;
  s.options.max_unflushed_bytes = o.max_unflushed_bytes;
  s.options.max_frozen_memtables = o.max_frozen_memtables;
  s.options.write_stall_timeout = o.write_stall_timeout;
  // Non-durable puts are made durable by the syncer thread (started at open only for a
  // non-durable writer). Once started it runs until close(), which syncs what it still owes;
  // while the writer is durable it owes nothing and sleeps. Callers change durability with no
  // put in flight (the table holds its write lock exclusively).
  if (!o.durable_write && !s.syncer.joinable()) {
    s.syncer = std::thread([p = impl_.get()] { p->SyncerLoop(); });
  }
  // A lowered trigger seals the active MemTable now (the flusher checks SealDue on wake-up).
  s.cv.notify_all();
  return Status::OK();
}

WriterSettings ShardWriter::settings() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->SettingsLocked();
}

Status ShardWriter::SetMemTableIndexes(std::optional<std::vector<std::string>> names) {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.closed) return Status::Invalid("shard '" + s.shard_id + "' writer is closed");
  std::vector<bool> kept_before;
  for (const auto& spec : s.specs) kept_before.push_back(s.MemTableKeeps(spec));
  s.memtable_names = std::move(names);
  std::vector<GenPtr> gens(s.frozen.begin(), s.frozen.end());
  gens.push_back(s.active);
  for (size_t i = 0; i < s.specs.size(); ++i) {
    const index::IndexSpec& spec = s.specs[i];
    const bool keep = s.MemTableKeeps(spec);
    if (keep == kept_before[i]) continue;
    for (const auto& g : gens) {
      if (!keep) {
        // The flush builds it from the rows (FlushOne: a MemTable without the index).
        g->mt->DropIndex(spec.name);
        continue;
      }
      auto entry = g->mt->AddIndex(spec);
      if (!entry.ok()) {
        spdlog::error("shard '{}': index '{}' not added to generation {}: {}", s.shard_id,
                      spec.name, g->generation, entry.status().ToString());
        continue;
      }
      if (!(*entry)->complete.load()) s.index_tasks.push_back({g, *entry, nullptr, spec});
    }
  }
  s.visible_epoch.fetch_add(1);
  s.cv.notify_all();
  return Status::OK();
}

}  // namespace strata::shard
