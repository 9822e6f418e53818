#include "memtable/memtable.h"

#include <algorithm>
#include <mutex>

namespace strata::memtable {

int64_t ArrayDataBytes(const arrow::ArrayData& data) {
  int64_t n = 0;
  for (const auto& b : data.buffers) {
    if (b) n += b->size();
  }
  for (const auto& c : data.children) {
    if (c) n += ArrayDataBytes(*c);
  }
  return n;
}

MemTable::MemTable(arrow::SchemaPtr schema) : schema_(std::move(schema)) {}

int64_t MemTable::Append(const std::vector<arrow::RecordBatchPtr>& batches, uint64_t wal_position) {
  int64_t rows = 0, bytes = 0;
  for (const auto& b : batches) {
    rows += b->num_rows();
    for (const auto& c : b->columns()) bytes += ArrayDataBytes(*c);
  }
  std::unique_lock<std::shared_mutex> lock(mu_);
  const int64_t first = num_rows_.load(std::memory_order_relaxed);
  int64_t start = first;
  for (const auto& b : batches) {
    if (b->num_rows() == 0) continue;
    batches_.push_back(b);
    batch_starts_.push_back(start);
    start += b->num_rows();
  }
  if (wal_position > last_wal_position_) last_wal_position_ = wal_position;
  num_bytes_.fetch_add(bytes, std::memory_order_release);
  num_rows_.store(first + rows, std::memory_order_release);
  return first;
}

MemTableSnapshot MemTable::Snapshot() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  MemTableSnapshot s;
  s.batches = batches_;
  s.num_rows = num_rows_.load(std::memory_order_acquire);
  s.num_bytes = num_bytes_.load(std::memory_order_acquire);
  s.last_wal_position = last_wal_position_;
  return s;
}

std::pair<int64_t, int64_t> MemTable::Locate(int64_t position) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (position < 0 || position >= num_rows_.load(std::memory_order_acquire)) return {-1, -1};
  auto it = std::upper_bound(batch_starts_.begin(), batch_starts_.end(), position);
  int64_t k = (it - batch_starts_.begin()) - 1;
  return {k, position - batch_starts_[static_cast<size_t>(k)]};
}

int64_t MemTable::num_batches() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return static_cast<int64_t>(batches_.size());
}

}  // namespace strata::memtable
