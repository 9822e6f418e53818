#include "query/filter_bits_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>

namespace strata::query {

int64_t FilterBits::CountBelow(int64_t n) const {
  if (n >= rows) return count;
  n = std::max<int64_t>(n, 0);
  const size_t full = static_cast<size_t>(n >> 6);
  int64_t count = 0;
  for (size_t i = 0; i < full; ++i) count += std::popcount(words[i]);
  if ((n & 63) != 0) count += std::popcount(words[full] & ((uint64_t{1} << (n & 63)) - 1));
  return count;
}

namespace {

// Sets the bits of the passing rows among positions [from, to) of `source`.
void FillFrom(const RowPredicate::Bound& bound, const shard::SourceView& source, int64_t from,
              int64_t to, std::vector<uint64_t>* words) {
  std::vector<int64_t> rows;
  for (size_t b = 0; b < source.batches.size(); ++b) {
    const int64_t start = source.batch_starts[b];
    if (start >= to) break;
    const int64_t lo = std::max(from, start);
    const int64_t hi = std::min(to, start + source.batches[b]->num_rows());
    if (lo >= hi) continue;
    rows.clear();
    bound.SelectInBatch(b, lo - start, hi - start, &rows);
    for (const int64_t r : rows) {
      const int64_t p = start + r;
      (*words)[static_cast<size_t>(p >> 6)] |= uint64_t{1} << (p & 63);
    }
  }
}

}  // namespace

std::string FilterBitsCache::EvaluatedKey(const filter::BoundExpr& expr,
                                          const arrow::Schema& schema) {
  if (expr.uses_row_id() || expr.uses_row_offset()) return "";
  std::string key = "evaluated:" + expr.expr()->ToString();
  for (const int c : expr.columns()) {
    key += ";" + std::to_string(c) + ":" + schema.field(c)->ToString();
  }
  return key;
}

FilterBitsCache& FilterBitsCache::Global() {
  static FilterBitsCache* cache = new FilterBitsCache();  // never destroyed: used until exit
  return *cache;
}

int64_t FilterBitsCache::DefaultBudget() {
  const int64_t pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? pages * page / 256 : int64_t{64} << 20;
}

FilterBitsCache::FilterBitsCache(int64_t budget_bytes)
    : budget_(budget_bytes < 0 ? 0 : budget_bytes) {}

void FilterBitsCache::SetBudget(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  budget_ = bytes < 0 ? 0 : bytes;
  EvictLocked(budget_);
  if (budget_ == 0) {
    asked_.clear();
    asked_bytes_ = 0;
  }
}

void FilterBitsCache::EraseLocked(std::unordered_map<std::string, Entry>::iterator it) {
  bytes_ -= it->second.charged;
  lru_.erase(it->second.lru);
  map_.erase(it);
}

bool FilterBitsCache::Serves(const Entry& e, const shard::SourceView& source) {
  const size_t n = std::min(e.ids.size(), source.batches.size());
  for (size_t i = 0; i < n; ++i) {
    // An alive batch at this address is the batch the bits were computed over.
    if (e.ids[i] != source.batches[i].get() || e.owners[i].expired()) return false;
  }
  return true;
}

void FilterBitsCache::EvictLocked(int64_t budget) {
  // Expired sources first (their batches are gone), then least recently used.
  for (auto it = map_.begin(); it != map_.end();) {
    auto next = std::next(it);
    const auto& owners = it->second.owners;
    if (std::any_of(owners.begin(), owners.end(), [](const auto& o) { return o.expired(); })) {
      EraseLocked(it);
    }
    it = next;
  }
  while (bytes_ > budget && !lru_.empty()) {
    EraseLocked(map_.find(lru_.back()));
    ++evictions_;
  }
}

std::shared_ptr<const FilterBits> FilterBitsCache::Get(const std::string& predicate_key,
                                                       const RowPredicate::Bound& bound,
                                                       const shard::SourceView& source,
                                                       int64_t rows) {
  Result<std::shared_ptr<const FilterBits>> bits =
      Get("compiled:" + predicate_key, source, rows,
          [&](int64_t from, int64_t to, std::vector<uint64_t>* words) {
            FillFrom(bound, source, from, to, words);
            return Status::OK();
          });
  return bits.ok() ? *bits : nullptr;  // FillFrom never fails
}

Result<std::shared_ptr<const FilterBits>> FilterBitsCache::Get(const std::string& filter_key,
                                                               const shard::SourceView& source,
                                                               int64_t rows, const Fill& fill) {
  if (source.batches.size() == 0 || rows <= 0) return std::shared_ptr<const FilterBits>();
  const void* first = source.batches[0].get();
  char address[24];
  const int len =
      std::snprintf(address, sizeof(address), "%zx", reinterpret_cast<uintptr_t>(first));
  std::string key;
  key.reserve(filter_key.size() + source.name.size() + 2 + static_cast<size_t>(len));
  key.append(filter_key).push_back('\x1f');
  key.append(source.name).push_back('\x1f');
  key.append(address, static_cast<size_t>(len));
  const int64_t new_bytes =
      static_cast<int64_t>((rows + 63) / 64 * 8) + 64 + static_cast<int64_t>(key.size());
  std::shared_ptr<const FilterBits> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (budget_ == 0) return std::shared_ptr<const FilterBits>();
    auto it = map_.find(key);
    if (it != map_.end()) {
      if (Serves(it->second, source)) {
        lru_.splice(lru_.begin(), lru_, it->second.lru);
        if (it->second.bits->rows >= rows) {
          ++hits_;
          return it->second.bits;
        }
        old = it->second.bits;  // a MemTable that grew: extend below
      } else {
        EraseLocked(it);
      }
    }
    if (old == nullptr) {
      // Bits that could never be kept are not computed.
      if (new_bytes > budget_) return std::shared_ptr<const FilterBits>();
      auto [at, fresh] = asked_.try_emplace(key, 0);
      if (fresh) asked_bytes_ += static_cast<int64_t>(key.size());
      if (++at->second < 2) {
        // Forgotten wholesale past 65,536 pairs or 8 MiB of keys (filters are up to 64 KiB).
        if (asked_.size() > 65536 || asked_bytes_ > (int64_t{8} << 20)) {
          asked_.clear();
          asked_bytes_ = 0;
        }
        return std::shared_ptr<const FilterBits>();
      }
      asked_bytes_ -= static_cast<int64_t>(key.size());
      asked_.erase(at);
    } else if (new_bytes > budget_) {
      return old->rows >= rows ? old : std::shared_ptr<const FilterBits>();
    }
  }
  auto bits = std::make_shared<FilterBits>();
  bits->rows = rows;
  bits->words.assign(static_cast<size_t>((rows + 63) / 64), 0);
  int64_t from = 0;
  if (old != nullptr) {
    std::copy(old->words.begin(), old->words.end(), bits->words.begin());
    from = old->rows;
  }
  if (Status st = fill(from, rows, &bits->words); !st.ok()) {
    // Not asked for again until the demand window forgets it (each try would fail the same).
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) EraseLocked(it);
    auto [at, fresh] = asked_.try_emplace(key, 0);
    if (fresh) asked_bytes_ += static_cast<int64_t>(key.size());
    at->second = std::numeric_limits<int64_t>::min() / 2;
    return st;
  }
  for (const uint64_t w : bits->words) bits->count += std::popcount(w);
  if (bits->count * 64 <= rows) {
    bits->positions.emplace();
    bits->positions->reserve(static_cast<size_t>(bits->count));
    for (size_t i = 0; i < bits->words.size(); ++i) {
      for (uint64_t w = bits->words[i]; w != 0; w &= w - 1) {
        bits->positions->push_back(static_cast<int64_t>(i * 64) + std::countr_zero(w));
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  // An entry is charged its bits and its key (a filter's text may be long).
  const int64_t charged = bits->bytes() + static_cast<int64_t>(key.size());
  if (budget_ == 0 || charged > budget_)
    return std::shared_ptr<const FilterBits>(bits);  // the budget shrank meanwhile
  auto it = map_.find(key);
  if (it != map_.end()) {
    if (Serves(it->second, source) && it->second.bits->rows >= rows) {
      return it->second.bits;  // computed twice
    }
    EraseLocked(it);
  }
  ++builds_;
  EvictLocked(budget_ - charged);
  lru_.push_front(key);
  Entry entry{{}, {}, bits, charged, lru_.begin()};
  for (size_t b = 0; b < source.batches.size() && source.batch_starts[b] < rows; ++b) {
    entry.owners.emplace_back(source.batches[b]);
    entry.ids.push_back(source.batches[b].get());
  }
  map_.emplace(key, std::move(entry));
  bytes_ += charged;
  return std::shared_ptr<const FilterBits>(bits);
}

FilterBitsCacheStats FilterBitsCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {static_cast<int64_t>(map_.size()), bytes_, budget_, hits_, builds_, evictions_};
}

}  // namespace strata::query
