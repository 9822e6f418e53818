// ShardWriter's seal and flush (shard_writer.h): force_seal_active returns the generation it
// sealed, waits are bounded by that generation, and the flusher thread writes frozen
// MemTables to SSTables and publishes them in the shard manifest.
#include "shard/shard_writer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "format/shard_manifest.h"
#include "memtable/memtable.h"
#include "shard/shard_writer_impl.h"
#include "sstable/index_files.h"
#include "sstable/sstable_reader.h"
#include "sstable/sstable_writer.h"

namespace strata::shard {

// ----------------------------------------------------------------------------------------
// Seal and waits

Result<std::optional<SealedGeneration>> ShardWriter::force_seal_active() {
  Impl& s = *impl_;
  std::unique_lock<std::mutex> lock(s.mu);
  STRATA_RETURN_IF_ERROR(s.CheckWritable());
  if (s.active->rows == 0) return std::optional<SealedGeneration>();
  if (s.active->txn_held > 0) {
    // A MemTable holding prepared parts is not sealed (GenState::txn_held): stop new parts
    // and wait for these to publish or abort, a bounded wait (one record put each).
    ++s.seal_barrier;
    const GenPtr holding = s.active;
    s.cv.wait(lock, [&] { return holding->txn_held == 0 || !s.sticky.ok() || s.closed; });
    --s.seal_barrier;
    s.cv.notify_all();
    STRATA_RETURN_IF_ERROR(s.CheckWritable());
    if (s.active->rows == 0) return std::optional<SealedGeneration>();
  }
  GenPtr sealed = s.active;
  STRATA_RETURN_IF_ERROR(s.SealActive());
  // Every put that reached `sealed` was enqueued before the seal; wait until they settle so
  // rows and last_wal_position are final (a prepared multi-shard part: until published).
  s.cv.wait(lock, [&] {
    return (sealed->pending == 0 && sealed->txn_held == 0) || !s.sticky.ok() || s.closed;
  });
  if (sealed->pending > 0 || sealed->txn_held > 0)
    return s.sticky.ok() ? s.CheckWritable() : s.sticky;
  SealedGeneration out;
  out.shard_id = s.shard_id;
  out.generation = sealed->generation;
  out.last_wal_position = sealed->last_wal_position.load();
  out.rows = sealed->rows;
  return std::optional<SealedGeneration>(out);
}

std::optional<uint64_t> ShardWriter::newest_unpublished_generation() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->frozen.empty()) return std::nullopt;
  return impl_->frozen.back()->generation;
}

Status ShardWriter::wait_for_generation(uint64_t generation, Deadline deadline) {
  Impl& s = *impl_;
  std::unique_lock<std::mutex> lock(s.mu);
  auto done = [&] { return s.manifest.current_generation() > generation; };
  while (!done()) {
    if (!s.sticky.ok()) return s.sticky;
    if (s.closed) return Status::Invalid("shard '" + s.shard_id + "' writer is closed");
    if (s.cv.wait_until(lock, deadline) == std::cv_status::timeout && !done()) {
      if (!s.sticky.ok()) return s.sticky;
      return Status::Timeout("shard '" + s.shard_id + "': generation " +
                             std::to_string(generation) +
                             " is not flushed yet (current_generation " +
                             std::to_string(s.manifest.current_generation()) + ")");
    }
  }
  return Status::OK();
}

Status ShardWriter::wait_for_flush_drain(Deadline deadline) {
  Impl& s = *impl_;
  std::unique_lock<std::mutex> lock(s.mu);
  while (!s.frozen.empty()) {
    if (!s.sticky.ok()) return s.sticky;
    if (s.closed) return Status::Invalid("shard '" + s.shard_id + "' writer is closed");
    if (s.cv.wait_until(lock, deadline) == std::cv_status::timeout && !s.frozen.empty()) {
      return Status::Timeout("shard '" + s.shard_id + "': " + std::to_string(s.frozen.size()) +
                             " MemTables still frozen (oldest generation " +
                             std::to_string(s.frozen.front()->generation) + ")");
    }
  }
  return Status::OK();
}

