// ShardWriter's index definitions (shard_writer.h): SetIndexes, per-index progress, and the
// indexer thread that backfills MemTable indexes and builds the SSTable index files of
// definitions added after those MemTables and SSTables were written.
#include "shard/shard_writer.h"

#include <spdlog/spdlog.h>

#include "memtable/memtable.h"
#include "shard/shard_writer_impl.h"
#include "sstable/index_files.h"

namespace strata::shard {

// ----------------------------------------------------------------------------------------
// Indexes

Status ShardWriter::SetIndexes(std::vector<index::IndexSpec> new_specs) {
  Impl& s = *impl_;
  for (const auto& spec : new_specs) {
    STRATA_RETURN_IF_ERROR(index::ValidateIndexSpec(spec, *s.layout.storage_schema));
  }
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.closed) return Status::Invalid("shard '" + s.shard_id + "' writer is closed");
  auto same = [](const index::IndexSpec& a, const index::IndexSpec& b) {
    return a.name == b.name && a.uuid == b.uuid;
  };
  std::vector<GenPtr> gens(s.frozen.begin(), s.frozen.end());
  gens.push_back(s.active);
  for (const auto& old : s.specs) {
    bool kept = false;
    for (const auto& n : new_specs) kept |= same(old, n);
    if (kept) continue;
    for (const auto& g : gens) g->mt->DropIndex(old.name);
  }
  std::vector<index::IndexSpec> added;
  for (const auto& n : new_specs) {
    bool existed = false;
    for (const auto& old : s.specs) existed |= same(old, n);
    if (!existed) added.push_back(n);
  }
  s.specs = std::move(new_specs);
  for (const auto& spec : added) {
    // A definition the MemTables do not keep is built at flush (FlushOne) and for SSTables.
    for (const auto& g : s.MemTableKeeps(spec) ? gens : std::vector<GenPtr>{}) {
      auto entry = g->mt->AddIndex(spec);
      if (!entry.ok()) {
        spdlog::error("shard '{}': index '{}' not added to generation {}: {}", s.shard_id,
                      spec.name, g->generation, entry.status().ToString());
        continue;
      }
      if (!(*entry)->complete.load()) s.index_tasks.push_back({g, *entry, nullptr, spec});
    }
    s.QueueSSTableBuilds(spec);
  }
  s.visible_epoch.fetch_add(1);
  s.cv.notify_all();
  return Status::OK();
}

std::vector<IndexProgress> ShardWriter::IndexProgressAll() const {
  const Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  // Rows are counted as LanceDB does: the live rows of each source (not its physical row
  // versions), read from a view built now.
  const ShardSnapshot view = s.BuildViewLocked();
  std::vector<IndexProgress> out;
  for (const auto& spec : s.specs) {
    IndexProgress p;
    p.spec = spec;
    size_t v = 0;
    if (!view.sources.empty() && !view.sources[0].memtable && view.sources[0].generation == 0) {
      const SourceView& base = view.sources[v++];  // the base (BaseViewLocked) comes first
      bool has = false;
      for (const auto& i : base.indexes) {
        if (i->spec().uuid == spec.uuid) {
          has = true;
          p.size_bytes += i->memory_bytes();
        }
      }
      (has ? p.num_indexed_rows : p.num_unindexed_rows) += base.live_rows;
    }
    for (const auto& t : s.sstables) {
      bool has = false;
      for (const auto& i : t->indexes()) {
        if (i->spec().uuid == spec.uuid) {
          has = true;
          p.size_bytes += i->memory_bytes();
        }
      }
      (has ? p.num_indexed_rows : p.num_unindexed_rows) += view.sources[v++].live_rows;
    }
    std::vector<GenPtr> gens(s.frozen.begin(), s.frozen.end());
    gens.push_back(s.active);
    for (const auto& g : gens) {
      bool has = false;
      for (const auto& e : g->mt->IndexEntries()) {
        if (e->index->spec().uuid == spec.uuid && e->complete.load() && !e->failed.load()) {
          has = true;
          p.size_bytes += e->index->memory_bytes();
        }
      }
      (has ? p.num_indexed_rows : p.num_unindexed_rows) += view.sources[v++].live_rows;
    }
    out.push_back(std::move(p));
  }
  return out;
}

void ShardWriter::Impl::IndexerLoop() {
  std::unique_lock<std::mutex> lock(mu);
  while (true) {
    cv.wait(lock, [&] { return closed || !index_tasks.empty(); });
    if (closed) return;
    IndexTask task = std::move(index_tasks.front());
    index_tasks.pop_front();
    if (!SpecCurrent(task.spec)) continue;
    if (task.entry != nullptr && !MemTableKeeps(task.spec)) continue;  // dropped from MemTables
    indexer_busy = true;
    lock.unlock();
    RunIndexTask(task);
    lock.lock();
    indexer_busy = false;
    visible_epoch.fetch_add(1);
    cv.notify_all();
  }
}

void ShardWriter::Impl::RunIndexTask(const IndexTask& task) {
  if (task.entry != nullptr) {
    Status st = task.gen->mt->Backfill(task.entry);
    if (!st.ok()) {
      spdlog::error("shard '{}': backfill of index '{}' in generation {} failed: {}", shard_id,
                    task.spec.name, task.gen->generation, st.ToString());
    }
    return;
  }
  const auto& t = task.sstable;
  auto built = index::ColumnIndex::Build(task.spec, *layout.storage_schema, t->batches());
  if (!built.ok()) {
    spdlog::error("shard '{}': index '{}' for SSTable {} not built: {}", shard_id, task.spec.name,
                  t->dir_name(), built.status().ToString());
    return;
  }
  if ((*built)->hnsw() != nullptr && (*built)->hnsw()->size() == 0) {
    t->AttachIndex(std::move(*built));  // nothing to index: no file (as at flush)
    return;
  }
  auto written = sstable::WriteIndexFile(*store, shard_prefix, t->dir_name(), **built);
  if (!written.ok()) {
    spdlog::error("shard '{}': index '{}' for SSTable {} not written: {}", shard_id, task.spec.name,
                  t->dir_name(), written.status().ToString());
    return;
  }
  t->AttachIndex(std::move(*built));
}

}  // namespace strata::shard
