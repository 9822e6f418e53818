// Full-text search over a table snapshot (DESIGN.md §6): BM25 over the FTS-indexed text
// columns. Per source of snapshot.shard: the source's complete inverted index for the column,
// or, when the source has none yet (a MemTable still backfilling a new index, an SSTable whose
// index is being built), a temporary index built over that source's rows with the index
// definition's parameters, so rows written before create_index are found (never a silent empty
// answer). Scores use corpus statistics over the live rows of every source (index::Bm25Stats
// merged), so a document scores the same whichever tier holds it. Only live rows (newest
// version of their key, not tombstones) that pass the filter are returned; several columns are
// searched independently and a row keeps its best score. Output: projected columns + `_score`
// (float32, descending; ties: older source, then lower position first) (+ `_rowid`).
// Thread-safety: pure function over an immutable snapshot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "index/fts/inverted_index.h"
#include "query/projection.h"
#include "query/query_result.h"
#include "table/table.h"

namespace strata::query {

struct FtsSearchOptions {
  index::FtsQuery query;  // match (OR / AND) or phrase, raw text
  /// Columns to search; empty = every column with an FTS index definition.
  std::vector<std::string> columns;
  int64_t k = 10;  // >= 1
  int64_t offset = 0;
  std::vector<ColumnRef> columns_out;  // projection; empty = all
  std::optional<std::string> filter;   // SQL filter (query/filter/); unset = none
  bool prefilter = true;               // false: filter the top-k after ranking
  bool with_row_id = false;            // `_rowid` as in VectorSearch
};

/// Errors (Invalid naming the field): k < 1, offset < 0, empty query text, a searched column
/// without an FTS index definition ("column 'x' has no FTS index; create one with
/// create_index index_type FTS"), no FTS index at all, a phrase query on an index built
/// without with_position, unknown projected column, a filter that does not bind.
Result<QueryResult> FtsSearch(const table::TableSnapshot& snapshot,
                              const FtsSearchOptions& options);

}  // namespace strata::query
