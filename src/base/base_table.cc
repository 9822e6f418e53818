// BaseTable: open, checkpoints and the maintenance thread (compaction itself is in
// compaction.cc, index builds in base_index_builder.cc). See base_table.h.
#include "base/base_table.h"

#include "base/base_index_build.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/thread_priority.h"
#include "format/deletion_vector.h"
#include "format/ids.h"
#include "index/column_index.h"
#include "sstable/sstable_reader.h"

namespace strata::base {

std::string FragmentsPrefix(const std::string& table_prefix) { return table_prefix + "/data"; }

Result<std::shared_ptr<BaseTable>> BaseTable::Open(
    std::shared_ptr<io::ObjectStore> store, std::string table_prefix,
    const format::BaseTable& manifest_base, arrow::SchemaPtr storage_schema,
    std::vector<int> key_columns, std::vector<index::IndexSpec> specs, CompactionOptions options) {
  std::shared_ptr<BaseTable> b(new BaseTable());
  b->store_ = std::move(store);
  b->table_prefix_ = std::move(table_prefix);
  b->key_columns_ = std::move(key_columns);
  b->options_ = options;
  WriteThrottle::Options throttle;
  // Never below the compaction trigger: a backlog that triggers no compaction would never
  // drain, and writers stopped by it would wait forever.
  if (options.background && options.l0_slowdown_count > 0) {
    throttle.slowdown_count = std::max(options.l0_slowdown_count, options.l0_trigger_count);
  } else {
    throttle.slowdown_count = 0;
  }
  if (options.background && options.l0_stop_count > 0) {
    throttle.stop_count = std::max(options.l0_stop_count, options.l0_trigger_count + 1);
  } else {
    throttle.stop_count = 0;
  }
  b->throttle_ = std::make_unique<WriteThrottle>(throttle);
  b->source_ = std::make_shared<shard::BaseSource>(storage_schema);
  b->state_ = manifest_base;
  b->specs_ = std::move(specs);
  const std::string frag_prefix = FragmentsPrefix(b->table_prefix_);
  for (const auto& f : manifest_base.fragments()) {
    if (f.first_row() != b->source_->rows()) {
      return Status::Corruption("base fragment '" + f.path() + "' starts at row " +
                                std::to_string(f.first_row()) + ", expected " +
                                std::to_string(b->source_->rows()));
    }
    auto r = sstable::SSTableReader::Open(*b->store_, frag_prefix, f.path(),
                                          /*load_indexes=*/false);
    if (!r.ok()) return r.status().WithContext("base fragment '" + f.path() + "'");
    if ((*r)->num_rows() != f.rows()) {
      return Status::Corruption("base fragment '" + f.path() + "' holds " +
                                std::to_string((*r)->num_rows()) + " rows, manifest says " +
                                std::to_string(f.rows()));
    }
    if (!(*r)->schema()->Equals(*storage_schema)) {
      return Status::Corruption("base fragment '" + f.path() + "' schema differs from the table's");
    }
    b->source_->AppendFragment(*r);
    if (!f.deletions_path().empty()) {
      auto bytes = b->store_->Get(b->table_prefix_ + "/" + f.deletions_path());
      if (!bytes.ok()) return bytes.status().WithContext("base deletion vector");
      auto dv = format::DeletionVector::Deserialize(*bytes);
      shard::Liveness& live = b->source_->liveness();
      if (!dv.ok()) {
        return dv.status().WithContext("base deletion vector '" + f.deletions_path() + "'");
      }
      for (uint32_t p : dv->ToVector()) {
        if (p >= f.rows()) {
          return Status::Corruption("base deletion vector '" + f.deletions_path() + "' names row " +
                                    std::to_string(p) + " of " + std::to_string(f.rows()));
        }
        live.Supersede(f.first_row() + p, shard::Liveness::kDead);
      }
    }
  }
  b->stats_.fragments = manifest_base.fragments_size();
  return b;
}

BaseTable::~BaseTable() { Stop(); }

format::BaseTable BaseTable::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

void BaseTable::StartMaintenance(ShardList shards, CommitFn commit, GcFn gc) {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || builder_.joinable() || stop_) return;
  shards_ = std::move(shards);
  commit_ = std::move(commit);
  gc_ = std::move(gc);
  for (const auto& c : state_.indexes()) {
    for (const auto& spec : specs_) {
      if (c.name() == spec.name && c.uuid() == spec.uuid && spec.kind == index::IndexKind::kHnsw) {
        checkpoint_loads_.emplace(spec.uuid, spec.column);
      }
    }
  }
  LoadsChangedLocked();
  // Both threads below the write path's priority (CompactionOptions::background_nice).
  auto lower = [nice = options_.background_nice] {
    if (nice <= 0) return;
    const Status st = SetCurrentThreadNice(nice);
    if (!st.ok()) spdlog::warn("background thread priority: {}", st.ToString());
  };
  thread_ = std::thread([this, lower] {
    lower();
    MaintenanceLoop();
  });
  builder_ = std::thread([this, lower] {
    lower();
    IndexBuilderLoop();
  });
}

