// Rows picked from the sources of a shard snapshot (shard::SourceView, DESIGN.md §6), as every
// query kind sees them: which rows a query may return (live and passing the filter), the output
// columns of the picked rows, and their hidden `_rowid` / `_rowoffset` values.
//
// `_rowid` (uint64) is the stable address of one row version:
//     _rowid = generation << 32 | position
// where `generation` is the MemTable generation that received the row (the SSTable flushed
// from it keeps the generation and the row order, so the address survives the flush) and
// `position` is the row's position inside that generation (< 2^32, SSTableWriter enforces it).
// An update or upsert writes a new version with a new address. Addresses are unique within a
// shard (one shard per table today; a shard index will take the top bits when tables get
// several). Compaction into a base table (issue 8+) will re-address rows.
// `_rowoffset` (uint64) is the row's ordinal among the snapshot's live rows in scan order
// (sources oldest first, positions ascending), i.e. the offset LanceDB's takeOffsets uses.
//
// Thread-safety: pure functions and immutable values over an immutable snapshot.
#pragma once

#include <algorithm>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "arrow/array.h"
#include "common/status.h"
#include "query/filter/evaluator.h"
#include "query/projection.h"
#include "shard/shard_writer.h"
#include "table/table.h"

namespace strata::query {

/// `_rowid` of row `position` of generation `generation` (see the file comment).
inline uint64_t EncodeRowId(uint64_t generation, int64_t position) {
  return (generation << 32) | (static_cast<uint64_t>(position) & 0xffffffffULL);
}
/// Inverse of EncodeRowId: (generation, position).
inline std::pair<uint64_t, int64_t> DecodeRowId(uint64_t row_id) {
  return {row_id >> 32, static_cast<int64_t>(row_id & 0xffffffffULL)};
}

/// Bit where a table of several shards puts (shard + 1) in a `_rowid` (shards' generations
/// are numbered independently, so (generation, position) alone is not unique): ids of a shard's
/// source are (shard + 1) << 53 | generation << 32 | position, with generations below 2^21;
/// the shared base (shard -1) and one-shard tables keep EncodeRowId as it is.
inline constexpr int kRowIdShardBit = 53;

/// `_rowid` of row `position` of `source` (shard-aware, see kRowIdShardBit).
inline uint64_t RowIdOf(const shard::SourceView& source, int64_t position) {
  const uint64_t id = EncodeRowId(source.generation, position);
  if (source.shard < 0) return id;
  return (static_cast<uint64_t>(source.shard + 1) << kRowIdShardBit) |
         (id & ((uint64_t{1} << kRowIdShardBit) - 1));
}

/// The position in `source` that `_rowid` `row_id` names, or -1 when it names another source.
inline int64_t PositionOfRowId(const shard::SourceView& source, uint64_t row_id) {
  const int64_t p = static_cast<int64_t>(row_id & 0xffffffffULL);
  return p < source.num_rows && RowIdOf(source, p) == row_id ? p : -1;
}

/// One picked row: index into ShardSnapshot::sources and the row position in that source.
struct SourceHit {
  uint32_t source = 0;
  int64_t position = 0;
};

/// Whether LSB-first bitmap `bits` has bit `i` set.
inline bool BitIsSet(const std::vector<uint8_t>& bits, int64_t i) {
  const size_t byte = static_cast<size_t>(i >> 3);
  return byte < bits.size() && ((bits[byte] >> (i & 7)) & 1) != 0;
}

/// A filter prepared for one snapshot: the bound expression plus what it needs per source
/// (the `_rowoffset` base of each source when the filter reads it).
/// `batch` (storage schema: the user columns first, then hidden ones) as a batch of the user
/// `schema` (zero-copy), as filter::Evaluate takes it.
arrow::RecordBatchPtr UserView(const arrow::SchemaPtr& schema, const arrow::RecordBatch& batch);

class SnapshotFilter {
 public:
  /// No filter: every live row passes.
  SnapshotFilter() = default;
  /// Parses and binds `sql` against shard.schema (filter::ParseAndBind; errors Invalid naming
  /// the token and position). `shard` must outlive this object.
  static Result<SnapshotFilter> Make(const shard::ShardSnapshot& shard, std::string_view sql);

