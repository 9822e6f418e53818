// The base table (DESIGN.md §1 "generation 0", §7) as the oldest read source of a shard: the
// rows of its fragments in base order (row position p = p-th row of the base, across
// fragments), their liveness, and the base-wide indexes (one index per definition over every
// base row, grown with each compaction: hnswlib HNSW labels = base positions, BTree and FTS
// positions likewise). The files behind it (fragments, deletion vectors, index checkpoints,
// the table manifest) are managed by src/base/; this class is only the in-memory form that
// the shard writer marks at write time and puts in its read views.
//
// Rows only ever append (a compaction adds a fragment); a row's position never changes, so a
// view that captured `rows` and the fragment list reads a stable prefix, and index entries for
// positions at or past a view's row count are simply not live in it (as for MemTables).
// The one exception is a base rewrite (src/base/base_rewrite.cc, Replace): it swaps in new
// fragments, batches, liveness and indexes with positions renumbered 0..n-1 and bumps
// `epoch`. A State holds its own batch logs and liveness (shared_ptrs), so a view built before
// a rewrite keeps reading the old rows consistently; views order by epoch first.
//
// Liveness: one Liveness (shard/liveness.h) for every base row. Marks made by the writer as
// rows arrive are in address order (its ascending log counts them); a compaction that copies an
// SSTable row whose mark names a newer, uncompacted generation carries that mark over out of
// order, so such marks are kept aside in a small sorted list per installed state and counted
// separately (CarryMark); once their generation is compacted too they are always visible and
// fold into a plain count (FoldCarried).
//
// Thread-safety: the writer methods (AppendFragment, CarryMark, FoldCarried, liveness() marks)
// are serialised by the caller: before the base is handed to a shard writer, its opener; after,
// the shard writer's `mu`. `state_mu_` guards the published state (rows, fragments, carried
// marks) that readers copy with CurrentState(); `idx_mu_` guards the index list. Every const
// method may run from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "index/column_index.h"
#include "memtable/append_log.h"
#include "shard/liveness.h"
#include "sstable/sstable_reader.h"

namespace strata::shard {

class BaseSource {
 public:
  struct Fragment {
    std::shared_ptr<const sstable::SSTableReader> data;  // rows, key index, bloom filter
    int64_t first_row = 0;                               // base position of its first row
  };
  /// What a read view captures (copy under state_mu_).
  struct State {
    int64_t rows = 0;
    size_t num_batches = 0;  // batches holding rows [0, rows)
    std::shared_ptr<const std::vector<Fragment>> fragments;
    std::shared_ptr<const std::vector<uint64_t>> carried;  // sorted carried marks
    int64_t carried_folded = 0;  // carried marks whose generation is compacted: always dead
    uint64_t epoch = 0;          // rewrites installed before this state (Replace)
    std::shared_ptr<memtable::AppendLog<arrow::RecordBatchPtr>> batches;
    std::shared_ptr<memtable::AppendLog<int64_t>> starts;
    std::shared_ptr<Liveness> live;
  };

  explicit BaseSource(arrow::SchemaPtr storage_schema);

  const arrow::SchemaPtr& storage_schema() const { return storage_schema_; }

  // ---- writer ----
  /// Appends `data`'s rows as base rows [rows(), rows() + data->num_rows()) (addressable in
  /// liveness, unmarked). Views built afterwards include them.
  void AppendFragment(std::shared_ptr<const sstable::SSTableReader> data);
  /// The current liveness (writer: under the same serialisation as Replace).
  Liveness& liveness();
  /// Marks each (position, by) (`by` a row address or kDead, any order): marks carried over
  /// from the SSTable rows a compaction copied. Rows already marked keep their mark.
  void CarryMarks(const std::vector<std::pair<int64_t, uint64_t>>& marks);
  /// Folds carried marks naming generations <= `generation` into the always-dead count.
  void FoldCarried(uint64_t generation);
  /// A base rewrite's install: the base becomes exactly the rows of `fragments` (positions
  /// renumbered from 0), with `indexes` as its index list and `marks` (position, by) carried
  /// onto the new positions as CarryMarks does; `epoch` grows by one. States captured before
  /// keep their own batches and liveness. Writer-serialised (the shard writer's `mu`).
  void Replace(const std::vector<std::shared_ptr<const sstable::SSTableReader>>& fragments,
               std::vector<std::shared_ptr<index::ColumnIndex>> indexes,
               const std::vector<std::pair<int64_t, uint64_t>>& marks);

  // ---- readers ----
  State CurrentState() const;
  int64_t rows() const;
  uint64_t epoch() const;
  std::shared_ptr<const Liveness> live() const;
  /// Batches of base rows [0, state.rows) and their first positions (no copy; from the
  /// state's own logs).
  memtable::LogView<arrow::RecordBatchPtr> Batches(const State& state) const;
  memtable::LogView<int64_t> BatchStarts(const State& state) const;
  /// Newest base row of `key` (an encoded key, format/key_encoding.h) in `state`'s fragments:
  /// newest fragment first, bloom filter then key index. The row may be dead: check liveness.
  static std::optional<int64_t> Lookup(const State& state, std::string_view key);
  /// Dead rows of `state` as `view` sees them (O(fragments + log(marks))), by its liveness.
  int64_t DeadIn(const State& state, const Visibility& view) const;

  // ---- indexes (idx_mu_) ----
  /// The base-wide index of each definition (may cover fewer rows than rows() while it is
  /// being built: compare rows_indexed()).
  std::vector<std::shared_ptr<index::ColumnIndex>> indexes() const;
  /// Adds or replaces (same name) the index of one definition.
  void SetIndex(std::shared_ptr<index::ColumnIndex> idx);
  /// Drops the index of definition `name` (if any).
  void RemoveIndex(const std::string& name);
  /// Drops indexes whose (name, uuid) is not in `keep`.
  void RetainIndexes(const std::vector<index::IndexSpec>& keep);

 private:
  /// Appends `data`'s batches to state_'s logs (state_mu_ held).
  void AppendLocked(std::shared_ptr<const sstable::SSTableReader> data);
  void CarryLocked(const std::vector<std::pair<int64_t, uint64_t>>& marks);

  const arrow::SchemaPtr storage_schema_;
  mutable std::mutex state_mu_;
  State state_;  // guarded by state_mu_ (its batches / starts / live replaced only by Replace)
  mutable std::mutex idx_mu_;
  std::vector<std::shared_ptr<index::ColumnIndex>> indexes_;  // guarded by idx_mu_
};

}  // namespace strata::shard
