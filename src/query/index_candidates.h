// Which rows of one read source (shard::SourceView) an index says may pass a filter: the
// source's key index for equality / IN on the whole primary key (bloom filter, then the key
// index), `_rowid = / IN` addresses, or a BTree for a top-level conjunct `col <op> literal`,
// `col BETWEEN`, `col IN`, `col IS [NOT] NULL`. The answer is a superset of the passing rows
// (callers still evaluate the whole filter on it) and may include rows that are not live.
// Thread-safety: pure functions over immutable inputs.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "arrow/type.h"
#include "query/filter/ast.h"
#include "shard/source_view.h"

namespace strata::query {

/// Schema index of a one-part column reference, as the binder resolves it (exact name, then a
/// unique case-insensitive match), or -1 (also for `_rowid` / `_rowoffset`).
int ResolveFilterColumn(const arrow::Schema& schema, const filter::Expr& e);

/// `col <op> literal` (or `literal <op> col`, flipped so the column is on the left).
struct FilterColumnCompare {
  const filter::Expr* column = nullptr;
  filter::CompareOp op = filter::CompareOp::kEq;
  const filter::Literal* literal = nullptr;
};
std::optional<FilterColumnCompare> AsFilterColumnCompare(const filter::Expr& e);

/// `col IN (literals)` (not negated, every element a literal): sets the column and literals.
bool AsFilterColumnIn(const filter::Expr& e, const filter::Expr** column,
                      std::vector<const filter::Literal*>* literals);

/// The key component (format/key_encoding.h) of the value of `type` equal to `lit`, or nullopt
/// when no value of `type` equals it exactly (e.g. 3.5 for an int column, 300 for int8) or the
/// type is not handled (then callers must not narrow anything by it).
std::optional<std::string> EncodeFilterLiteral(const arrow::DataType& type,
                                               const filter::Literal& lit);

/// The top-level AND conjuncts of `e` (e itself when it is not an AND).
void FlattenAnd(const filter::ExprPtr& e, std::vector<const filter::Expr*>* out);

/// Candidate positions of `source` (ascending, below source.num_rows) for `conjuncts` of a
/// filter bound to the user `schema`; nullopt when no index applies or the index would not
/// narrow the rows down. `how` describes the pick for plans ("key lookup", "BTree 'n_idx'
/// (n > 3)").
/// With `max_btree_rows` set, a BTree conjunct is counted first (BTreeIndex::Count*, nothing
/// materialised); when it matches more rows than that, the answer is nullopt, `how` says so and
/// `*btree_count` (when given) receives the count (some value > max_btree_rows). Key and
/// `_rowid` lookups are never refused.
std::optional<std::vector<int64_t>> IndexCandidates(
    const arrow::Schema& schema, const shard::SourceView& source,
    const std::vector<const filter::Expr*>& conjuncts, std::string* how,
    int64_t max_btree_rows = std::numeric_limits<int64_t>::max(), int64_t* btree_count = nullptr);

}  // namespace strata::query
