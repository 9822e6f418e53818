// The live rows of a shard snapshot that a filter picks, gathered per source batch under the
// storage schema (hidden key columns kept): the read half of the read-modify-write routes
// (delete/, update/, merge_insert/), which turn them into tombstones or replacement versions
// that keep their key.
// Thread-safety: pure functions over an immutable snapshot.
#pragma once

#include <cstdint>
#include <vector>

#include "arrow/array.h"
#include "common/status.h"
#include "query/source_rows.h"
#include "shard/shard_writer.h"

namespace strata::query {

/// The picked rows of one batch of one source.
struct MatchedBatch {
  uint32_t source = 0;  // index into ShardSnapshot::sources
  int64_t batch = 0;    // index into SourceView::batches
  /// The picked rows under the storage schema, ascending position.
  arrow::RecordBatchPtr storage;
  std::vector<int64_t> rows;       // their rows inside SourceView::batches[batch]
  std::vector<int64_t> positions;  // their positions in the source
};

/// Live rows of `shard` accepted by `filter` (AcceptedRows per source; an empty filter takes
/// every live row), per source batch in scan order (sources oldest first, positions
/// ascending); batches with no picked row are left out.
/// Errors: Invalid from evaluation or the gather kernel.
Result<std::vector<MatchedBatch>> MatchLiveRows(const shard::ShardSnapshot& shard,
                                                const SnapshotFilter& filter);

/// Values of the hidden `_rowid` / `_rowoffset` columns (source_rows.h) for the rows of
/// `matched`, in its row order.
std::vector<uint64_t> MatchedRowIds(const shard::ShardSnapshot& shard, const MatchedBatch& matched);
std::vector<uint64_t> MatchedRowOffsets(const shard::ShardSnapshot& shard,
                                        const MatchedBatch& matched);

}  // namespace strata::query
