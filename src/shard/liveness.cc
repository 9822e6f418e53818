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
  rows_ = rows;
}

bool Liveness::Supersede(int64_t position, uint64_t by) {
  std::atomic<uint64_t>* slot = marks_.Slot(position);
  if (slot == nullptr || position >= rows_ || by == kNone) return false;
  if (slot->load(std::memory_order_relaxed) != kNone) return false;
  if (by == kDead) {
    slot->store(kDead, std::memory_order_relaxed);
    dead_count_.fetch_add(1, std::memory_order_release);
    return true;
  }
  const int64_t n = log_size_.load(std::memory_order_relaxed);
  log_.Ensure(n + 1, kNone);
  log_.Slot(n)->store(by, std::memory_order_relaxed);
  slot->store(by, std::memory_order_relaxed);
  log_size_.store(n + 1, std::memory_order_release);
  return true;
}

bool Liveness::SetMarkUnlogged(int64_t position, uint64_t by) {
  std::atomic<uint64_t>* slot = marks_.Slot(position);
  if (slot == nullptr || position >= rows_ || by == kNone || by == kDead) return false;
  if (slot->load(std::memory_order_relaxed) != kNone) return false;
  slot->store(by, std::memory_order_relaxed);
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
  return slot == nullptr ? kNone : slot->load(std::memory_order_relaxed);
}

int64_t Liveness::LogBelow(uint64_t seq) const {
  // The log is ascending; entries [0, log_size()) are published.
  int64_t lo = 0, hi = log_size();
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (LogAt(mid) < seq) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

int64_t Liveness::DeadIn(const Visibility& view) const {
  int64_t dead = dead_count_.load(std::memory_order_acquire);
  if (view.memtables.empty()) return dead + log_size();
  dead += LogBelow(RowAddress(view.memtables.front().generation, 0));
  for (const auto& m : view.memtables) {
    dead += LogBelow(RowAddress(m.generation, m.watermark)) - LogBelow(RowAddress(m.generation, 0));
  }
  return dead;
}

}  // namespace strata::shard
