// The MemTable batch store (DESIGN.md §1, §4): an append-only list of record batches of one
// shard with 0-based row positions (row i of the k-th batch has position
// rows_before(k) + i; a higher position is newer), row and byte counters, and the WAL position
// of the newest entry it holds. Snapshots are cheap copies of the batch list (the batches
// themselves are immutable and shared), readable while appends continue.
// Locking: `mu_` (a shared_mutex) guards batches_, batch_starts_ and last_wal_position_;
// Append takes it exclusively for the push_back only, Snapshot/Locate share it. The counters
// are atomics readable without the lock.
// Thread-safety: every method may be called from many threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <shared_mutex>
#include <utility>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"

namespace strata::memtable {

/// A consistent read view of a MemTable.
struct MemTableSnapshot {
  std::vector<arrow::RecordBatchPtr> batches;  // oldest first
  int64_t num_rows = 0;
  int64_t num_bytes = 0;
  uint64_t last_wal_position = 0;  // newest WAL entry whose rows are in `batches`, 0 = none
};

class MemTable {
 public:
  explicit MemTable(arrow::SchemaPtr schema);

  const arrow::SchemaPtr& schema() const { return schema_; }

  /// Appends `batches` (already validated against the schema; 0-row batches are skipped) that
  /// came from WAL entry `wal_position` (0 = not logged). Returns the row position of the first
  /// appended row.
  int64_t Append(const std::vector<arrow::RecordBatchPtr>& batches, uint64_t wal_position);

  MemTableSnapshot Snapshot() const;

  /// (batch index, row inside the batch) of row `position`, or (-1, -1) when out of range.
  std::pair<int64_t, int64_t> Locate(int64_t position) const;

  int64_t num_rows() const { return num_rows_.load(std::memory_order_acquire); }
  /// Approximate bytes held: the sizes of the column buffers (shared buffers counted once per
  /// reference).
  int64_t num_bytes() const { return num_bytes_.load(std::memory_order_acquire); }
  int64_t num_batches() const;

 private:
  const arrow::SchemaPtr schema_;
  mutable std::shared_mutex mu_;
  std::vector<arrow::RecordBatchPtr> batches_;  // guarded by mu_
  std::vector<int64_t> batch_starts_;           // guarded by mu_: first row position per batch
  uint64_t last_wal_position_ = 0;              // guarded by mu_
  std::atomic<int64_t> num_rows_{0};
  std::atomic<int64_t> num_bytes_{0};
};

/// Sum of the buffer sizes of `data` and its children, bytes.
int64_t ArrayDataBytes(const arrow::ArrayData& data);

}  // namespace strata::memtable