// ----------------------------------------------------------------------------------------
// Flusher

void ShardWriter::Impl::FlusherLoop() {
  std::unique_lock<std::mutex> lock(mu);
  while (!closed) {
    if (sticky.ok() && SealDue()) {
      Status st = SealActive();
      if (!st.ok()) FailWrites(st);
    }
    const bool ready = sticky.ok() && !frozen.empty() && frozen.front()->pending == 0 &&
                       frozen.front()->indexing == 0 && frozen.front()->txn_held == 0;
    if (!ready) {
      // Wake up for the age trigger too.
      auto wait = std::min<Clock::duration>(options.max_memtable_age, std::chrono::seconds(1));
      if (active->rows > 0) {
        auto left = options.max_memtable_age - active->mt->age();
        wait = std::max<Clock::duration>(std::min(wait, left), std::chrono::milliseconds(1));
      }
      cv.wait_for(lock, wait);
      continue;
    }
    GenPtr g = frozen.front();
    const std::vector<index::IndexSpec> flush_specs = specs;
    lock.unlock();
    const auto t0 = Clock::now();
    format::ShardManifest committed;
    std::shared_ptr<const sstable::SSTableReader> reader;
    Status st = FlushOne(g, flush_specs, &committed, &reader);
    lock.lock();
    if (st.ok()) {
      // A compaction's manifest update (CommitCompactedSSTables) may have committed a newer one.
      if (committed.version() > manifest.version()) manifest = std::move(committed);
      sstables.push_back(reader);
      sstable_live.push_back(g->live);  // same marks, same positions
      // Definitions created while this generation was flushing.
      for (const auto& spec : specs) {
        bool has = false;
        for (const auto& i : reader->indexes()) has |= i->spec().uuid == spec.uuid;
        if (!has) index_tasks.push_back({nullptr, nullptr, reader, spec});
      }
      frozen.pop_front();
      ++stats.flushes;
      const double flush_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      stats.flush_seconds_total += flush_seconds;
      size_t bucket = 0;
      while (bucket < ShardWriterStats::kFlushSecondsBounds.size() &&
             flush_seconds > ShardWriterStats::kFlushSecondsBounds[bucket]) {
        ++bucket;
      }
      ++stats.flush_seconds_histogram[bucket];
      visible_epoch.fetch_add(1);
      cv.notify_all();
      if (options.on_publish) {
        lock.unlock();
        options.on_publish();
        lock.lock();
      }
    } else if (!closed || !st.IsInvalid()) {
      if (st.code() == StatusCode::kFenced) {
        FailWrites(st);
      } else {
        spdlog::error("shard '{}': flush of generation {} failed for good: {}", shard_id,
                      g->generation, st.ToString());
        sticky = Status::WriterPoisoned(
            "shard '" + shard_id + "': flush of generation " + std::to_string(g->generation) +
            " failed after retries: " + st.ToString() +
            "; the shard is reopened in the background once the store takes writes again");
        state_since = Clock::now();
        cv.notify_all();
      }
    }
  }
}

