// BaseTable's index builder thread (base_table.h "Index builds"): builds the base index of a
// definition that has none (an IVF definition at the base's first compaction, a definition
// created on an existing base, an index whose checkpoint a restart loads), and retrains an IVF
// index due for it (base_index_build.h NeedsRetrain). The training and the bulk of the
// indexing run WITHOUT work_mu_, so compactions keep their pace (and append rows) meanwhile;
// work_mu_ is taken only to index the last rows and install the index.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "base/base_index_build.h"
#include "base/base_table.h"
#include "index/column_index.h"

namespace strata::base {
namespace {

// Once fewer base rows than this are left uncovered, the builder takes work_mu_ and indexes
// the rest under it (a compaction waits that long at most: well under a second for HNSW).
constexpr int64_t kLockedCatchUpRows = 8192;
// Off-lock catch-up rounds at most (compactions that outpace the builder would otherwise keep
// it chasing the tip); then the rest is indexed under the lock.
constexpr int kCatchUpRounds = 8;

bool SameDefinition(const index::ColumnIndex& i, const index::IndexSpec& s) {
  return i.spec().name == s.name && i.spec().uuid == s.uuid;
}

}  // namespace

bool BaseTable::Stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_;
}

bool BaseTable::AbandonBuild(const index::IndexSpec& spec) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_) return true;
  for (const auto& s : specs_) {
    if (s.name == spec.name && s.uuid == spec.uuid) return false;
  }
  return true;
}

std::vector<arrow::RecordBatchPtr> BaseTable::L0Batches() const {
  std::vector<arrow::RecordBatchPtr> out;
  for (shard::ShardWriter* shard : ShardsNow()) {
    auto snap = shard->Snapshot();
    if (!snap.ok()) continue;
    for (const auto& src : (*snap)->sources) {
      if (src.memtable || src.generation == 0) continue;
      out.insert(out.end(), src.batches.begin(), src.batches.end());
    }
  }
  return out;
}

bool BaseTable::AwaitsFirstTrainingLocked(const index::IndexSpec& spec, bool installed) const {
  return !installed && options_.background && l0_training_failed_.count(spec.uuid) == 0 &&
         index::BaseIvfFor(spec).value_or(std::nullopt).has_value();
}

bool BaseTable::DeferForFirstTraining(const ShardList& shards) {
  if (source_->rows() > 0) return false;
  bool l0 = false;
  for (const shard::ShardWriter* shard : shards) l0 = l0 || shard->backlog().sstables > 0;
  if (!l0) return false;
  std::set<std::string> installed;
  for (const auto& i : source_->indexes()) installed.insert(i->spec().uuid);
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& s : specs_) {
    if (!AwaitsFirstTrainingLocked(s, installed.count(s.uuid) > 0)) continue;
    first_training_wanted_ = true;
    if (!building_ && !index_work_) {
      index_work_ = true;
      cv_.notify_all();
    }
    return true;
  }
  return false;
}

void BaseTable::IndexBuilderLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (!index_work_) {
      cv_.wait(lock, [this] { return stop_ || index_work_; });
      continue;
    }
    index_work_ = false;
    building_ = true;
    lock.unlock();
    BuildIndexes();
    lock.lock();
    building_ = false;
    cv_.notify_all();
  }
}

void BaseTable::BuildIndexes() {
  std::vector<index::IndexSpec> specs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    specs = specs_;
  }
  for (const auto& spec : specs) {
    if (Stopping()) return;
    const int64_t rows = source_->rows();
    std::shared_ptr<index::ColumnIndex> installed;
    for (const auto& i : source_->indexes()) {
      if (SameDefinition(*i, spec)) installed = i;
    }
    if (rows == 0) {
      // A first training on L0 rows (file comment of base_table.h), when compaction waits.
      bool first = false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        first = !shards_.empty() && first_training_wanted_ &&
                AwaitsFirstTrainingLocked(spec, installed != nullptr);
      }
      if (first) BuildIndex(spec, /*retrain=*/false);
      continue;
    }
    const bool retrain = installed != nullptr && NeedsRetrain(*installed, rows);
    if (installed != nullptr && installed->rows_indexed() >= rows && !retrain) continue;
    BuildIndex(spec, retrain);
  }
  // Every definition of this pass was handled: none has a checkpoint load left to wait for.
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& spec : specs) checkpoint_loads_.erase(spec.uuid);
  LoadsChangedLocked();
}