void BaseTable::SetShards(ShardList shards) {
  std::lock_guard<std::mutex> lock(mu_);
  shards_ = std::move(shards);
  wake_ = true;
  cv_.notify_all();
}

ShardList BaseTable::ShardsNow() const {
  std::lock_guard<std::mutex> lock(mu_);
  return shards_;
}

void BaseTable::Stop() {
  // Callers may race (Drop on two threads, Drop and Overwrite): one joins, the others wait for
  // it here, so every caller returns only once the thread has ended.
  std::lock_guard<std::mutex> stopping(stop_mu_);
  std::thread thread, builder;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    checkpoint_loads_.clear();
    LoadsChangedLocked();
    thread = std::move(thread_);
    builder = std::move(builder_);
  }
  // The builder checks stop_ between batches (a k-means training in progress finishes first).
  if (builder.joinable()) builder.join();
  if (thread.joinable()) thread.join();
  // A compaction running on another thread (compact/) finishes before Stop returns.
  std::lock_guard<std::mutex> work(work_mu_);
}

void BaseTable::CloseWithCheckpoints(int64_t min_rows) {
  Stop();
  std::lock_guard<std::mutex> work(work_mu_);
  format::BaseTable state;
  std::vector<index::IndexSpec> specs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    state = state_;
    specs = specs_;
  }
  for (const auto& idx : source_->indexes()) {
    bool current = false;
    for (const auto& s : specs) current |= s.name == idx->spec().name && s.uuid == idx->spec().uuid;
    if (!current) continue;
    int64_t saved = 0;
    for (const auto& c : state.indexes()) {
      if (c.name() == idx->spec().name && c.uuid() == idx->spec().uuid) saved = c.rows();
    }
    const int64_t rows = idx->rows_indexed();
    if (rows - saved < std::max<int64_t>(1, min_rows)) continue;
    spdlog::info("base index '{}': checkpoint of {} rows at close ({} not covered)",
                 idx->spec().name, rows, rows - saved);
    Checkpoint(*idx, rows);
  }
}

void BaseTable::Notify() {
  std::lock_guard<std::mutex> lock(mu_);
  wake_ = true;
  cv_.notify_all();
}

void BaseTable::SetIndexes(std::vector<index::IndexSpec> specs) {
  {
    // specs_ first, then the indexes: an index builder installing a definition dropped here
    // either sees it gone from specs_ or has installed before RetainIndexes drops it.
    std::lock_guard<std::mutex> lock(mu_);
    specs_ = specs;
    for (auto it = checkpoint_loads_.begin(); it != checkpoint_loads_.end();) {
      const bool kept = std::any_of(specs_.begin(), specs_.end(),
                                    [&](const index::IndexSpec& s) { return s.uuid == it->first; });
      it = kept ? std::next(it) : checkpoint_loads_.erase(it);
    }
    LoadsChangedLocked();
    index_work_ = true;
    wake_ = true;
    cv_.notify_all();
  }
  source_->RetainIndexes(specs);
}

std::vector<BaseIndexInfo> BaseTable::Indexes() const {
  std::vector<BaseIndexInfo> out;
  std::vector<index::IndexSpec> specs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    specs = specs_;
  }
  const auto built = source_->indexes();
  for (const auto& s : specs) {
    BaseIndexInfo info{s, 0};
    for (const auto& i : built) {
      if (i->spec().name == s.name && i->spec().uuid == s.uuid)
        info.rows_indexed = i->rows_indexed();
    }
    out.push_back(std::move(info));
  }
  return out;
}

BaseStats BaseTable::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  BaseStats s = stats_;
  s.throttle = throttle_->stats();
  s.rows = source_->rows();
  s.fragments = state_.fragments_size();
  s.bytes = 0;
  int64_t deleted = 0;
  for (const auto& f : state_.fragments()) {
    s.bytes += f.bytes();
    deleted += f.deleted_rows();
  }
  for (const auto& c : state_.indexes()) s.bytes += c.bytes();
  s.live_rows = s.rows - deleted;
  return s;
}

Status BaseTable::WaitIndexesReady(shard::Deadline deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  while (index_work_ || building_) {
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && (index_work_ || building_)) {
      return Status::Timeout("base indexes not ready by the deadline");
    }
  }
  return Status::OK();
}

