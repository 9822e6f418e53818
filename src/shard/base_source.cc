#include "shard/base_source.h"

#include <algorithm>

namespace strata::shard {

BaseSource::BaseSource(arrow::SchemaPtr storage_schema)
    : storage_schema_(std::move(storage_schema)) {
  state_.fragments = std::make_shared<const std::vector<Fragment>>();
  state_.carried = std::make_shared<const std::vector<std::vector<uint64_t>>>();
  state_.batches = std::make_shared<memtable::AppendLog<arrow::RecordBatchPtr>>();
  state_.starts = std::make_shared<memtable::AppendLog<int64_t>>();
  state_.live = std::make_shared<Liveness>();
  state_.carried_folded = std::make_shared<const std::vector<int64_t>>();
  current_live_ = state_.live.get();
}

void BaseSource::AppendFragment(std::shared_ptr<const sstable::SSTableReader> data) {
  std::lock_guard<std::mutex> mark(mark_mu_);
  std::lock_guard<std::mutex> lock(state_mu_);
  AppendLocked(std::move(data));
}

void BaseSource::AppendLocked(std::shared_ptr<const sstable::SSTableReader> data) {
  const int64_t first = state_.rows;
  int64_t pos = first;
  size_t n = state_.num_batches;
  for (const auto& b : data->batches()) {
    if (b->num_rows() == 0) continue;
    state_.batches->Append(b);
    state_.starts->Append(pos);
    pos += b->num_rows();
    ++n;
  }
  state_.live->EnsureRows(pos);
  auto frags = std::make_shared<std::vector<Fragment>>(*state_.fragments);
  frags->push_back({std::move(data), first});
  state_.fragments = std::move(frags);
  state_.rows = pos;
  state_.num_batches = n;
}

bool BaseSource::MarkKey(const State& state, std::string_view key, uint64_t by, int lane) {
  std::optional<int64_t> p = Lookup(state, key);
  std::lock_guard<std::mutex> mark(mark_mu_);
  if (current_live_ == state.live.get())
    return p.has_value() && state.live->Supersede(*p, by, lane);
  // A rewrite renumbered the rows since `state` (rare): look up again in the current ones.
  const State now = CurrentState();
  p = Lookup(now, key);
  return p.has_value() && now.live->Supersede(*p, by, lane);
}

void BaseSource::CarryMarks(const std::vector<std::pair<int64_t, uint64_t>>& marks, int lane) {
  std::lock_guard<std::mutex> mark(mark_mu_);
  std::lock_guard<std::mutex> lock(state_mu_);
  CarryLocked(marks, {}, lane);
}

void BaseSource::CarryLocked(const std::vector<std::pair<int64_t, uint64_t>>& marks,
                             const std::vector<int>& lanes, int lane) {
  Liveness* live = state_.live.get();
  auto carried = std::make_shared<std::vector<std::vector<uint64_t>>>(*state_.carried);
  for (size_t i = 0; i < marks.size(); ++i) {
    const auto& [position, by] = marks[i];
    const int l = lanes.empty() ? lane : lanes[i];
    if (by == Liveness::kNone || live->Mark(position) != Liveness::kNone) continue;
    if (by == Liveness::kDead) {
      live->Supersede(position, by);
      continue;
    }
    if (live->SetMarkUnlogged(position, by, l)) {
      if (carried->size() <= static_cast<size_t>(l)) carried->resize(static_cast<size_t>(l) + 1);
      (*carried)[static_cast<size_t>(l)].push_back(by);
    }
  }
  for (auto& c : *carried) std::sort(c.begin(), c.end());
  state_.carried = std::move(carried);
}

void BaseSource::FoldCarried(uint64_t generation, int lane) {
  std::lock_guard<std::mutex> mark(mark_mu_);
  std::lock_guard<std::mutex> lock(state_mu_);
  if (static_cast<size_t>(lane) >= state_.carried->size()) return;
  const uint64_t limit = RowAddress(generation + 1, 0);
  const auto& c = (*state_.carried)[static_cast<size_t>(lane)];
  const auto cut = std::lower_bound(c.begin(), c.end(), limit);
  if (cut == c.begin()) return;
  auto folded = std::make_shared<std::vector<int64_t>>(*state_.carried_folded);
  if (folded->size() <= static_cast<size_t>(lane)) folded->resize(static_cast<size_t>(lane) + 1);
  (*folded)[static_cast<size_t>(lane)] += cut - c.begin();
  state_.carried_folded = std::move(folded);
  auto next = std::make_shared<std::vector<std::vector<uint64_t>>>(*state_.carried);
  (*next)[static_cast<size_t>(lane)] = std::vector<uint64_t>(cut, c.end());
  state_.carried = std::move(next);
}

void BaseSource::ReplaceLocked(
    const std::vector<std::shared_ptr<const sstable::SSTableReader>>& fragments,
    const std::vector<std::pair<int64_t, uint64_t>>& marks, const std::vector<int>& lanes) {
  State next;
  next.fragments = std::make_shared<const std::vector<Fragment>>();
  next.carried = std::make_shared<const std::vector<std::vector<uint64_t>>>();
  next.carried_folded = std::make_shared<const std::vector<int64_t>>();
  next.batches = std::make_shared<memtable::AppendLog<arrow::RecordBatchPtr>>();
  next.starts = std::make_shared<memtable::AppendLog<int64_t>>();
  next.live = std::make_shared<Liveness>();
  next.epoch = state_.epoch + 1;
  state_ = std::move(next);
  current_live_ = state_.live.get();
  for (const auto& f : fragments) AppendLocked(f);
  CarryLocked(marks, lanes, 0);
}

void BaseSource::Replace(
    const std::vector<std::shared_ptr<const sstable::SSTableReader>>& fragments,
    std::vector<std::shared_ptr<index::ColumnIndex>> indexes,
    const std::vector<std::pair<int64_t, uint64_t>>& marks) {
  {
    std::lock_guard<std::mutex> mark(mark_mu_);
    std::lock_guard<std::mutex> lock(state_mu_);
    ReplaceLocked(fragments, marks, {});
  }
  std::lock_guard<std::mutex> lock(idx_mu_);
  indexes_ = std::move(indexes);
}

Status BaseSource::ReplaceFrom(
    uint64_t epoch, const std::vector<std::shared_ptr<const sstable::SSTableReader>>& fragments,
    std::vector<std::shared_ptr<index::ColumnIndex>> indexes, const std::vector<int64_t>& origins) {
  int64_t rows = 0;
  for (const auto& f : fragments) rows += f->num_rows();
  if (static_cast<int64_t>(origins.size()) != rows) {
    return Status::Invalid("base rewrite install: " + std::to_string(origins.size()) +
                           " origins for " + std::to_string(rows) + " rows");
  }
  {
    std::lock_guard<std::mutex> mark(mark_mu_);
    std::lock_guard<std::mutex> lock(state_mu_);
    if (state_.epoch != epoch) {
      return Status::Invalid("base rewrite of epoch " + std::to_string(epoch) +
                             ": the base is at epoch " + std::to_string(state_.epoch));
    }
    // The mark each old position holds now: writes that arrived while the rewrite ran marked
    // the old position (their lookups found the old fragments); the copy must stay as dead.
    const Liveness& old = *state_.live;
    std::vector<std::pair<int64_t, uint64_t>> marks;
    std::vector<int> lanes;
    for (size_t i = 0; i < origins.size(); ++i) {
      const int64_t p = origins[i];
      if (p < 0 || p >= state_.rows) {
        return Status::Invalid("base rewrite install: origin " + std::to_string(p) +
                               " is not a base row (" + std::to_string(state_.rows) + " rows)");
      }
      const uint64_t m = old.Mark(p);
      if (m != Liveness::kNone) {
        marks.emplace_back(static_cast<int64_t>(i), m);
        lanes.push_back(old.Lane(p));
      }
    }
    ReplaceLocked(fragments, marks, lanes);
  }
  std::lock_guard<std::mutex> lock(idx_mu_);
  indexes_ = std::move(indexes);
  return Status::OK();
}

Liveness& BaseSource::liveness() {
  std::lock_guard<std::mutex> lock(state_mu_);
  return *state_.live;
}

std::shared_ptr<const Liveness> BaseSource::live() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return state_.live;
}