void BaseTable::BuildIndex(const index::IndexSpec& spec, bool retrain) {
  // However this build ends (installed, failed, abandoned), a query waiting for this
  // definition's checkpoint load (AwaitCheckpointLoads) stops waiting.
  struct LoadDone {
    BaseTable* t;
    const std::string& uuid;
    ~LoadDone() {
      std::lock_guard<std::mutex> lock(t->mu_);
      if (t->checkpoint_loads_.erase(uuid) > 0) t->LoadsChangedLocked();
    }
  } load_done{this, spec.uuid};
  const auto t0 = std::chrono::steady_clock::now();
  const arrow::SchemaPtr& schema = source_->storage_schema();
  shard::BaseSource::State st = source_->CurrentState();
  // A base rewrite (base_rewrite.cc) renumbers positions: an index built over an older epoch
  // is discarded, and the next pass builds over the rewritten base (if the rewrite did not).
  const uint64_t epoch = st.epoch;
  auto rewritten = [&] {
    if (st.epoch == epoch) return false;
    spdlog::info("base index '{}': base rewritten during the build; starting over", spec.name);
    std::lock_guard<std::mutex> lock(mu_);
    index_work_ = true;
    return true;
  };
  std::shared_ptr<index::ColumnIndex> idx;
  int64_t covered = 0;  // idx holds base rows [0, covered)
  int64_t saved = 0;    // rows of the stored checkpoint idx was loaded from
  format::BaseTable state;
  {
    std::lock_guard<std::mutex> lock(mu_);
    state = state_;
  }
  auto wants_ivf = index::BaseIvfFor(spec);
  // Stop (server shutdown, table drop) or a dropped definition abandons the build: between
  // k-means iterations of an IVF training (IvfIndex::Train) and between batches of indexing.
  const std::function<bool()> abandon = [this, &spec, checks = int64_t{0}]() mutable {
    if (options_.index_abandon_check_hook) options_.index_abandon_check_hook(spec.name, ++checks);
    return AbandonBuild(spec);
  };
  auto abandoned = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.index_builds_abandoned;
    spdlog::info("base index '{}': build abandoned after {:.1f} s ({})", spec.name,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                 stop_ ? "stopping" : "definition dropped");
  };
  if (!retrain) {
    // An installed index behind the base (not expected: compactions grow a complete one; a
    // copy keeps its rows) or, at open, the stored checkpoint of the form the definition asks
    // for now (an IVF definition checkpointed as HNSW by an older server is rebuilt).
    for (const auto& i : source_->indexes()) {
      if (!SameDefinition(*i, spec)) continue;
      auto copy = i->Clone(*schema);
      if (copy.ok()) {
        idx = std::move(*copy);
        covered = idx->rows_indexed();
      }
    }
    for (const auto& c : state.indexes()) {
      if (idx != nullptr || !wants_ivf.ok()) break;
      if (c.name() != spec.name || c.uuid() != spec.uuid || c.rows() > st.rows) continue;
      auto bytes = store_->Get(table_prefix_ + "/" + c.path());
      if (!bytes.ok()) {
        spdlog::warn("base index '{}': checkpoint {} unreadable ({}); rebuilding", spec.name,
                     c.path(), bytes.status().ToString());
        break;
      }
      auto loaded = index::ColumnIndex::Deserialize(*bytes, *schema);
      if (!loaded.ok() || (*loaded)->rows_indexed() != c.rows()) {
        spdlog::warn("base index '{}': checkpoint {} invalid ({}); rebuilding", spec.name, c.path(),
                     loaded.ok() ? "row count" : loaded.status().ToString());
        break;
      }
      if (((*loaded)->ivf() != nullptr) != wants_ivf->has_value() ||
          NeedsRetrain(**loaded, st.rows)) {
        spdlog::info("base index '{}': checkpoint {} is not the form to serve now; rebuilding",
                     spec.name, c.path());
        break;
      }
      idx = std::move(*loaded);
      covered = saved = c.rows();
    }
  }
  if (idx == nullptr) {
    // Train (IVF) on the snapshot's rows, off the work lock: compactions go on meanwhile. On
    // an empty base, on the L0 SSTables' rows (the first compaction waits for it).
    std::vector<arrow::RecordBatchPtr> all;
    const bool from_l0 = st.rows == 0;
    if (from_l0) {
      all = L0Batches();
    } else {
      const auto batches = source_->Batches(st);
      for (size_t k = 0; k < batches.size(); ++k) all.push_back(batches[k]);
    }
    int64_t sample_rows = 0;
    for (const auto& b : all) sample_rows += b->num_rows();
    spdlog::info("base index '{}': {} over {} {}rows ({})", spec.name,
                 retrain ? "retraining" : "building", sample_rows, from_l0 ? "L0 " : "",
                 from_l0 ? "the first compaction waits" : "compactions continue");
    auto made =
        sample_rows == 0
            ? Result<std::shared_ptr<index::ColumnIndex>>(Status::Invalid("no L0 row to train on"))
            : MakeBaseIndex(spec, *schema, all, st.rows, abandon);
    if (!made.ok()) {
      if (made.status().code() == StatusCode::kCancelled) {
        abandoned();
        return;
      }
      if (from_l0) {
        // Compaction stops waiting: the base is committed first and trained on later.
        spdlog::info("base index '{}': not trained on L0 rows ({}); after the first compaction",
                     spec.name, made.status().ToString());
        std::lock_guard<std::mutex> lock(mu_);
        l0_training_failed_.insert(spec.uuid);
        wake_ = true;
        cv_.notify_all();
        return;
      }
      spdlog::warn("base index '{}' not built: {}", spec.name, made.status().ToString());
      return;
    }
    idx = std::move(*made);
  }

  // Adds base rows [covered, state.rows) to idx. `stoppable`: returns false when Stop was
  // called (checked between batches).
  auto index_rows = [&](const shard::BaseSource::State& upto, bool stoppable) -> Result<bool> {
    const auto batches = source_->Batches(upto);
    const auto starts = source_->BatchStarts(upto);
    for (size_t k = 0; k < batches.size(); ++k) {
      const int64_t start = starts[k];
      const int64_t n = batches[k]->num_rows();
      if (start + n <= covered) continue;
      if (stoppable && abandon()) return false;
      if (start < covered) {
        STRATA_RETURN_IF_ERROR(
            idx->IndexBatch(*batches[k]->Slice(covered - start, start + n - covered), covered));
      } else {
        STRATA_RETURN_IF_ERROR(idx->IndexBatch(*batches[k], start));
      }
      covered = start + n;
    }
    covered = std::max(covered, upto.rows);
    return true;
  };

  // Index the snapshot's rows and catch up on rows compacted meanwhile, off the lock, until
  // few remain.
  for (int round = 0; round <= kCatchUpRounds; ++round) {
    st = source_->CurrentState();
    if (rewritten()) return;
    if (round > 0 && (st.rows - covered <= kLockedCatchUpRows || round == kCatchUpRounds)) break;
    auto r = index_rows(st, /*stoppable=*/true);
    if (!r.ok()) {
      spdlog::error("base index '{}' not built: {}", spec.name, r.status().ToString());
      return;
    }
    if (!*r) {
      abandoned();
      return;
    }
  }
  // A checkpoint, written off the lock, committed with the install (a restart then loads the
  // index instead of training it again).
  format::BaseIndexCheckpoint pending;
  if (covered - saved >= options_.min_checkpoint_rows) pending = WriteCheckpoint(*idx, covered);
  auto drop_pending = [&] {
    if (!pending.path().empty()) (void)store_->Remove(table_prefix_ + "/" + pending.path());
  };
  if (options_.index_build_hook) options_.index_build_hook(spec.name);

  // Install: under work_mu_ no compaction runs, so none grows (Clone + SetIndex) the index
  // this one replaces, and no row is appended while the last ones are indexed.
  int64_t rows = 0;
  {
    std::lock_guard<std::mutex> work(work_mu_);
    if (Stopping()) {
      drop_pending();
      return;
    }
    st = source_->CurrentState();
    if (rewritten()) {
      drop_pending();
      return;
    }
    auto r = index_rows(st, /*stoppable=*/false);
    if (!r.ok()) {
      spdlog::error("base index '{}' not built: {}", spec.name, r.status().ToString());
      drop_pending();
      return;
    }
    rows = st.rows;
    CommitCheckpoint(pending);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.index_builds;
    }
    source_->SetIndex(idx);
    // SetIndexes updates specs_ before it drops indexes (RetainIndexes): either it sees this
    // index and drops it, or this check sees the definition gone and drops it here.
    bool current = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& s : specs_) current |= s.name == spec.name && s.uuid == spec.uuid;
    }
    if (!current) {
      source_->RemoveIndex(spec.name);
      return;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake_ = true;  // a compaction waiting for this first training may run now
    cv_.notify_all();
  }
  // Views are cached until a visible change: make the ready index one.
  for (shard::ShardWriter* shard : ShardsNow()) shard->InvalidateViews();
  spdlog::info("base index '{}': {} over {} rows installed after {:.1f} s", spec.name,
               retrain ? "retrained" : "built", rows,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace strata::base
