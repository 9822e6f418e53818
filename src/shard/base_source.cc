#include "shard/base_source.h"

#include <algorithm>

namespace strata::shard {

BaseSource::BaseSource(arrow::SchemaPtr storage_schema)
    : storage_schema_(std::move(storage_schema)) {
  state_.fragments = std::make_shared<const std::vector<Fragment>>();
  state_.carried = std::make_shared<const std::vector<uint64_t>>();
  state_.batches = std::make_shared<memtable::AppendLog<arrow::RecordBatchPtr>>();
  state_.starts = std::make_shared<memtable::AppendLog<int64_t>>();
  state_.live = std::make_shared<Liveness>();
}

void BaseSource::AppendFragment(std::shared_ptr<const sstable::SSTableReader> data) {
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

void BaseSource::CarryMarks(const std::vector<std::pair<int64_t, uint64_t>>& marks) {
  std::lock_guard<std::mutex> lock(state_mu_);
  CarryLocked(marks);
}

void BaseSource::CarryLocked(const std::vector<std::pair<int64_t, uint64_t>>& marks) {
  Liveness* live = state_.live.get();
  auto carried = std::make_shared<std::vector<uint64_t>>(*state_.carried);
  for (const auto& [position, by] : marks) {
    if (by == Liveness::kNone || live->Mark(position) != Liveness::kNone) continue;
    if (by == Liveness::kDead) {
      live->Supersede(position, by);
      continue;
    }
    if (live->SetMarkUnlogged(position, by)) carried->push_back(by);
  }
  std::sort(carried->begin(), carried->end());
  state_.carried = std::move(carried);
}

void BaseSource::FoldCarried(uint64_t generation) {
  std::lock_guard<std::mutex> lock(state_mu_);
  const uint64_t limit = RowAddress(generation + 1, 0);
  const auto& c = *state_.carried;
  const auto cut = std::lower_bound(c.begin(), c.end(), limit);
  if (cut == c.begin()) return;
  state_.carried_folded += cut - c.begin();
  state_.carried = std::make_shared<const std::vector<uint64_t>>(cut, c.end());
}

void BaseSource::Replace(
    const std::vector<std::shared_ptr<const sstable::SSTableReader>>& fragments,
    std::vector<std::shared_ptr<index::ColumnIndex>> indexes,
    const std::vector<std::pair<int64_t, uint64_t>>& marks) {
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    State next;
    next.fragments = std::make_shared<const std::vector<Fragment>>();
    next.carried = std::make_shared<const std::vector<uint64_t>>();
    next.batches = std::make_shared<memtable::AppendLog<arrow::RecordBatchPtr>>();
    next.starts = std::make_shared<memtable::AppendLog<int64_t>>();
    next.live = std::make_shared<Liveness>();
    next.epoch = state_.epoch + 1;
    state_ = std::move(next);
    for (const auto& f : fragments) AppendLocked(f);
    CarryLocked(marks);
  }
  std::lock_guard<std::mutex> lock(idx_mu_);
  indexes_ = std::move(indexes);
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
  return state.live->DeadIn(view) + state.carried_folded + CountVisible(*state.carried, view);
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
