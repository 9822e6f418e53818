// Rows picked from the sources of a shard snapshot (shard::SourceView, DESIGN.md §6), as the
// index-aware queries (vector search, full-text search) see them: which rows a query may
// return (live and passing the filter), the output columns of the picked rows, and their
// `_rowid`.
// `_rowid` follows the merged-snapshot semantics of TableSnapshot: the hidden `_rowid` column
// (uint64, storage column right after the user columns) for tables without a primary key;
// for primary-key tables the row's ordinal among the snapshot's live rows (oldest source
// first, position order inside a source), i.e. its position in TableSnapshot::batches.
// Thread-safety: pure functions and immutable values over an immutable snapshot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arrow/array.h"
#include "common/status.h"
#include "query/predicate.h"
#include "query/projection.h"
#include "shard/shard_writer.h"

namespace strata::query {

/// One picked row: index into ShardSnapshot::sources and the row position in that source.
struct SourceHit {
  uint32_t source = 0;
  int64_t position = 0;
};

/// Which rows of one source a query may return: live rows (SourceView::IsLive) that pass the
/// filter. Without a filter it reads the source's liveness bitmaps directly (no copy); with
/// one it holds one byte per row position.
class AcceptedRows {
 public:
  /// Evaluates `filter` (bound against the user schema; null = none) over every batch of
  /// `source`. The source must outlive this object.
  AcceptedRows(const shard::SourceView& source, const BoundPredicate* filter);

  /// Whether position `position` may be returned (false out of [0, num_rows)).
  bool Test(int64_t position) const {
    if (position < 0 || position >= source_->num_rows) return false;
    if (filtered_) return mask_[static_cast<size_t>(position)] != 0;
    return source_->IsLive(position);
  }
  /// Rows accepted.
  int64_t count() const { return count_; }
  bool filtered() const { return filtered_; }

 private:
  const shard::SourceView* source_;
  bool filtered_ = false;
  std::vector<uint8_t> mask_;  // filtered only: live && filter, per row position
  int64_t count_ = 0;
};

/// Whether LSB-first bitmap `bits` has bit `i` set.
inline bool BitIsSet(const std::vector<uint8_t>& bits, int64_t i) {
  const size_t byte = static_cast<size_t>(i >> 3);
  return byte < bits.size() && ((bits[byte] >> (i & 7)) & 1) != 0;
}

/// Projected user columns of `hits`, in order, gathered from the sources' batches
/// (projection.indices are user-schema indices, which equal storage-schema indices).
/// Errors: Invalid from the gather kernel (a string result past 2 GiB).
Result<std::vector<arrow::ArrayDataPtr>> GatherSourceRows(const shard::ShardSnapshot& shard,
                                                          const Projection& projection,
                                                          const std::vector<SourceHit>& hits);

/// `_rowid` of each of `hits` (see the file comment). `num_user_fields` is the user schema's
/// field count.
std::vector<uint64_t> SourceRowIds(const shard::ShardSnapshot& shard, int num_user_fields,
                                   const std::vector<SourceHit>& hits);

}  // namespace strata::query