uint64_t BaseSource::epoch() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return state_.epoch;
}

BaseSource::State BaseSource::CurrentState() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return state_;
}

int64_t BaseSource::rows() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return state_.rows;
}

memtable::LogView<arrow::RecordBatchPtr> BaseSource::Batches(const State& state) const {
  return memtable::LogView<arrow::RecordBatchPtr>(state.batches, state.num_batches);
}

memtable::LogView<int64_t> BaseSource::BatchStarts(const State& state) const {
  return memtable::LogView<int64_t>(state.starts, state.num_batches);
}

std::optional<int64_t> BaseSource::Lookup(const State& state, std::string_view key) {
  const auto& frags = *state.fragments;
  for (size_t i = frags.size(); i-- > 0;) {
    const Fragment& f = frags[i];
    if (!f.data->MayContain(key)) continue;
    if (auto hit = f.data->Lookup(key)) return f.first_row + hit->position;
  }
  return std::nullopt;
}

int64_t BaseSource::DeadIn(const State& state, const Visibility& view) const {
  int64_t dead = state.live->DeadIn(view);
  const auto& carried = *state.carried;
  for (size_t lane = 0; lane < carried.size(); ++lane) {
    if (const Visibility* v = view.ForLane(static_cast<int>(lane))) {
      dead += CountVisible(carried[lane], *v);
    }
  }
  const auto& folded = *state.carried_folded;
  for (size_t lane = 0; lane < folded.size(); ++lane) {
    if (view.ForLane(static_cast<int>(lane)) != nullptr) dead += folded[lane];
  }
  return dead;
}