  bool empty() const { return expr_ == nullptr; }
  const filter::BoundExprPtr& expr() const { return expr_; }
  /// Live rows of sources [0, s): the `_rowoffset` of source s's first live row.
  int64_t row_offset_base(uint32_t source) const;

 private:
  filter::BoundExprPtr expr_;
  std::vector<int64_t> row_offset_base_;  // per source + 1 (prefix sums of live_rows)
};

/// Which rows of one source a query may return: live rows (SourceView::IsLive) that pass the
/// filter. Without a filter it reads the source's liveness directly (no copy). With
/// one it uses, when the source holds them, the key index for equality / IN on the whole
/// primary key (point lookup: bloom filter, then the key index) and a BTree index for a
/// conjunct `col <op> literal`, `col BETWEEN`, `col IN`, `col IS [NOT] NULL` it covers, then
/// evaluates the whole filter on the candidates only; otherwise it evaluates the filter over
/// every batch. `plan()` says which.
class AcceptedRows {
 public:
  /// Errors: Invalid from evaluation (see filter::Evaluate).
  static Result<AcceptedRows> Make(const shard::ShardSnapshot& shard, uint32_t source,
                                   const SnapshotFilter& filter);

  /// Whether position `position` may be returned (false out of [0, num_rows)).
  bool Test(int64_t position) const {
    if (position < 0 || position >= source_->num_rows) return false;
    if (sparse_) return std::binary_search(positions_.begin(), positions_.end(), position);
    if (filtered_) return BitIsSet(mask_, position);
    return source_->IsLive(position);
  }
  /// Rows accepted.
  int64_t count() const { return count_; }
  bool filtered() const { return filtered_; }
  /// Accepted positions, ascending.
  std::vector<int64_t> Positions() const;
  /// How the rows were chosen, e.g. "BTree 'price_idx' (price > 10): 42 candidates",
  /// "key lookup: 1 candidate", "filter evaluated over 10000 rows"; empty without a filter.
  const std::string& plan() const { return plan_; }

 private:
  AcceptedRows() = default;
  const shard::SourceView* source_ = nullptr;
  bool filtered_ = false;
  /// Filtered through index candidates that few rows passed (a point query): the accepted
  /// positions, ascending, instead of a bitmap of every row of the source (which cost
  /// O(rows / 8) per query to clear and to scan back into positions: a quarter of a key
  /// lookup's server time at 60,000 rows, docs/BENCHMARKS.md, and growing with the source).
  bool sparse_ = false;
  std::vector<int64_t> positions_;  // sparse_ only
  std::vector<uint8_t> mask_;       // filtered and not sparse_: LSB-first bitmap, live && filter
  int64_t count_ = 0;
  std::string plan_;
};

/// Projected output columns of `hits`, in order, gathered from the sources' batches: plain
/// column references are gathered directly; computed projections (projection.h) are evaluated
/// over the gathered rows of the columns they read (with `_rowid` / `_rowoffset` when they
/// use them).
/// Errors: Invalid from the gather kernel (a string result past 2 GiB) or from evaluation.
Result<std::vector<arrow::ArrayDataPtr>> GatherSourceRows(const shard::ShardSnapshot& shard,
                                                          const Projection& projection,
                                                          const std::vector<SourceHit>& hits);

/// `_rowid` of each of `hits` (EncodeRowId of the source's generation and the position).
std::vector<uint64_t> SourceRowIds(const shard::ShardSnapshot& shard,
                                   const std::vector<SourceHit>& hits);

/// `_rowoffset` of each of `hits` (see the file comment).
std::vector<uint64_t> SourceRowOffsets(const shard::ShardSnapshot& shard,
                                       const std::vector<SourceHit>& hits);

/// Whether each of `hits` passes `filter` (1) or not (0), evaluating it over the gathered rows
/// of the columns it reads only (postfiltering a top-k). Liveness is not checked. An empty
/// filter passes every hit. Errors: Invalid from the gather kernel or evaluation.
Result<std::vector<uint8_t>> FilterHits(const shard::ShardSnapshot& shard,
                                        const SnapshotFilter& filter,
                                        const std::vector<SourceHit>& hits);

/// The shard snapshot of `snapshot`; for a TableSnapshot without one (a failed snapshot,
/// which has no rows) an empty one of its schema.
std::shared_ptr<const shard::ShardSnapshot> ShardOf(const table::TableSnapshot& snapshot);

}  // namespace strata::query
