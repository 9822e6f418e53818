// ShardWriter: the base tier (shard/base_source.h) in the write path and the read view, and
// the in-memory install of a committed compaction (src/base/compactor.h). See shard_writer.h.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "shard/shard_writer_impl.h"

namespace strata::shard {

void ShardWriter::Impl::LoadBaseLiveness() {
  if (base == nullptr) return;
  const BaseSource::State st = base->CurrentState();
  if (st.rows == 0) return;
  for (const auto& t : sstables) {
    const sstable::PkIndex& pk = t->pk_index();
    for (int64_t k = 0; k < pk.size(); ++k) {
      base->MarkKey(st, pk.key(k), Liveness::kDead, options.base_lane);
    }
  }
}

void ShardWriter::Impl::MarkBaseRow(const BaseSource::State& state, std::string_view key,
                                    uint64_t seq) {
  base->MarkKey(state, key, seq, options.base_lane);
}

std::optional<SourceView> ShardWriter::Impl::BaseViewLocked(
    const std::shared_ptr<const Visibility>& vis) const {
  // A base shared by several shards is read once by the table's view, not by each shard's.
  if (base == nullptr || !options.base_in_view) return std::nullopt;
  return base->View(base->CurrentState(), vis, specs,
                    layout.rowid_column < 0 ? layout.key_columns : std::vector<int>{});
}

std::shared_ptr<BaseSource> ShardWriter::base() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->base;
}

uint64_t ShardWriter::compacted_generation() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->compacted_generation;
}

// Besides answering, a lost ownership makes the writer FENCED (sticky, replacing a poison):
// a poisoned writer whose shard another writer claimed meanwhile must not be reopened by the
// table's recovery (table/writer_recovery.h), which checks this first.
Status ShardWriter::CheckOwner() const {
  STRATA_ASSIGN_OR_RETURN(auto latest, impl_->manifests->LoadLatest());
  if (!latest.has_value() || latest->writer_epoch() != impl_->epoch) {
    Status fenced =
        Status::Fenced("shard '" + impl_->shard_id + "': writer epoch " +
                       std::to_string(impl_->epoch) + " is no longer the owner (manifest epoch " +
                       std::to_string(latest.has_value() ? latest->writer_epoch() : 0) + ")");
    Impl& s = *impl_;
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.sticky.code() != StatusCode::kFenced) {
      s.sticky = fenced;
      s.state_since = Clock::now();
      s.cv.notify_all();
    }
    return fenced;
  }
  return Status::OK();
}

