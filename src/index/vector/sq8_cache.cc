#include "index/vector/sq8_cache.h"

#include <unistd.h>

#include <vector>

namespace strata::index {

Sq8Cache& Sq8Cache::Global() {
  static Sq8Cache* cache = new Sq8Cache();  // never destroyed: used until exit
  return *cache;
}

int64_t Sq8Cache::DefaultBudget() {
  const int64_t pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? pages * page / 16 : int64_t{256} << 20;
}

Sq8Cache::Sq8Cache(int64_t budget_bytes) : budget_(budget_bytes < 0 ? 0 : budget_bytes) {}

void Sq8Cache::SetBudget(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  budget_ = bytes < 0 ? 0 : bytes;
  EvictLocked(budget_);
}

void Sq8Cache::EvictLocked(int64_t budget) {
  // Expired owners first (their batches are gone), then least recently used.
  for (auto it = map_.begin(); it != map_.end();) {
    if (it->second.owner.expired()) {
      bytes_ -= it->second.codes->bytes();
      lru_.erase(it->second.lru);
      it = map_.erase(it);
    } else {
      ++it;
    }
  }
  while (bytes_ > budget && !lru_.empty()) {
    auto it = map_.find(lru_.back());
    bytes_ -= it->second.codes->bytes();
    map_.erase(it);
    lru_.pop_back();
    ++evictions_;
  }
}

std::optional<Sq8Cache::Key> Sq8Cache::KeyOf(const arrow::Array& list, int64_t dim) {
  if (list.data()->children.empty()) return std::nullopt;
  const arrow::Array values = list.child(0);
  if (values.data()->buffers.size() < 2 || values.data()->buffers[1] == nullptr) {
    return std::nullopt;
  }
  // Memory nobody owns cannot be told apart from a later batch at the same address.
  if (values.data()->buffers[1]->owner() == nullptr) return std::nullopt;
  const float* first = values.raw_values<float>() + list.offset() * dim;
  return Key{reinterpret_cast<uintptr_t>(first), list.length(), dim};
}

std::shared_ptr<const Sq8Codes> Sq8Cache::GetOnDemand(const arrow::Array& list, int64_t dim,
                                                      int64_t rows_wanted, int64_t share) {
  if (std::shared_ptr<const Sq8Codes> hit = Get(list, dim, false)) return hit;
  const std::optional<Key> key = KeyOf(list, dim);
  if (!key) return nullptr;
  bool build = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (budget_ == 0) return nullptr;
    int64_t& asked = demand_[*key];
    asked += rows_wanted;
    build = share > 0 && asked * share >= list.length();
    if (build) demand_.erase(*key);
    if (demand_.size() > 65536) demand_.clear();
  }
  return build ? Get(list, dim, true) : nullptr;
}

std::shared_ptr<const Sq8Codes> Sq8Cache::Get(const arrow::Array& list, int64_t dim, bool build) {
  const std::optional<Key> found_key = KeyOf(list, dim);
  if (!found_key) return nullptr;
  const Key key = *found_key;
  const arrow::BufferPtr& buffer = list.child(0).data()->buffers[1];
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (budget_ == 0) return nullptr;
    auto it = map_.find(key);
    if (it != map_.end()) {
      if (!it->second.owner.expired()) {
        lru_.splice(lru_.begin(), lru_, it->second.lru);
        ++hits_;
        return it->second.codes;
      }
      bytes_ -= it->second.codes->bytes();
      lru_.erase(it->second.lru);
      map_.erase(it);
    }
    if (!build) return nullptr;
    // Codes that could never be kept are not built (a break test found a budget below one
    // batch building and dropping every batch on every query, 5x slower than no codes).
    if (Sq8Codes::BytesFor(list.length(), dim) > budget_) return nullptr;
  }
  std::shared_ptr<const Sq8Codes> codes = Sq8Codes::Build(list, dim);
  if (codes == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  if (codes->bytes() > budget_) return nullptr;  // the budget shrank meanwhile
  auto it = map_.find(key);
  if (it != map_.end() && !it->second.owner.expired()) return it->second.codes;  // built twice
  if (it != map_.end()) {
    bytes_ -= it->second.codes->bytes();
    lru_.erase(it->second.lru);
    map_.erase(it);
  }
  ++builds_;
  EvictLocked(budget_ - codes->bytes());
  lru_.push_front(key);
  map_.emplace(key, Entry{buffer->owner(), codes, lru_.begin()});
  bytes_ += codes->bytes();
  return codes;
}

Sq8CacheStats Sq8Cache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {static_cast<int64_t>(map_.size()), bytes_, budget_, hits_, builds_, evictions_};
}

}  // namespace strata::index
