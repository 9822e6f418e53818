// Exact (brute-force) k-nearest-neighbour search over a snapshot's fixed_size_list<float32>
// column. Every non-null vector (and, with a filter, every matching row: prefilter semantics)
// is scored with the distance of distance.h; a bounded max-heap keeps the best k + offset.
// Rows whose vector is null, holds a null element, or scores NaN are skipped. The result is
// sorted by distance ascending, ties broken by row position (older first), then `offset` rows
// are dropped. Cost: O(rows * dim) reads plus O(rows log(k)) heap work.
// Thread-safety: pure function over an immutable snapshot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "index/vector/distance.h"
#include "query/filtered_source_search.h"
#include "query/projection.h"
#include "query/query_result.h"
#include "table/table.h"

namespace strata::query {

using index::DistanceType;
using index::DistanceTypeName;
using index::ParseDistanceType;

struct VectorSearchOptions {
  /// The query vector; its length must equal the column's list size; finite values only.
  std::vector<float> query;
  /// Vector column; empty = the table's only fixed_size_list<float32> column.
  std::string column;
  /// Number of neighbours (>= 1).
  int64_t k = 10;
  /// Best rows to skip before the k returned (>= 0).
  int64_t offset = 0;
  DistanceType distance = DistanceType::kL2;
  /// Output columns; empty = all. `_distance` (float32) is always appended after them.
  std::vector<ColumnRef> columns;
  /// SQL filter (query/filter/); unset = none.
  std::optional<std::string> filter;
  /// true (default): the filter restricts the candidates before the top-k (prefilter);
  /// false: the top-k is computed first and then filtered, so fewer than k rows may return.
  bool prefilter = true;
  /// Keep only rows with lower_bound <= _distance < upper_bound (LanceDB distanceRange),
  /// applied before the top-k cut.
  std::optional<float> lower_bound;
  std::optional<float> upper_bound;
  /// Append `_rowid` (uint64, the row-version address of source_rows.h) after `_distance`.
  bool with_row_id = false;
  /// HNSW search breadth; unset = index::DefaultEf(k + offset).
  std::optional<int64_t> ef;
  /// IVF indexes (the base table's IVF_FLAT / IVF_PQ / IVF_SQ): partitions probed (unset =
  /// 20, LanceDB's default), probed again up to max_nprobes (0 = all) when the first probe
  /// finds fewer than k accepted rows; refine_factor: k * refine_factor candidates re-ranked
  /// by exact distance (unset = none: the distances are the quantised ones).
  std::optional<int64_t> nprobes;
  std::optional<int64_t> max_nprobes;
  std::optional<int64_t> refine_factor;
  /// Exact search in every source even where an HNSW index exists.
  bool bypass_vector_index = false;
  /// Tests and benchmarks: the plan every filtered source with a usable HNSW index runs
  /// (filtered_source_search.h; fallbacks still apply). Unset = the planner's choice.
  std::optional<FilteredPlan> force_filtered_plan;
};

/// Returns one batch of at most k rows: projected columns + `_distance` (+ `_rowid`).
/// Per source of snapshot.shard (DESIGN.md §6): without a filter, the source's HNSW index on
/// the column when it has one built with the query's distance type; with a prefilter, the
/// per-source planner of filtered_source_search.h (exact over the passing rows, filtered
/// graph search, or graph search + postfilter, by a cost estimated from the source's BTree
/// counts or a sample), otherwise an exact
/// scan; candidates that are not live (superseded by a newer version of their key, or
/// tombstones) are skipped; the per-source top lists are merged by distance (ties: older
/// source, then lower position first). QueryResult::plan names each source and what it used.
/// Errors (Invalid, naming the field): k < 1, offset < 0, ef < 1, lower_bound > upper_bound or
/// a NaN bound, empty query, a NaN or
/// infinite query element (its index), an all-zero query under cosine, dimension mismatch (both
/// dimensions), unknown vector column, no or several candidate vector columns (listing them), a
/// column that is not fixed_size_list<float32> (NotSupported for other element types), unknown
/// projected column, a filter that does not bind.
Result<QueryResult> VectorSearch(const table::TableSnapshot& snapshot,
                                 const VectorSearchOptions& options);

/// Index of the vector column `name` (or the only fixed_size_list<float32> column when empty)
/// in `schema`. Errors as VectorSearch.
Result<int> ResolveVectorColumn(const arrow::Schema& schema, const std::string& name);

}  // namespace strata::query
