// Making the base-wide index of one definition (DESIGN.md §7; issue 15): for a vector
// definition whose requested type is IVF_FLAT, IVF_PQ or IVF_SQ (index/index_spec.h BaseIvfFor)
// a FAISS IVF index (index/vector/ivf_index.h) trained on a sample of the base rows; for every
// other definition the in-memory kind's empty index (ColumnIndex::Make: float HNSW, BTree, FTS).
// Rows are added by the caller (ColumnIndex::IndexBatch), so a checkpoint and the compaction's
// copy-and-grow work the same way for both.
//
// Training sample: num_partitions = index_spec.h AutoPartitions(rows) unless the definition
// sets it; the sample is min(rows, sample_rate * num_partitions) rows taken at an even stride
// over base order (deterministic), skipping null vectors, vectors with a null or non-finite
// element and, under cosine, zero vectors. FAISS k-means then runs max_iterations on it.
//
// Retraining (NeedsRetrain): an IVF index is trained on the rows of the base at the time; once
// the base holds kRetrainGrowth (4) times as many rows as it was trained on, its partitions no
// longer fit the data (their count was chosen for a quarter of the rows, and the centroids
// only saw those rows), so the index builder thread (base_table.h "Index builds") trains a new
// one over a snapshot of every row, off the compaction lock, catches it up on the rows
// compacted meanwhile and swaps it in; until then the old one keeps serving and growing with
// each compaction. A compaction never calls MakeBaseIndex for an IVF definition. Retraining
// at 4x growth keeps the total training + re-adding work O(rows) (a geometric series).
//
// Thread-safety: pure functions over immutable batches.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"
#include "index/column_index.h"
#include "index/index_spec.h"

namespace strata::base {

/// An IVF index is retrained once the base has this many times the rows it was trained on.
inline constexpr int64_t kRetrainGrowth = 4;

/// An empty base index for `spec` over `schema` (the storage schema); for an IVF definition,
/// trained on a sample of `batches` (all base rows, in base order). `capacity`: HNSW
/// preallocation, vectors. Errors: ValidateIndexSpec's; Invalid when an IVF definition has no
/// vector to train on; the IVF training's errors; Cancelled once `abandon` (optional, asked
/// during the training: IvfIndex::Train) returns true.
Result<std::shared_ptr<index::ColumnIndex>> MakeBaseIndex(
    const index::IndexSpec& spec, const arrow::Schema& schema,
    const std::vector<arrow::RecordBatchPtr>& batches, int64_t capacity,
    const std::function<bool()>& abandon = {});

/// Whether `idx` is an IVF index due for retraining over a base of `rows` rows.
bool NeedsRetrain(const index::ColumnIndex& idx, int64_t rows);

}  // namespace strata::base
