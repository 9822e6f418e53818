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
// Shared by several shards (docs/SHARDING.md "One base for all shards"): each shard writer
// marks the base rows of its own keys in its own lane (shard/liveness.h "Lanes"), carried
// marks are kept per lane, and a view of the whole table reads the base once under a
// Visibility with one lane per shard (View). `mark_mu_` serialises every writer-side change
// (marks of every lane, AppendFragment, CarryMarks, FoldCarried, Replace), so several shard
// writers mark concurrently, each under its own lock (lock order: a shard's `mu`, then
// mark_mu_, then state_mu_).
// Thread-safety: the writer methods are serialised by mark_mu_ (liveness() hands out the
// liveness for its opener, before any shard writer has the base). `state_mu_` guards the published
// state (rows, fragments, carried marks) that readers copy with CurrentState(); `idx_mu_` guards
// the index list. Every const method may run from any thread.
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
#include "shard/source_view.h"
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
    /// Carried marks not yet folded, sorted, by lane (index = lane; lane 0 first).
    std::shared_ptr<const std::vector<std::vector<uint64_t>>> carried;
    /// Carried marks whose generation is compacted, by lane: dead in every view of the lane.
    std::shared_ptr<const std::vector<int64_t>> carried_folded;
    uint64_t epoch = 0;  // rewrites installed before this state (Replace)
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
  /// The current liveness, for the base's opener (deletion vectors) before a writer has it.
  Liveness& liveness();
  /// A shard writer's mark: the newest base row of encoded `key` is superseded by `by` (a row
  /// address of `lane`, or kDead). `state` is the writer's CurrentState() (the key is looked
  /// up in it without the lock); if a rewrite replaced the state meanwhile, the key is looked
  /// up again in the current one. Returns whether a row was marked.
  bool MarkKey(const State& state, std::string_view key, uint64_t by, int lane = 0);
  /// Marks each (position, by) (`by` a row address of `lane` or kDead, any order): marks
  /// carried over from the SSTable rows a compaction copied. Rows already marked keep theirs.
  void CarryMarks(const std::vector<std::pair<int64_t, uint64_t>>& marks, int lane = 0);
  /// Folds carried marks of `lane` naming generations <= `generation` into the always-dead
  /// count.
  void FoldCarried(uint64_t generation, int lane = 0);
  /// A base rewrite's install: the base becomes exactly the rows of `fragments` (positions
  /// renumbered from 0), with `indexes` as its index list and `marks` (position, by) carried
  /// onto the new positions as CarryMarks does; `epoch` grows by one. States captured before
  /// keep their own batches and liveness. Writer-serialised (the shard writer's `mu`).
  void Replace(const std::vector<std::shared_ptr<const sstable::SSTableReader>>& fragments,
               std::vector<std::shared_ptr<index::ColumnIndex>> indexes,
               const std::vector<std::pair<int64_t, uint64_t>>& marks);
  /// A base rewrite's install from `origins` (for each new row, in order, its position in the
  /// current rows): reads each origin's mark and lane and installs the new rows (as Replace)
  /// under one hold of the mark lock, so no shard's mark made meanwhile is lost. Fails
  /// (changing nothing) when the current epoch is not `epoch` or an origin is out of range.
  Status ReplaceFrom(uint64_t epoch,
                     const std::vector<std::shared_ptr<const sstable::SSTableReader>>& fragments,
                     std::vector<std::shared_ptr<index::ColumnIndex>> indexes,
                     const std::vector<int64_t>& origins);

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
  /// Dead rows of `state` as `view` sees them (O(lanes x log(marks))), by its liveness.
  int64_t DeadIn(const State& state, const Visibility& view) const;
  /// The read source of `state` under `view` ("base", generation 0): the base indexes that
  /// cover every row and belong to a definition of `current` (name and uuid), and point
  /// lookups over `key_columns` (storage indexes; empty: none, for `_rowid` tables). For a base
  /// shared by shards, `view` has one lane per shard. nullopt when the base has no row.
  std::optional<SourceView> View(const State& state, std::shared_ptr<const Visibility> view,
                                 const std::vector<index::IndexSpec>& current,
                                 const std::vector<int>& key_columns) const;

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
  void CarryLocked(const std::vector<std::pair<int64_t, uint64_t>>& marks,
                   const std::vector<int>& lanes, int lane);

  /// Installs fresh rows (Replace, ReplaceFrom); mark_mu_ and state_mu_ held.
  void ReplaceLocked(const std::vector<std::shared_ptr<const sstable::SSTableReader>>& fragments,
                     const std::vector<std::pair<int64_t, uint64_t>>& marks,
                     const std::vector<int>& lanes);

  const arrow::SchemaPtr storage_schema_;
  /// Serialises writer-side changes of the liveness and rows (see the file comment).
  std::mutex mark_mu_;
  /// state_.live's object, readable under mark_mu_ alone (MarkKey's check for a rewrite).
  const Liveness* current_live_ = nullptr;  // guarded by mark_mu_
  mutable std::mutex state_mu_;
  State state_;  // guarded by state_mu_ (its batches / starts / live replaced only by Replace)
  mutable std::mutex idx_mu_;
  std::vector<std::shared_ptr<index::ColumnIndex>> indexes_;  // guarded by idx_mu_
};

}  // namespace strata::shard
