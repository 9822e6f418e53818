// BaseTable::Rewrite: garbage compaction of the base (see base_table.h "Base rewrite" and
// docs/COMPACTION.md). Copies the live rows into new fragments with positions 0..n-1, rebuilds
// the installed base indexes over them, commits one manifest naming only those, and installs
// them in the shard's read view with the marks made meanwhile carried over.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "arrow/compute/filter.h"
#include "base/base_index_build.h"
#include "base/base_table.h"
#include "base/lane_generations.h"
#include "format/ids.h"
#include "index/column_index.h"
#include "sstable/sstable_reader.h"
#include "sstable/sstable_writer.h"

namespace strata::base {
namespace {

int64_t BaseBytes(const format::BaseTable& b) {
  int64_t bytes = 0;
  for (const auto& f : b.fragments()) bytes += f.bytes();
  for (const auto& c : b.indexes()) bytes += c.bytes();
  return bytes;
}

}  // namespace

bool BaseTable::RewriteDue() const {
  if (options_.rewrite_dead_fraction <= 0) return false;
  const BaseStats s = stats();
  const int64_t dead = s.rows - s.live_rows;
  return s.rows > 0 && dead >= std::max<int64_t>(1, options_.rewrite_min_dead_rows) &&
         static_cast<double>(dead) >= options_.rewrite_dead_fraction * static_cast<double>(s.rows);
}

Result<RewriteResult> BaseTable::Rewrite(const ShardList& shards, const CommitFn& commit,
                                         shard::Deadline deadline) {
  std::unique_lock<std::mutex> work(work_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return Status::Invalid("the table is closed");
    stats_.running = 1;
  }
  // No compaction can drain L0 while the rewrite holds the work lock: writers are neither
  // slowed nor stopped meanwhile (L0 grows instead), as during a first IVF training.
  throttle_->SetCompactionBlocked(true);
  const auto t0 = shard::Clock::now();
  auto r = RewriteLocked(shards, commit, deadline);
  const double seconds = std::chrono::duration<double>(shard::Clock::now() - t0).count();
  throttle_->SetCompactionBlocked(false);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.running = 0;
  if (!r.ok()) {
    ++stats_.rewrite_failures;
    return r;
  }
  r->seconds = seconds;
  if (r->rows_before > 0) {
    ++stats_.rewrites;
    stats_.rewrite_rows_reclaimed += static_cast<uint64_t>(r->rows_before - r->rows_after);
    stats_.rewrite_bytes_reclaimed +=
        static_cast<uint64_t>(std::max<int64_t>(0, r->bytes_before - r->bytes_after));
    stats_.rewrite_seconds_total += seconds;
  }
  return r;
}

Result<RewriteResult> BaseTable::RewriteLocked(const ShardList& shards, const CommitFn& commit,
                                               shard::Deadline deadline) {
  RewriteResult result;
  format::BaseTable next;
  std::vector<index::IndexSpec> specs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    next = state_;
    specs = specs_;
  }
  // 1. The snapshot: no compaction, GC or index install runs (work_mu_), so rows are not
  // appended and compacted_generation holds; writers may still mark rows (carried at install).
  const shard::BaseSource::State st = source_->CurrentState();
  result.rows_before = st.rows;
  result.bytes_before = BaseBytes(next);
  if (st.rows == 0) return result;
  if (shards.empty()) return Status::Invalid("base rewrite: the base serves no shard");
  const std::vector<uint64_t> by_lane = CompactedByLane(next, shards);
  const LaneGenerations dead_upto(by_lane);
  // Names the fragments' directories (..._gen_{g}) only.
  const uint64_t g = *std::max_element(by_lane.begin(), by_lane.end());