Status ShardWriter::Impl::FlushOne(const GenPtr& g,
                                   const std::vector<index::IndexSpec>& flush_specs,
                                   format::ShardManifest* committed,
                                   std::shared_ptr<const sstable::SSTableReader>* reader) {
  const memtable::MemTableSnapshot snap = g->mt->Snapshot();
  sstable::SSTableInput input;
  input.generation = g->generation;
  input.schema = layout.storage_schema;
  input.batches = snap.batches;
  input.key_columns = layout.key_columns;
  {
    // Frozen and settled: no row of g is inserted any more, so cross_marks is final.
    std::map<uint64_t, format::DeletionVector> by_gen;
    for (const auto& [gen, pos] : g->cross_marks) by_gen[gen].Add(static_cast<uint32_t>(pos));
    for (auto& [gen, dv] : by_gen) input.supersedes.generations.emplace_back(gen, std::move(dv));
  }
  // Every definition's index over exactly these rows: the MemTable's when complete (it holds
  // every row: nothing is pending or indexing), else built now.
  const auto entries = g->mt->IndexEntries();
  for (const auto& spec : flush_specs) {
    std::shared_ptr<const index::ColumnIndex> idx;
    for (const auto& e : entries) {
      if (e->index->spec().uuid == spec.uuid && e->complete.load() && !e->failed.load() &&
          snap.num_rows == g->mt->num_rows()) {
        idx = e->index;
      }
    }
    if (idx == nullptr) {
      auto built = index::ColumnIndex::Build(spec, *layout.storage_schema, snap.batches);
      if (!built.ok()) {
        spdlog::error("shard '{}': index '{}' of generation {} not built: {}", shard_id, spec.name,
                      g->generation, built.status().ToString());
        continue;
      }
      idx = std::move(*built);
    }
    input.indexes.push_back(std::move(idx));
  }
  const uint64_t last_pos = std::max(g->last_wal_position.load(), snap.last_wal_position);
  auto backoff = options.flush_retry_backoff;
  Status last;
  for (int attempt = 0; attempt <= options.flush_retries; ++attempt) {
    if (attempt > 0) {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, backoff, [&] { return closed; });
      if (closed) return Status::Invalid("closed during flush retry");
      backoff *= 2;
    }
    auto entry = sstable::WriteSSTable(*store, shard_prefix, input);
    if (!entry.ok()) {
      last = entry.status();
      std::lock_guard<std::mutex> lock(mu);
      ++stats.flush_failures;
      spdlog::warn("shard '{}': flush of generation {} attempt {} failed: {}", shard_id,
                   g->generation, attempt + 1, last.ToString());
      continue;
    }
    bool already = false;
    auto edit = [&](format::ShardManifest& m) -> Status {
      if (m.current_generation() > g->generation) {
        already = true;  // an earlier attempt committed but reported an error
        return Status::OK();
      }
      if (m.current_generation() != g->generation) {
        return Status::Internal("shard '" + shard_id + "': flushing generation " +
                                std::to_string(g->generation) + " but current_generation is " +
                                std::to_string(m.current_generation()));
      }
      *m.add_sstables() = *entry;
      m.set_current_generation(g->generation + 1);
      m.set_replay_after_wal_entry_position(
          std::max(m.replay_after_wal_entry_position(), last_pos));
      m.set_wal_entry_position_last_seen(
          std::max(m.wal_entry_position_last_seen(), wal->last_durable_position()));
      m.set_created_at_micros(0);
      return Status::OK();
    };
    auto updated = manifests->Update(epoch, edit);
    if (!updated.ok()) {
      last = updated.status();
      Status rm = sstable::RemoveSSTable(*store, shard_prefix, entry->path());
      (void)rm;
      if (last.code() == StatusCode::kFenced || last.code() == StatusCode::kInternal) return last;
      std::lock_guard<std::mutex> lock(mu);
      ++stats.flush_failures;
      spdlog::warn("shard '{}': manifest commit of generation {} attempt {} failed: {}", shard_id,
                   g->generation, attempt + 1, last.ToString());
      continue;
    }
    if (already) {
      Status rm = sstable::RemoveSSTable(*store, shard_prefix, entry->path());
      (void)rm;
    }
    *committed = std::move(*updated);
    const format::SSTableEntry* published = nullptr;
    for (const auto& e : committed->sstables()) {
      if (e.generation() == g->generation) published = &e;
    }
    if (published == nullptr) return Status::Internal("published SSTable missing from manifest");
    auto r = sstable::SSTableReader::Open(*store, shard_prefix, *published,
                                          /*load_indexes=*/false);
    if (!r.ok()) return r.status();
    for (const auto& idx : input.indexes) (*r)->AttachIndex(idx);
    *reader = std::move(*r);
    return Status::OK();
  }
  return last;
}

}  // namespace strata::shard
