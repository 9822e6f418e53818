// Which rows of one read source (shard::SourceView) an index says may pass a filter: the
// source's key index for equality / IN on the whole primary key (bloom filter, then the key
// index), `_rowid = / IN` addresses, or a BTree for a top-level conjunct `col <op> literal`,
// `col BETWEEN`, `col IN`, `col IS [NOT] NULL`. The answer is a superset of the passing rows
// (callers still evaluate the whole filter on it) and may include rows that are not live.
// Thread-safety: pure functions over immutable inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arrow/type.h"
#include "query/filter/ast.h"
#include "shard/source_view.h"

namespace strata::query {

/// The top-level AND conjuncts of `e` (e itself when it is not an AND).
void FlattenAnd(const filter::ExprPtr& e, std::vector<const filter::Expr*>* out);

/// Candidate positions of `source` (ascending, below source.num_rows) for `conjuncts` of a
/// filter bound to the user `schema`; nullopt when no index applies or the index would not
/// narrow the rows down. `how` describes the pick for plans ("key lookup", "BTree 'n_idx'
/// (n > 3)").
std::optional<std::vector<int64_t>> IndexCandidates(
    const arrow::Schema& schema, const shard::SourceView& source,
    const std::vector<const filter::Expr*>& conjuncts, std::string* how);

}  // namespace strata::query