void BaseTable::LoadsChangedLocked() {
  checkpoint_loads_pending_.store(checkpoint_loads_.size(), std::memory_order_release);
  cv_.notify_all();
}

bool BaseTable::AwaitCheckpointLoads(shard::Deadline deadline, const std::string& column) {
  if (checkpoint_loads_pending_.load(std::memory_order_acquire) == 0) return true;
  const auto t0 = shard::Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  const auto none_pending = [&] {
    if (column.empty()) return checkpoint_loads_.empty();
    return std::none_of(checkpoint_loads_.begin(), checkpoint_loads_.end(),
                        [&](const auto& e) { return e.second == column; });
  };
  if (none_pending()) return true;
  const bool done = cv_.wait_until(lock, deadline, none_pending);
  lock.unlock();
  spdlog::info("vector query {} {:.0f} ms for the base index checkpoint load{}",
               done ? "waited" : "gave up waiting after",
               std::chrono::duration<double, std::milli>(shard::Clock::now() - t0).count(),
               done ? "" : " (--index-load-wait-ms); it scans the base exactly meanwhile");
  return done;
}

format::BaseIndexCheckpoint BaseTable::WriteCheckpoint(const index::ColumnIndex& idx,
                                                       int64_t rows) {
  format::BaseIndexCheckpoint c;
  auto bytes = idx.Serialize();
  if (!bytes.ok()) {
    spdlog::warn("base index '{}': checkpoint not written: {}", idx.spec().name,
                 bytes.status().ToString());
    return c;
  }
  const std::string rel = "_indices/" + idx.spec().uuid + "/" + format::RandomHex(16) + ".idx";
  if (Status st = store_->PutIfAbsent(table_prefix_ + "/" + rel, *bytes); !st.ok()) {
    spdlog::warn("base index '{}': checkpoint not written: {}", idx.spec().name, st.ToString());
    return c;
  }
  c.set_name(idx.spec().name);
  c.set_uuid(idx.spec().uuid);
  c.set_path(rel);
  c.set_rows(rows);
  c.set_bytes(static_cast<int64_t>(bytes->size()));
  return c;
}

void BaseTable::CommitCheckpoint(const format::BaseIndexCheckpoint& c) {
  if (c.path().empty()) return;
  CommitFn commit;
  format::BaseTable next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    commit = commit_;
    next = state_;
  }
  Status st = Status::Invalid("no commit step (maintenance not started)");
  if (commit != nullptr) {
    format::BaseIndexCheckpoint* slot = nullptr;
    for (int i = 0; i < next.indexes_size(); ++i) {
      if (next.indexes(i).name() == c.name()) slot = next.mutable_indexes(i);
    }
    if (slot == nullptr) slot = next.add_indexes();
    *slot = c;
    st = commit(next, [] { return Status::OK(); });
  }
  if (!st.ok()) {
    spdlog::warn("base index '{}': checkpoint not committed: {}", c.name(), st.ToString());
    if (st.code() != StatusCode::kInternal) (void)store_->Remove(table_prefix_ + "/" + c.path());
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  state_ = next;
}

void BaseTable::Checkpoint(const index::ColumnIndex& idx, int64_t rows) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (commit_ == nullptr) return;
  }
  CommitCheckpoint(WriteCheckpoint(idx, rows));
}

Result<GcStats> BaseTable::RunGc(const GcFn& gc) {
  std::unique_lock<std::mutex> work(work_mu_, std::try_to_lock);
  if (!work.owns_lock()) {
    return Status::AlreadyExists("a compaction of this table is running; garbage collection waits");
  }
  auto r = gc();
  std::lock_guard<std::mutex> lock(mu_);
  if (!r.ok()) {
    ++stats_.gc_failures;
    return r;
  }
  ++stats_.gc_runs;
  stats_.gc_files_removed += static_cast<uint64_t>(r->files_removed());
  stats_.gc_bytes_removed += static_cast<uint64_t>(r->bytes_removed);
  return r;
}

