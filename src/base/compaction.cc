// BaseTable::Compact: SSTables -> a base fragment (see base_table.h for the algorithm).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "arrow/compute/filter.h"
#include "base/base_index_build.h"
#include "base/base_table.h"
#include "base/lane_generations.h"
#include "format/deletion_vector.h"
#include "format/ids.h"
#include "index/column_index.h"
#include "sstable/sstable_reader.h"
#include "sstable/sstable_writer.h"

namespace strata::base {
namespace {

/// One shard's share of a compaction: its picked SSTables and the rows copied from them.
struct ShardPick {
  std::vector<const shard::SourceView*> sstables;  // ascending generation, contiguous
  std::vector<arrow::RecordBatchPtr> out;          // rows still live once compacted
  std::vector<std::pair<uint64_t, int64_t>> origins;
  int64_t rows_in = 0;
  uint64_t generation() const { return sstables.empty() ? 0 : sstables.back()->generation; }
};

}  // namespace

bool BaseTable::CompactionDue(const ShardList& shards) const {
  int64_t count = 0, bytes = 0;
  for (const shard::ShardWriter* shard : shards) {
    const shard::ShardDescription d = shard->Describe();
    if (d.state != "open") return false;
    count += static_cast<int64_t>(d.sstables.size());
    for (const auto& s : d.sstables) bytes += s.bytes;
  }
  return count >= options_.l0_trigger_count || (count > 0 && bytes >= options_.l0_trigger_bytes);
}

bool BaseTable::IdleCompactionDue(const ShardList& shards, shard::Clock::time_point now) const {
  // Cheap on every poll of a quiet table: three reads under each shard's lock, no Describe.
  if (options_.idle.count() <= 0 || shards.empty()) return false;
  bool backlog = false;
  for (const shard::ShardWriter* shard : shards) {
    if (now - shard->last_write() < options_.idle || !shard->health().ok()) return false;
    backlog = backlog || shard->backlog().sstables > 0;
  }
  return backlog;
}

std::vector<uint64_t> BaseTable::CompactedByLane(const format::BaseTable& state,
                                                 const ShardList& shards) {
  std::vector<uint64_t> by_lane;
  for (const shard::ShardWriter* shard : shards) {
    auto it = state.compacted_generation().find(shard->shard_id());
    by_lane.push_back(it == state.compacted_generation().end() ? 0 : it->second);
  }
  return by_lane;
}

Result<CompactionResult> BaseTable::Compact(const ShardList& shards, const CommitFn& commit,
                                            shard::Deadline deadline) {
  // An empty base whose IVF definition awaits its first training: wait for it (bounded), as
  // the maintenance thread does, rather than commit a base every query scans exactly for the
  // training's duration (the 2M benchmark's explicit settle at 100k: 110 s at 46-79 q/s).
  while (DeferForFirstTraining(shards) && shard::Clock::now() < deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    if (stop_) break;
    cv_.wait_until(lock, std::min(deadline, shard::Clock::now() + std::chrono::milliseconds(100)));
  }
  std::unique_lock<std::mutex> work(work_mu_, std::try_to_lock);
  if (!work.owns_lock()) {
    return Status::AlreadyExists(
        "a compaction or base index build of this table is already running");
  }
  return CompactHoldingWorkLock(shards, commit, deadline);
}

Result<CompactionResult> BaseTable::CompactHoldingWorkLock(const ShardList& shards,
                                                           const CommitFn& commit,
                                                           shard::Deadline deadline,
                                                           int64_t max_sstables) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return Status::Invalid("the table is closed");
  }
  const auto t0 = shard::Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.running = 1;
  }
  auto r = CompactLocked(shards, commit, deadline, max_sstables);
  if (!r.ok() && r.status().IsAlreadyExists()) {
    // A put-if-absent collision inside the compaction (e.g. the table manifest version taken)
    // is a failed attempt, retried after a pause, not "a compaction is already running".
    r = Status::IOError("compaction commit collided with an existing object: " +
                        r.status().message());
  }
  const double seconds = std::chrono::duration<double>(shard::Clock::now() - t0).count();
  // Writers stopped by the backlog read it again; the rate follows the compaction's pace.
  throttle_->NoteCompaction(r.ok() ? r->rows_in : 0, seconds);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.running = 0;
  if (!r.ok()) {
    ++stats_.compaction_failures;
    return r;
  }
  r->seconds = seconds;
  if (!r->compacted_generations.empty()) {
    ++stats_.compactions;
    stats_.rows_compacted += static_cast<uint64_t>(r->rows_in);
    stats_.bytes_compacted += static_cast<uint64_t>(r->bytes_written);
    stats_.compaction_seconds_total += r->seconds;
  }
  return r;
}

