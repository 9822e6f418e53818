// Filtered vector search over one read source: the planner that picks, per source and per
// query, the cheapest of three plans by an estimate made from the source itself.
//
//   exact     distances to the rows that pass only, found through an index (key lookup,
//             `_rowid`, a BTree: nothing else is read) or by one pass of the compiled filter
//             (RowPredicate) or of filter::Evaluate over the source
//   hnsw      a filtered graph search (HnswIndex::FilteredSearch): every reached node guides
//             the traversal, only passing rows enter the result; breadth
//             max(want, ceil(ef * s)) so the region explored is about that of an unfiltered
//             search of breadth ef; the rows are tested one at a time by the compiled filter or
//             against a bitmap when the filter does not compile
//   postfilter an unfiltered graph search of breadth max(ef, want / s) whose candidates are
//             then filtered (filter::Evaluate over the gathered candidate rows), doubling the
//             breadth until `want` pass: for broad filters that do not compile, which would
//             otherwise be evaluated over every row first
//
// Selectivity s is measured per source: a BTree counts the rows of its conjunct without
// materialising them (BTreeIndex::Count*), otherwise the filter is tested on 1,024 evenly
// spaced live rows (512). Costs are in exact-plan rows (scoring one row = 1; testing the
// compiled filter on a row costs kPredicateCost; the graph visits kVisitsPerBreadth nodes per
// unit of breadth, each costing kGraphVisitCost). The exact cost is certain, the graph's an
// estimate that assumes the passing rows are spread like the rows near the query, so a graph
// plan is chosen only when estimated 1.5x cheaper. It runs with a budget of twice the exact
// plan's cost (at least 1,000 distances): a filter anti-correlated with the query's
// neighbourhood, whose passing rows lie far away in the graph, stops there and falls back to
// exact, so the worst case is three times the exact plan, never a walk over the whole graph.
// Thread-safety: pure functions over an immutable snapshot.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "index/column_index.h"
#include "index/vector/exact_search.h"
#include "index/vector/hnsw_index.h"
#include "query/row_predicate.h"
#include "query/source_rows.h"
#include "shard/shard_writer.h"

namespace strata::query {

enum class FilteredPlan { kExact, kHnsw, kPostfilter };
const char* FilteredPlanName(FilteredPlan p);

/// Distance computations per unit of breadth of a graph search (hnswlib, M = 16, layer-0 degree
/// 32): measured by bench/filtered_search_bench.cc as FilteredSearchStats::distances / breadth
/// of unfiltered searches (128-d clustered, 200,000 rows: 14 at breadth 64; Fashion-MNIST 60,000
/// rows per 20,000-row graph: 12).
inline constexpr double kVisitsPerBreadth = 14.0;
/// Cost of one graph visit against one row of an exact pass (random access, heap and
/// visited-list work against a sequential, prefetched read): bench/filtered_search_bench.cc on
/// 200,000 clustered 128-d rows, about 150 ns per distance of an unfiltered graph search
/// against about 80 ns per row scored by the exact plan.
inline constexpr double kGraphVisitCost = 2.0;
/// Cost of testing the compiled filter and liveness on one row, in distance computations
/// (about 3 ns against about 60 ns for a 128-d distance with its cache miss).
inline constexpr double kPredicateCost = 0.05;
/// Cost of filter::Evaluate per row (batch evaluation plus the bitmap), in the same unit.
inline constexpr double kEvaluateCost = 0.1;

struct FilteredSourceQuery {
  const shard::ShardSnapshot* shard = nullptr;
  uint32_t source = 0;
  const SnapshotFilter* filter = nullptr;   // not empty
  const RowPredicate* predicate = nullptr;  // the compiled filter, or nullptr
  /// Without `predicate`: FilterBitsCache::EvaluatedKey of the filter ("" or null: no bits).
  const std::string* evaluated_key = nullptr;
  const index::HnswIndex* hnsw = nullptr;  // usable graph of the source, or nullptr
  const index::ExactSearcher* searcher = nullptr;
  const float* query = nullptr;  // dim floats (the graph normalises it for cosine)
  index::DistanceType distance = index::DistanceType::kL2;  // the searcher's
  int vector_column = 0;
  int64_t dim = 0;
  int64_t want = 10;  // k + offset
  int64_t ef = 64;    // the query's breadth (default DefaultEf(want))
  /// Rows of the source outside the query's distance bounds never enter the result.
  std::function<bool(float)> in_bounds;  // empty = no bounds
  std::optional<FilteredPlan> force;     // tests: run this plan (falls back as usual)
};

struct FilteredSourceResult {
  std::vector<index::Neighbor> found;  // best first, at most want
  std::string plan;                    // for explain_plan: the plan, its estimate, what ran
};

/// Errors: Invalid from filter evaluation; Internal from the graph search.
Result<FilteredSourceResult> SearchFilteredSource(const FilteredSourceQuery& q);

}  // namespace strata::query