void BaseTable::MaintenanceLoop() {
  auto last_gc = shard::Clock::now();
  bool gc_due = false;  // a compaction committed since the last GC
  auto run_gc = [&] {
    if (!options_.gc || gc_ == nullptr) return;
    auto r = RunGc(gc_);
    if (r.ok()) {  // CollectGarbage logs what it removed
      gc_due = false;
      last_gc = shard::Clock::now();
    } else if (!r.status().IsAlreadyExists()) {
      gc_due = false;  // retried at gc_interval, not at every poll
      last_gc = shard::Clock::now();
      spdlog::warn("table '{}': garbage collection failed: {}", table_prefix_,
                   r.status().ToString());
    }
  };
  // A base rewrite when dead rows reach the trigger (base_rewrite.cc).
  auto rewrite_retry = shard::Clock::time_point{};
  auto maybe_rewrite = [&] {
    const ShardList shards = ShardsNow();
    if (!options_.background || shards.empty() || shard::Clock::now() < rewrite_retry ||
        !RewriteDue()) {
      return;
    }
    {
      // Not while the index builder works (a checkpoint load at open, a training): the rewrite
      // rebuilds only complete indexes, and a build straddling it starts over.
      std::lock_guard<std::mutex> busy(mu_);
      if (building_ || index_work_) return;
    }
    // No practical deadline (Stop cancels it between batches): a rewrite that timed out would
    // have done its O(base) work for nothing, and the next attempt would again.
    const auto t0 = shard::Clock::now();
    auto r = Rewrite(shards, commit_, t0 + std::chrono::hours(24 * 365));
    if (!r.ok()) {
      // Not again before gc_interval, nor before 4x the failed attempt's duration.
      const auto took = shard::Clock::now() - t0;
      rewrite_retry =
          shard::Clock::now() + std::max<shard::Clock::duration>(options_.gc_interval, 4 * took);
      spdlog::warn("table '{}': base rewrite failed: {}", table_prefix_, r.status().ToString());
      return;
    }
    run_gc();  // removes the old fragments now (gc.h rule 2)
  };
  bool deferred = false;  // the last turn waited for a first training (throttle suspended)
  bool draining = false;  // a trigger fired; compact until no published SSTable is left
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    const bool background = options_.background;
    const ShardList shards = shards_;  // SetShards may add lanes between turns
    lock.unlock();
    // The idle rule (CompactionOptions::idle) only when no trigger fires: it takes what remains.
    bool idle = false;
    bool due = false;
    if (background && !shards.empty()) {
      bool backlog = false, healthy = true;
      for (const shard::ShardWriter* s : shards) {
        backlog = backlog || s->backlog().sstables > 0;
        healthy = healthy && s->health().ok();
      }
      if (CompactionDue(shards)) {
        due = true;
        draining = options_.drain_after_trigger;
      } else if (draining && backlog && healthy) {
        due = true;  // CompactionOptions::drain_after_trigger
      } else {
        draining = false;
        due = idle = IdleCompactionDue(shards, shard::Clock::now());
      }
    }
    // A due compaction waits for a first IVF training on L0 rows (file comment); writes are
    // not throttled meanwhile (no compaction could drain the backlog).
    const bool defer = due && DeferForFirstTraining(shards);
    if (defer != deferred) {
      throttle_->SetCompactionBlocked(defer);
      deferred = defer;
    }
    if (due && !defer) {
      // Waits for the work lock (a compaction by compact/, GC, or the index builder's short
      // install step) rather than failing Busy.
      std::unique_lock<std::mutex> work(work_mu_);
      // While writes run, a unit small enough to commit before they reach the stop
      // (WriteThrottle::CompactionUnit); the idle rule takes everything.
      const int64_t unit = idle || !options_.adaptive_unit ? 0 : throttle_->CompactionUnit();
      auto r = CompactHoldingWorkLock(shards, commit_, shard::Clock::now() + std::chrono::hours(1),
                                      unit);
      work.unlock();
      if (r.ok() && r->compacted_generations.empty()) draining = false;  // nothing to take
      if (idle && r.ok() && !r->compacted_generations.empty()) {
        std::lock_guard<std::mutex> count(mu_);
        ++stats_.idle_compactions;
      }
      // Collect right away: while compaction lags, a trigger fires on every turn, and GC
      // waiting for an idle turn would keep superseded checkpoints and WAL meanwhile.
      if (r.ok() && !r->compacted_generations.empty()) {
        run_gc();
        maybe_rewrite();
      }
      if (!r.ok() && !r.status().IsAlreadyExists()) {
        spdlog::warn("table '{}': background compaction failed: {}", table_prefix_,
                     r.status().ToString());
        lock.lock();
        cv_.wait_for(lock, options_.poll_interval * 5, [this] { return stop_; });
        continue;
      }
      lock.lock();
      // An idle turn that compacted nothing (a compact/ request holds the work lock) waits
      // for the next poll rather than asking again at once.
      if (idle && (!r.ok() || r->compacted_generations.empty())) {
        cv_.wait_for(lock, options_.poll_interval, [this] { return stop_; });
      }
      continue;
    }
    if (gc_due || shard::Clock::now() - last_gc >= options_.gc_interval) run_gc();
    if (!defer) maybe_rewrite();
    lock.lock();
    if (stop_) break;
    cv_.wait_for(lock, options_.poll_interval, [this] { return stop_ || wake_; });
    wake_ = false;
  }
}

}  // namespace strata::base