  // 2. The rows still live once each shard's compacted generations are (a row marked only by
  // an uncompacted generation of its shard is copied: its mark carries over at install), in
  // base order.
  std::vector<arrow::RecordBatchPtr> out;
  std::vector<int64_t> origins;
  const auto batches = source_->Batches(st);
  const auto starts = source_->BatchStarts(st);
  for (size_t k = 0; k < batches.size(); ++k) {
    const arrow::RecordBatchPtr& batch = batches[k];
    const int64_t start = starts[k];
    const int64_t n = std::min<int64_t>(batch->num_rows(), st.rows - start);
    std::vector<uint8_t> bits(static_cast<size_t>((batch->num_rows() + 7) / 8), 0);
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (dead_upto.Dead(*st.live, start + i)) continue;
      bits[static_cast<size_t>(i >> 3)] |= static_cast<uint8_t>(1u << (i & 7));
      origins.push_back(start + i);
      ++kept;
    }
    if (kept == 0) continue;
    if (kept == batch->num_rows()) {
      out.push_back(batch);
    } else {
      STRATA_ASSIGN_OR_RETURN(auto f, arrow::compute::FilterBatch(*batch, bits.data(), 0));
      out.push_back(std::move(f));
    }
  }
  const int64_t total = static_cast<int64_t>(origins.size());
  result.rows_after = total;
  if (shard::Clock::now() > deadline) return Status::Timeout("base rewrite: deadline passed");

  // 3. The fragments (at most max_rows_per_compaction rows each), SSTable format as a
  // compaction writes them.
  const std::string frag_prefix = FragmentsPrefix(table_prefix_);
  std::vector<std::string> written_dirs;  // fragment directories, removed on failure
  std::vector<std::string> written;       // checkpoint keys, removed on failure
  auto cleanup = [&] {
    for (const auto& d : written_dirs) (void)sstable::RemoveSSTable(*store_, frag_prefix, d);
    for (const auto& key : written) (void)store_->Remove(key);
  };
  shard::RewriteInstall install;
  install.base_epoch = st.epoch;
  next.clear_fragments();
  next.clear_indexes();
  const int64_t per_fragment = std::max<int64_t>(1, options_.max_rows_per_compaction);
  int64_t first_row = 0;
  for (size_t b = 0; b < out.size();) {
    sstable::SSTableInput in;
    in.generation = std::max<uint64_t>(1, g);
    in.schema = source_->storage_schema();
    in.key_columns = key_columns_;
    int64_t rows = 0;
    do {
      rows += out[b]->num_rows();
      in.batches.push_back(out[b++]);
    } while (b < out.size() && rows + out[b]->num_rows() <= per_fragment);
    sstable::SSTableWriteOptions wo;
    wo.compression = arrow::ipc::Compression::kNone;  // used in place later (mmap)
    auto entry = sstable::WriteSSTable(*store_, frag_prefix, in, wo);
    if (!entry.ok()) {
      cleanup();
      return entry.status();
    }
    written_dirs.push_back(entry->path());
    auto reader = sstable::SSTableReader::Open(*store_, frag_prefix, entry->path(),
                                               /*load_indexes=*/false);
    if (!reader.ok()) {
      cleanup();
      return reader.status();
    }
    format::BaseFragment* f = next.add_fragments();
    f->set_path(entry->path());
    f->set_first_row(first_row);
    first_row += entry->rows();
    f->set_rows(entry->rows());
    f->set_bytes(entry->bytes());
    install.fragments.push_back(std::move(*reader));
  }
  // Past the deadline, or Stop called (a shutdown does not wait for the index builds).
  auto give_up = [&]() -> Status {
    if (Stopping()) return Status::Cancelled("base rewrite: the table is closing");
    if (shard::Clock::now() > deadline) return Status::Timeout("base rewrite: deadline passed");
    return Status::OK();
  };
  if (Status s = give_up(); !s.ok()) {
    cleanup();
    return s;
  }

  // 4. Every installed, complete base index rebuilt over the new rows (an IVF index re-adds
  // them to an empty copy of its trained model: no k-means). A definition without a complete
  // index is left to the index builder, which starts over on the new base.
  bool missing = false;
  const arrow::SchemaPtr& schema = source_->storage_schema();
  const auto built = source_->indexes();
  for (const auto& spec : specs) {
    std::shared_ptr<index::ColumnIndex> existing;
    for (const auto& i : built) {
      if (i->spec().name == spec.name && i->spec().uuid == spec.uuid) existing = i;
    }
    if (existing == nullptr || existing->rows_indexed() < st.rows || total == 0) {
      missing = missing || total > 0;
      continue;
    }
    auto made = [&]() -> Result<std::shared_ptr<index::ColumnIndex>> {
      if (const index::IvfIndex* ivf = existing->ivf()) {
        STRATA_ASSIGN_OR_RETURN(auto empty, ivf->CloneEmpty());
        return index::ColumnIndex::MakeIvf(spec, *schema, std::move(empty),
                                           existing->ivf_trained_rows());
      }
      return MakeBaseIndex(spec, *schema, out, total);
    }();
    if (!made.ok()) {
      cleanup();
      return made.status().WithContext("base rewrite: index '" + spec.name + "'");
    }
    int64_t pos = 0;
    for (const auto& batch : out) {
      Status s = give_up();
      if (s.ok()) s = (*made)->IndexBatch(*batch, pos);
      if (!s.ok()) {
        cleanup();
        return s.WithContext("base rewrite: index '" + spec.name + "'");
      }
      pos += batch->num_rows();
    }
    missing = missing || NeedsRetrain(**made, total);
    // The old checkpoints name old positions: none is kept. A new one as compaction's rule
    // would write it with nothing saved (rows >= min_checkpoint_rows); below that a restart
    // rebuilds the index from the rows, as for a fresh table of that size.
    if (total >= options_.min_checkpoint_rows) {
      format::BaseIndexCheckpoint c = WriteCheckpoint(**made, total);
      if (!c.path().empty()) {
        written.push_back(table_prefix_ + "/" + c.path());
        *next.add_indexes() = c;
      }
    }
    install.indexes.push_back(std::move(*made));
    ++result.indexes_built;
  }
  install.origins = std::move(origins);
  result.fragments = static_cast<int64_t>(install.fragments.size());
  result.bytes_after = BaseBytes(next);
  if (options_.rewrite_install_hook) options_.rewrite_install_hook();

  // 5. One manifest (compacted_generation unchanged), then the install under the shard lock.
  next.set_compactions(next.compactions() + 1);
  // The base is one object however many shards share it: one install replaces its rows; the
  // other shards' views never hold it (base_in_view = false).
  Status s = commit(next, [&] { return shards[0]->InstallRewrite(install); });
  if (!s.ok()) {
    // Internal = the commit's outcome is unknown: GC removes the files once no manifest does.
    if (s.code() != StatusCode::kInternal) cleanup();
    return s;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = next;
    if (missing) {
      index_work_ = true;
      cv_.notify_all();
    }
  }
  spdlog::info("table '{}': base rewritten: {} -> {} rows, {} -> {} bytes, {} indexes rebuilt",
               table_prefix_, result.rows_before, result.rows_after, result.bytes_before,
               result.bytes_after, result.indexes_built);
  return result;
}

}  // namespace strata::base