Result<CompactionResult> BaseTable::CompactLocked(const ShardList& shards, const CommitFn& commit,
                                                  shard::Deadline deadline, int64_t max_sstables) {
  CompactionResult result;
  if (shards.empty()) return Status::Invalid("compaction: the base serves no shard");
  const bool shared = shards.size() > 1 || shared_.load(std::memory_order_acquire);
  // 1. The oldest published SSTables of each shard, ascending generation. `max_sstables` and
  // max_rows_per_compaction bound the whole compaction; each shard with a published SSTable
  // gives at least one.
  std::vector<std::shared_ptr<const shard::ShardSnapshot>> snaps;
  for (shard::ShardWriter* shard : shards) {
    STRATA_ASSIGN_OR_RETURN(auto snap, shard->Snapshot());
    snaps.push_back(std::move(snap));
  }
  std::vector<ShardPick> picks(shards.size());
  int64_t rows_in = 0, sstables = 0, picked = 0;
  for (size_t i = 0; i < shards.size(); ++i) {
    ShardPick& p = picks[i];
    for (const auto& src : snaps[i]->sources) {
      if (src.memtable || src.generation == 0) continue;
      ++sstables;
      const bool full =
          !p.sstables.empty() &&
          (rows_in + src.num_rows > options_.max_rows_per_compaction ||
           (max_sstables > 0 && picked >= max_sstables) || shard::Clock::now() > deadline);
      if (full || (!p.sstables.empty() && p.sstables.back()->generation + 1 != src.generation)) {
        continue;
      }
      p.sstables.push_back(&src);
      p.rows_in += src.num_rows;
      rows_in += src.num_rows;
      ++picked;
    }
  }
  result.sstables_remaining = sstables - picked;
  if (picked == 0) {
    std::lock_guard<std::mutex> lock(mu_);
    result.base_compactions = state_.compactions();
    return result;
  }
  result.rows_in = rows_in;
  // Writers are slowed from here only as far as this compaction's commit needs (write_throttle.h).
  throttle_->NoteCompactionStart(picked, rows_in);

  // 2. Rows still live once each shard's picked generations are compacted, with their
  // origins; the fragment holds shard 0's rows, then shard 1's, ... (keys never cross shards,
  // so the order between shards does not matter).
  std::vector<arrow::RecordBatchPtr> out;
  for (ShardPick& p : picks) {
    // An SSTable's marks are its own shard's (lane 0 of its liveness).
    const LaneGenerations own({p.generation()});
    for (const shard::SourceView* src : p.sstables) {
      result.compacted_generations.push_back(src->generation);
      for (size_t k = 0; k < src->batches.size(); ++k) {
        const arrow::RecordBatchPtr& batch = src->batches[k];
        const int64_t start = src->batch_starts[k];
        const int64_t n = batch->num_rows();
        std::vector<uint8_t> bits(static_cast<size_t>((n + 7) / 8), 0);
        int64_t kept = 0;
        for (int64_t i = 0; i < n; ++i) {
          if (own.DeadUpTo(src->liveness->Mark(start + i), 0)) continue;
          bits[static_cast<size_t>(i >> 3)] |= static_cast<uint8_t>(1u << (i & 7));
          p.origins.emplace_back(src->generation, start + i);
          ++kept;
        }
        if (kept == 0) continue;
        if (kept == n) {
          p.out.push_back(batch);
        } else {
          STRATA_ASSIGN_OR_RETURN(auto f, arrow::compute::FilterBatch(*batch, bits.data(), 0));
          p.out.push_back(std::move(f));
        }
      }
    }
    out.insert(out.end(), p.out.begin(), p.out.end());
  }
  size_t copied = 0;
  uint64_t top = 0;
  for (const ShardPick& p : picks) copied += p.origins.size(), top = std::max(top, p.generation());

  format::BaseTable next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    next = state_;
  }
  const uint64_t version = next.compactions() + 1;
  std::vector<std::string> written;  // keys to remove if the commit fails
  auto cleanup = [&] {
    for (const auto& key : written) (void)store_->Remove(key);
  };

  // 3. The fragment.
  const std::string frag_prefix = FragmentsPrefix(table_prefix_);
  std::shared_ptr<const sstable::SSTableReader> fragment;
  const int64_t first = source_->rows();
  if (copied > 0) {
    sstable::SSTableInput in;
    in.generation = top;  // names the fragment's directory (..._gen_{g}) only
    in.schema = source_->storage_schema();
    in.batches = out;
    in.key_columns = key_columns_;
    sstable::SSTableWriteOptions wo;
    wo.compression = arrow::ipc::Compression::kNone;  // used in place later (mmap)
    STRATA_ASSIGN_OR_RETURN(format::SSTableEntry entry,
                            sstable::WriteSSTable(*store_, frag_prefix, in, wo));
    auto reader = sstable::SSTableReader::Open(*store_, frag_prefix, entry.path(),
                                               /*load_indexes=*/false);
    if (!reader.ok()) {
      (void)sstable::RemoveSSTable(*store_, frag_prefix, entry.path());
      return reader.status();
    }
    fragment = std::move(*reader);
    format::BaseFragment* f = next.add_fragments();
    f->set_path(entry.path());
    f->set_first_row(first);
    f->set_rows(entry.rows());
    f->set_bytes(entry.bytes());
    result.rows_written = entry.rows();
    result.bytes_written += entry.bytes();
  }
  auto remove_fragment = [&] {
    if (fragment) (void)sstable::RemoveSSTable(*store_, frag_prefix, fragment->dir_name());
  };

  // 4. Deletion vectors of the older fragments: rows dead once the picked generations are
  // compacted, each mark judged by its own shard's (lane's) compacted generation.
  std::vector<uint64_t> lane_gens = CompactedByLane(next, shards);
  for (size_t i = 0; i < shards.size(); ++i) {
    if (!picks[i].sstables.empty()) lane_gens[i] = picks[i].generation();
  }
  const LaneGenerations dead_upto(lane_gens);
  const shard::Liveness& live = source_->liveness();
  for (int i = 0; i < next.fragments_size(); ++i) {
    format::BaseFragment* f = next.mutable_fragments(i);
    if (f->first_row() >= first) continue;  // the new fragment: copied rows only
    format::DeletionVector dv;
    for (int64_t p = 0; p < f->rows(); ++p) {
      if (dead_upto.Dead(live, f->first_row() + p)) dv.Add(static_cast<uint32_t>(p));
    }
    const int64_t dead = static_cast<int64_t>(dv.cardinality());
    if (dead == f->deleted_rows()) continue;
    // Unique per attempt: an attempt killed after this put and before its commit leaves the
    // file behind (an orphan for GC); a name fixed by (fragment, version) made every later
    // attempt collide with it until GC's orphan age, so compaction stalled after the crash.
    const std::string rel = "_deletions/" + f->path() + "-" + std::to_string(version) + "-" +
                            format::RandomHex(8) + ".bin";
    const std::string bytes = dv.Serialize();
    Status st = store_->PutIfAbsent(table_prefix_ + "/" + rel, bytes);
    if (!st.ok()) {
      cleanup();
      remove_fragment();
      return st;
    }
    written.push_back(table_prefix_ + "/" + rel);
    f->set_deletions_path(rel);
    f->set_deleted_rows(dead);
    result.bytes_written += static_cast<int64_t>(bytes.size());
  }

  // 5. The base indexes grown by the new rows. A live index is never written while readers
  // search it (hnswlib 0.6.2 searches read neighbour lists without locks, so an insert must
  // exclude them: growing the live graph would stall every query for the whole compaction):
  // the rows go into a copy, swapped in just before the commit. The copy costs O(base index
  // bytes) (a memory copy, about 1 s per million 128-d vectors) on top of the inserts.
  std::vector<index::IndexSpec> specs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    specs = specs_;
  }
  struct Grown {
    std::shared_ptr<index::ColumnIndex> before;  // null: the index is new
    std::shared_ptr<index::ColumnIndex> after;
  };
  std::vector<Grown> grown;
  bool missing = false;  // a definition without a complete base index: built after the install
  const int64_t total = first + result.rows_written;
  const auto built = source_->indexes();
  for (const auto& spec : specs) {
    std::shared_ptr<index::ColumnIndex> existing;
    for (const auto& i : built) {
      if (i->spec().name == spec.name && i->spec().uuid == spec.uuid) existing = i;
    }
    Grown g{existing, nullptr};
    if (existing != nullptr && existing->rows_indexed() >= first) {
      if (copied == 0) continue;  // no new row: the index stays as it is
      auto copy = existing->Clone(*source_->storage_schema());
      if (!copy.ok()) {
        cleanup();
        remove_fragment();
        return copy.status().WithContext("base index '" + spec.name + "'");
      }
      g.after = std::move(*copy);
    } else if (existing == nullptr && first == 0 && total > 0 &&
               !index::BaseIvfFor(spec).value_or(std::nullopt).has_value()) {
      // The base's first fragment: an HNSW / BTree / FTS index is created here (no training:
      // the same per-row work as a later compaction's grow). An IVF definition is trained by
      // the index builder off the work lock (below: missing), never inside a compaction.
      auto made = MakeBaseIndex(spec, *source_->storage_schema(), out, total);
      if (!made.ok()) {
        spdlog::warn("base index '{}' not created: {}", spec.name, made.status().ToString());
        missing = true;
        continue;
      }
      g.after = std::move(*made);
    } else {
      // No index, or one that does not cover the base yet: the index builder builds it and
      // catches up on these rows; the base answers exactly for the definition meanwhile.
      missing = missing || total > 0;
      continue;
    }
    int64_t pos = first;
    for (const auto& b : out) {
      Status st = g.after->IndexBatch(*b, pos);
      if (!st.ok()) {
        cleanup();
        remove_fragment();
        return st.WithContext("base index '" + spec.name + "'");
      }
      pos += b->num_rows();
    }
    // An IVF index trained on a quarter of the rows or fewer is retrained by the index builder
    // (base_index_build.h); it serves, grown by each compaction, until it is swapped in.
    missing = missing || NeedsRetrain(*g.after, total);
    grown.push_back(std::move(g));
  }
  for (const Grown& g : grown) {
    const auto& idx = g.after;
    int64_t saved = 0;
    int ci = -1;
    for (int i = 0; i < next.indexes_size(); ++i) {
      if (next.indexes(i).name() == idx->spec().name &&
          next.indexes(i).uuid() == idx->spec().uuid) {
        saved = next.indexes(i).rows();
        ci = i;
      }
    }
    if (total - saved < std::max(options_.min_checkpoint_rows, saved)) continue;
    auto bytes = idx->Serialize();
    if (!bytes.ok()) {
      spdlog::warn("base index '{}': checkpoint not written: {}", idx->spec().name,
                   bytes.status().ToString());
      continue;
    }
    const std::string rel = "_indices/" + idx->spec().uuid + "/" + format::RandomHex(16) + ".idx";
    Status st = store_->PutIfAbsent(table_prefix_ + "/" + rel, *bytes);
    if (!st.ok()) {
      spdlog::warn("base index '{}': checkpoint not written: {}", idx->spec().name, st.ToString());
      continue;
    }
    written.push_back(table_prefix_ + "/" + rel);
    format::BaseIndexCheckpoint* c = ci >= 0 ? next.mutable_indexes(ci) : next.add_indexes();
    c->set_name(idx->spec().name);
    c->set_uuid(idx->spec().uuid);
    c->set_path(rel);
    c->set_rows(total);
    c->set_bytes(static_cast<int64_t>(bytes->size()));
    result.bytes_written += static_cast<int64_t>(bytes->size());
  }
  // Checkpoints of dropped definitions are no longer referenced.
  for (int i = next.indexes_size(); i-- > 0;) {
    bool keep = false;
    for (const auto& s : specs)
      keep |= s.name == next.indexes(i).name() && s.uuid == next.indexes(i).uuid();
    if (!keep) next.mutable_indexes()->DeleteSubrange(i, 1);
  }

  // 6. Commit the table manifest and install in the read view, atomically for readers. One
  // install per shard that gave rows; with a shared base the fragment is appended once first.
  next.set_compactions(version);
  std::vector<shard::CompactionInstall> installs(shards.size());
  int64_t at = first;
  for (size_t i = 0; i < shards.size(); ++i) {
    if (picks[i].sstables.empty()) continue;
    (*next.mutable_compacted_generation())[shards[i]->shard_id()] = picks[i].generation();
    shard::CompactionInstall& in = installs[i];
    in.compacted_generation = picks[i].generation();
    in.origins = std::move(picks[i].origins);
    if (shared) {
      in.first_row = at;
      at += static_cast<int64_t>(in.origins.size());
    } else {
      in.fragment = fragment;
    }
  }
  auto install = [&]() -> Status {
    if (!shared) return shards[0]->InstallCompaction(installs[0]);
    // Every part is checked before the shared fragment is appended, so a refused part changes
    // nothing. The table holds its lock exclusively (CommitFn) and the work lock keeps other
    // compactions out, so the checks still hold at the installs.
    const int64_t rows = fragment ? fragment->num_rows() : 0;
    for (size_t i = 0; i < shards.size(); ++i) {
      if (picks[i].sstables.empty()) continue;
      STRATA_RETURN_IF_ERROR(shards[i]->CheckCompactionInstall(installs[i], rows));
    }
    if (fragment) source_->AppendFragment(fragment);
    for (size_t i = 0; i < shards.size(); ++i) {
      if (picks[i].sstables.empty()) continue;
      STRATA_RETURN_IF_ERROR(shards[i]->InstallCompaction(installs[i]));
    }
    return Status::OK();
  };
  // The grown indexes go live now: until the install, their new positions are past every
  // view's row count (never live), so readers lose nothing and see no new row early.
  for (const Grown& g : grown) source_->SetIndex(g.after);
  Status st = commit(next, install);
  if (!st.ok()) {
    // The indexes as they were (the next attempt reuses the new positions).
    for (const Grown& g : grown) {
      if (g.before != nullptr) {
        source_->SetIndex(g.before);
      } else {
        source_->RemoveIndex(g.after->spec().name);
      }
    }
    // Internal = the commit's outcome is unknown: the files may be referenced; garbage
    // collection removes them once no manifest does.
    if (st.code() != StatusCode::kInternal) {
      cleanup();
      remove_fragment();
    }
    return st;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = next;
    if (missing) {
      index_work_ = true;
      cv_.notify_all();
    }
  }
  result.base_compactions = version;
  // The compacted SSTables leave the shard manifest (garbage collection may then remove them).
  for (size_t i = 0; i < shards.size(); ++i) {
    if (picks[i].sstables.empty()) continue;
    Status sm = shards[i]->CommitCompactedSSTables();
    if (!sm.ok()) {
      spdlog::warn("shard '{}': manifest update after compaction failed: {}", shards[i]->shard_id(),
                   sm.ToString());
    }
  }
  return result;
}

}  // namespace strata::base