namespace {

/// Index of the SSTable of `generation` among `sstables` (-1 when absent).
template <typename List>
int64_t SSTableIndex(const List& sstables, uint64_t generation) {
  for (size_t i = 0; i < sstables.size(); ++i) {
    if (sstables[i]->generation() == generation) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace

Status ShardWriter::Impl::CheckInstallLocked(const CompactionInstall& install,
                                             int64_t appended_rows) const {
  if (base == nullptr) return Status::Invalid("shard '" + shard_id + "' has no base");
  if (install.compacted_generation <= compacted_generation) {
    return Status::Invalid("compaction of generation " +
                           std::to_string(install.compacted_generation) +
                           " is already installed (compacted_generation " +
                           std::to_string(compacted_generation) + ")");
  }
  const int64_t n = static_cast<int64_t>(install.origins.size());
  if (install.first_row < 0) {
    const int64_t frag_rows = install.fragment ? install.fragment->num_rows() : 0;
    if (n != frag_rows) {
      return Status::Invalid("compaction install: " + std::to_string(n) + " origins for " +
                             std::to_string(frag_rows) + " rows");
    }
  } else if (options.base_in_view || install.first_row + n > base->rows() + appended_rows) {
    return Status::Invalid("compaction install: shard '" + shard_id + "' rows [" +
                           std::to_string(install.first_row) + ", " +
                           std::to_string(install.first_row + n) +
                           ") are not in a base shared by several shards");
  }
  for (const auto& [gen, pos] : install.origins) {
    if (gen > install.compacted_generation || SSTableIndex(sstables, gen) < 0) {
      return Status::Invalid("compaction install: row origin generation " + std::to_string(gen) +
                             " is not a published SSTable at or below " +
                             std::to_string(install.compacted_generation));
    }
  }
  return Status::OK();
}

Status ShardWriter::CheckCompactionInstall(const CompactionInstall& install,
                                           int64_t appended_rows) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->CheckInstallLocked(install, appended_rows);
}

Status ShardWriter::InstallCompaction(const CompactionInstall& install) {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  STRATA_RETURN_IF_ERROR(s.CheckInstallLocked(install, 0));
  auto index_of = [&](uint64_t gen) { return SSTableIndex(s.sstables, gen); };
  int64_t first = install.first_row;
  if (first < 0) {
    first = s.base->rows();
    if (install.fragment) s.base->AppendFragment(install.fragment);
  }
  // Marks set on the SSTable rows (by rows of newer generations, possibly while the compaction
  // ran) carry over to their copies.
  std::vector<std::pair<int64_t, uint64_t>> carried;
  for (size_t i = 0; i < install.origins.size(); ++i) {
    const auto& [gen, pos] = install.origins[i];
    const uint64_t m = s.sstable_live[static_cast<size_t>(index_of(gen))]->Mark(pos);
    if (m != Liveness::kNone) carried.emplace_back(first + static_cast<int64_t>(i), m);
  }
  s.base->CarryMarks(carried, s.options.base_lane);
  s.base->FoldCarried(install.compacted_generation, s.options.base_lane);
  s.compacted_generation = install.compacted_generation;
  for (size_t i = s.sstables.size(); i-- > 0;) {
    if (s.sstables[i]->generation() <= install.compacted_generation) {
      s.sstables.erase(s.sstables.begin() + static_cast<std::ptrdiff_t>(i));
      s.sstable_live.erase(s.sstable_live.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  s.index_tasks.erase(std::remove_if(s.index_tasks.begin(), s.index_tasks.end(),
                                     [&](const Impl::IndexTask& t) {
                                       return t.sstable != nullptr &&
                                              t.sstable->generation() <=
                                                  install.compacted_generation;
                                     }),
                      s.index_tasks.end());
  s.visible_epoch.fetch_add(1);
  s.cv.notify_all();
  return Status::OK();
}

Status ShardWriter::InstallRewrite(const RewriteInstall& install) {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.base == nullptr) return Status::Invalid("shard '" + s.shard_id + "' has no base");
  // Marks and lanes are read and the rows swapped under the base's mark lock: no shard's mark
  // made meanwhile is lost.
  STRATA_RETURN_IF_ERROR(
      s.base->ReplaceFrom(install.base_epoch, install.fragments, install.indexes, install.origins));
  s.visible_epoch.fetch_add(1);
  s.cv.notify_all();
  return Status::OK();
}

format::ShardManifest ShardWriter::committed_manifest() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->manifest;
}

void ShardWriter::InvalidateViews() { impl_->visible_epoch.fetch_add(1); }

Status ShardWriter::CommitCompactedSSTables() {
  Impl& s = *impl_;
  uint64_t upto = 0;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    upto = s.compacted_generation;
    bool any = false;
    for (const auto& e : s.manifest.sstables()) any |= e.generation() <= upto;
    if (!any) return Status::OK();
  }
  auto edit = [upto](format::ShardManifest& m) -> Status {
    auto* list = m.mutable_sstables();
    list->erase(
        std::remove_if(list->begin(), list->end(),
                       [upto](const format::SSTableEntry& e) { return e.generation() <= upto; }),
        list->end());
    m.set_created_at_micros(0);
    return Status::OK();
  };
  STRATA_ASSIGN_OR_RETURN(format::ShardManifest committed, s.manifests->Update(s.epoch, edit));
  std::lock_guard<std::mutex> lock(s.mu);
  if (committed.version() > s.manifest.version()) s.manifest = std::move(committed);
  return Status::OK();
}

}  // namespace strata::shard
