// A table: its schema, version, and the one shard that holds its rows (issue 2: one shard per
// table, unsharded). Thread-safety: every method may be called from many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::table {

/// A consistent read view: every row acknowledged before Snapshot() returned, oldest first.
/// Batches are immutable and shared with the MemTable (no copy).
struct TableSnapshot {
  arrow::SchemaPtr schema;
  uint64_t version = 0;
  std::vector<arrow::RecordBatchPtr> batches;
  int64_t num_rows = 0;
};

class Table {
 public:
  virtual ~Table() = default;

  virtual const std::string& name() const = 0;
  virtual arrow::SchemaPtr schema() const = 0;
  /// Version number; every committed write makes a new, higher one. Survives restarts.
  virtual uint64_t version() const = 0;

  /// Appends `batches` (all under the table schema; validated first: names, types,
  /// nullability, vector dimension; a bad batch changes nothing) as one durable WAL entry, then
  /// makes them visible. Returns the new version.
  /// Errors: Invalid naming the column and the mismatch; IOError when the WAL write fails.
  virtual Result<uint64_t> Insert(const std::vector<arrow::RecordBatchPtr>& batches) = 0;

  /// Replaces all rows (and the schema) with `batches` under `schema`. Returns the new version.
  virtual Result<uint64_t> Overwrite(arrow::SchemaPtr schema,
                                     const std::vector<arrow::RecordBatchPtr>& batches) = 0;

  virtual TableSnapshot Snapshot() const = 0;
};

}  // namespace strata::table
