#include "memtable/primary_key_index.h"

#include <algorithm>

namespace strata::memtable {

namespace {
// Rough per-entry costs: a hash node (key view + value + next pointer + hash) and a bucket.
constexpr int64_t kMapEntryBytes = 48;
constexpr int64_t kRowBytes = static_cast<int64_t>(sizeof(std::string) + sizeof(int64_t));
}  // namespace

int64_t PrimaryKeyIndex::Insert(std::string key, int64_t position) {
  const int64_t heap = key.size() > 15 ? static_cast<int64_t>(key.capacity()) : 0;
  keys_.push_back(std::move(key));
  key_bytes_ += heap;
  const std::string_view view = keys_.back();
  int64_t prev = -1;
  auto [it, inserted] = newest_.try_emplace(view, position);
  if (!inserted) {
    // The map's key view stays on the key's first row, which outlives every newer row of the
    // key (rows are only ever removed newest first, by TruncateTo).
    prev = it->second;
    it->second = position;
  }
  prev_.push_back(prev);
  return prev;
}

std::optional<int64_t> PrimaryKeyIndex::Lookup(std::string_view key, int64_t watermark) const {
  auto it = newest_.find(key);
  if (it == newest_.end()) return std::nullopt;
  int64_t p = it->second;
  while (p >= watermark) {
    p = prev_[static_cast<size_t>(p)];
    if (p < 0) return std::nullopt;
  }
  return p;
}

int64_t PrimaryKeyIndex::previous(int64_t position) const {
  if (position < 0 || position >= rows()) return -1;
  return prev_[static_cast<size_t>(position)];
}

std::vector<int64_t> PrimaryKeyIndex::SupersededRows(int64_t watermark) const {
  const int64_t end = std::min(watermark, rows());
  std::vector<int64_t> out;
  for (int64_t r = 0; r < end; ++r) {
    int64_t p = prev_[static_cast<size_t>(r)];
    if (p >= 0) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void PrimaryKeyIndex::TruncateTo(int64_t position) {
  if (position < 0) position = 0;
  while (rows() > position) {
    const size_t r = keys_.size() - 1;
    const int64_t prev = prev_[r];
    if (prev >= 0) {
      newest_.find(std::string_view(keys_[r]))->second = prev;
    } else {
      newest_.erase(std::string_view(keys_[r]));
    }
    if (keys_[r].size() > 15) key_bytes_ -= static_cast<int64_t>(keys_[r].capacity());
    keys_.pop_back();
    prev_.pop_back();
  }
}

int64_t PrimaryKeyIndex::memory_bytes() const {
  return rows() * kRowBytes + key_bytes_ + distinct_keys() * kMapEntryBytes;
}

}  // namespace strata::memtable