std::optional<SourceView> BaseSource::View(const State& st, std::shared_ptr<const Visibility> vis,
                                           const std::vector<index::IndexSpec>& current,
                                           const std::vector<int>& key_columns) const {
  if (st.rows == 0) return std::nullopt;
  SourceView v;
  v.name = "base";
  v.generation = 0;
  v.batches = Batches(st);
  v.batch_starts = BatchStarts(st);
  v.num_rows = st.rows;
  v.liveness = st.live;
  v.live_rows = st.rows - DeadIn(st, *vis);
  v.visibility = std::move(vis);
  for (auto& idx : indexes()) {
    if (idx->rows_indexed() < st.rows) continue;
    bool is_current = false;
    for (const auto& spec : current) {
      is_current |= spec.name == idx->spec().name && spec.uuid == idx->spec().uuid;
    }
    if (is_current) v.indexes.push_back(std::move(idx));
  }
  if (!key_columns.empty()) {
    v.key_columns = key_columns;
    v.find_key = [st](std::string_view key) -> std::optional<int64_t> {
      auto p = BaseSource::Lookup(st, key);
      if (p && *p >= st.rows) return std::nullopt;
      return p;
    };
  }
  return v;
}

std::vector<std::shared_ptr<index::ColumnIndex>> BaseSource::indexes() const {
  std::lock_guard<std::mutex> lock(idx_mu_);
  return indexes_;
}

void BaseSource::SetIndex(std::shared_ptr<index::ColumnIndex> idx) {
  std::lock_guard<std::mutex> lock(idx_mu_);
  for (auto& i : indexes_) {
    if (i->spec().name == idx->spec().name) {
      i = std::move(idx);
      return;
    }
  }
  indexes_.push_back(std::move(idx));
}

void BaseSource::RemoveIndex(const std::string& name) {
  std::lock_guard<std::mutex> lock(idx_mu_);
  std::erase_if(indexes_, [&](const std::shared_ptr<index::ColumnIndex>& i) {
    return i->spec().name == name;
  });
}

void BaseSource::RetainIndexes(const std::vector<index::IndexSpec>& keep) {
  std::lock_guard<std::mutex> lock(idx_mu_);
  std::erase_if(indexes_, [&](const std::shared_ptr<index::ColumnIndex>& i) {
    for (const auto& s : keep) {
      if (s.name == i->spec().name && s.uuid == i->spec().uuid) return false;
    }
    return true;
  });
}

}  // namespace strata::shard
