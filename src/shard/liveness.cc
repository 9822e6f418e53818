#include "shard/liveness.h"

#include <algorithm>

namespace strata::shard {

bool Visibility::Visible(uint64_t seq) const {
  if (memtables.empty()) return true;
  const uint64_t g = seq >> 32;
  if (g < memtables.front().generation) return true;
  for (const auto& m : memtables) {
    if (m.generation == g) return static_cast<int64_t>(seq & 0xffffffffULL) < m.watermark;
  }
  return false;
}

void Liveness::Segments::Ensure(int64_t n, uint64_t fill) {
  const int64_t need = (n + kSegSize - 1) >> kSegBits;
  Dir* d = dir.load(std::memory_order_relaxed);
  const int64_t have = d == nullptr ? 0 : d->capacity;
  int64_t used = static_cast<int64_t>(owned.size());
  if (need <= used) return;
  if (need > have) {
    auto bigger = std::make_unique<Dir>();
    bigger->capacity = std::max<int64_t>({need, have * 2, 4});
    bigger->segs.reset(new std::atomic<std::atomic<uint64_t>*>[bigger->capacity]);
    for (int64_t s = 0; s < bigger->capacity; ++s) {
      bigger->segs[s].store(s < used ? owned[static_cast<size_t>(s)].get() : nullptr,
                            std::memory_order_relaxed);
    }
    d = bigger.get();
    dirs.push_back(std::move(bigger));
    dir.store(d, std::memory_order_release);
  }
  for (; used < need; ++used) {
    std::unique_ptr<std::atomic<uint64_t>[]> seg(new std::atomic<uint64_t>[kSegSize]);
    for (int64_t i = 0; i < kSegSize; ++i) seg[i].store(fill, std::memory_order_relaxed);
    d->segs[used].store(seg.get(), std::memory_order_release);
    owned.push_back(std::move(seg));
  }
}

std::atomic<uint64_t>* Liveness::Segments::Slot(int64_t i) const {
  if (i < 0) return nullptr;
  const Dir* d = dir.load(std::memory_order_acquire);
  if (d == nullptr || (i >> kSegBits) >= d->capacity) return nullptr;
  std::atomic<uint64_t>* seg = d->segs[i >> kSegBits].load(std::memory_order_acquire);
  return seg == nullptr ? nullptr : seg + (i & (kSegSize - 1));
}

Liveness::Liveness() = default;
Liveness::~Liveness() = default;

std::shared_ptr<Liveness> Liveness::WithDeadRows(int64_t rows, const std::vector<int64_t>& dead) {
  auto l = std::make_shared<Liveness>();
  l->EnsureRows(rows);
  for (int64_t p : dead) l->Supersede(p, kDead);
  return l;
}

void Liveness::EnsureRows(int64_t rows) {
  if (rows <= rows_) return;
  marks_.Ensure(rows, kNone);
  if (lanes_owned_ != nullptr) lanes_owned_->row_lane.Ensure(rows, 0);
  rows_ = rows;
}

void Liveness::Log::Stage(uint64_t seq) {
  const int64_t n = size.load(std::memory_order_relaxed);
  entries.Ensure(n + 1, kNone);
  entries.Slot(n)->store(seq, std::memory_order_relaxed);
}

void Liveness::Log::Publish() {
  size.store(size.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

int64_t Liveness::Log::Below(uint64_t seq) const {
  // The log is ascending; entries [0, size) are published.
  int64_t lo = 0, hi = size.load(std::memory_order_acquire);
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (entries.Slot(mid)->load(std::memory_order_relaxed) < seq) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

int64_t Liveness::Log::VisibleIn(const Visibility& view) const {
  if (view.memtables.empty()) return size.load(std::memory_order_acquire);
  int64_t n = Below(RowAddress(view.memtables.front().generation, 0));
  for (const auto& m : view.memtables) {
    n += Below(RowAddress(m.generation, m.watermark)) - Below(RowAddress(m.generation, 0));
  }
  return n;
}

const Liveness::Log* Liveness::LaneLog(int lane) const {
  if (lane == 0) return &log_;
  const Lanes* l = lanes_.load(std::memory_order_acquire);
  if (l == nullptr || lane < 0 || lane >= kMaxLanes) return nullptr;
  return l->logs[lane].load(std::memory_order_acquire);
}

bool Liveness::Supersede(int64_t position, uint64_t by, int lane) {
  std::atomic<uint64_t>* slot = marks_.Slot(position);
  if (slot == nullptr || position >= rows_ || by == kNone) return false;
  if (lane < 0 || lane >= kMaxLanes) return false;
  if (slot->load(std::memory_order_relaxed) != kNone) return false;
  if (by == kDead) {
    slot->store(kDead, std::memory_order_release);
    dead_count_.fetch_add(1, std::memory_order_release);
    return true;
  }
  if (lane == 0) {
    log_.Stage(by);
    slot->store(by, std::memory_order_release);
    log_.Publish();
    return true;
  }
  if (lanes_owned_ == nullptr) {
    lanes_owned_ = std::make_unique<Lanes>();
    lanes_owned_->row_lane.Ensure(rows_, 0);
    lanes_.store(lanes_owned_.get(), std::memory_order_release);
  }
  Lanes& l = *lanes_owned_;
  Log* log = l.logs[lane].load(std::memory_order_relaxed);
  if (log == nullptr) {
    l.owned.push_back(std::make_unique<Log>());
    log = l.owned.back().get();
    l.logs[lane].store(log, std::memory_order_release);
    if (lane > l.max_lane.load(std::memory_order_relaxed)) {
      l.max_lane.store(lane, std::memory_order_release);
    }
  }
  log->Stage(by);  // entry, then mark, then the entry counts: as in lane 0
  const bool marked = SetMarkUnlogged(position, by, lane);
  if (marked) log->Publish();
  return marked;
}

bool Liveness::SetMarkUnlogged(int64_t position, uint64_t by, int lane) {
  std::atomic<uint64_t>* slot = marks_.Slot(position);
  if (slot == nullptr || position >= rows_ || by == kNone || by == kDead) return false;
  if (lane < 0 || lane >= kMaxLanes) return false;
  if (slot->load(std::memory_order_relaxed) != kNone) return false;
  if (lane != 0) {
    if (lanes_owned_ == nullptr) {
      lanes_owned_ = std::make_unique<Lanes>();
      lanes_owned_->row_lane.Ensure(rows_, 0);
      lanes_.store(lanes_owned_.get(), std::memory_order_release);
    }
    lanes_owned_->row_lane.Slot(position)->store(static_cast<uint64_t>(lane),
                                                 std::memory_order_relaxed);
  }
  slot->store(by, std::memory_order_release);  // publishes the lane with it
  return true;
}

int64_t CountVisible(const std::vector<uint64_t>& sorted, const Visibility& view) {
  auto below = [&](uint64_t seq) {
    return static_cast<int64_t>(std::lower_bound(sorted.begin(), sorted.end(), seq) -
                                sorted.begin());
  };
  if (view.memtables.empty()) return static_cast<int64_t>(sorted.size());
  int64_t n = below(RowAddress(view.memtables.front().generation, 0));
  for (const auto& m : view.memtables) {
    n += below(RowAddress(m.generation, m.watermark)) - below(RowAddress(m.generation, 0));
  }
  return n;
}

uint64_t Liveness::Mark(int64_t position) const {
  const std::atomic<uint64_t>* slot = marks_.Slot(position);
  return slot == nullptr ? kNone : slot->load(std::memory_order_acquire);
}

int Liveness::Lane(int64_t position) const {
  const Lanes* l = lanes_.load(std::memory_order_acquire);
  if (l == nullptr) return 0;
  const std::atomic<uint64_t>* slot = l->row_lane.Slot(position);
  return slot == nullptr ? 0 : static_cast<int>(slot->load(std::memory_order_relaxed));
}

int64_t Liveness::marks() const {
  int64_t n =
      dead_count_.load(std::memory_order_acquire) + log_.size.load(std::memory_order_acquire);
  if (const Lanes* l = lanes_.load(std::memory_order_acquire)) {
    const int max = l->max_lane.load(std::memory_order_acquire);
    for (int lane = 1; lane <= max; ++lane) {
      if (const Log* log = l->logs[lane].load(std::memory_order_acquire)) {
        n += log->size.load(std::memory_order_acquire);
      }
    }
  }
  return n;
}

int64_t Liveness::DeadIn(const Visibility& view) const {
  int64_t dead = dead_count_.load(std::memory_order_acquire);
  if (const Visibility* v = view.ForLane(0)) dead += log_.VisibleIn(*v);
  const Lanes* l = lanes_.load(std::memory_order_acquire);
  if (l == nullptr) return dead;
  const int max = l->max_lane.load(std::memory_order_acquire);
  for (int lane = 1; lane <= max; ++lane) {
    const Log* log = l->logs[lane].load(std::memory_order_acquire);
    const Visibility* v = view.ForLane(lane);
    if (log != nullptr && v != nullptr) dead += log->VisibleIn(*v);
  }
  return dead;
}

}  // namespace strata::shard
