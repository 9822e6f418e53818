// Column projection: which table columns a query returns, in which order, under which names.
// Projection is zero-copy (the output batch shares the input's arrays).
// Thread-safety: values are immutable after ResolveProjection; functions are pure.
#pragma once

#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"
#include "query/filter/evaluator.h"

namespace strata::query {

/// One requested output column: `name` is a table column name, or (dynamic projection,
/// PROTOCOL.md §5.2 `{"alias": "sql expr"}`) an SQL expression (query/filter/); returned as
/// `alias` (empty = `name`).
struct ColumnRef {
  std::string name;
  std::string alias;
};

/// A resolved projection: per output column, the source column index (plain column) or -1
/// and a bound expression (computed column); the output schema (fields renamed to their
/// aliases; a plain column keeps type, nullability and metadata; a computed one is nullable
/// with the expression's type).
struct Projection {
  std::vector<int> indices;
  std::vector<filter::BoundExprPtr> exprs;  // parallel to indices; null for plain columns
  arrow::SchemaPtr schema;
};

/// Resolves `columns` against `schema`; an empty list selects every column in schema order.
/// A `name` that is exactly a column name (or a unique case-insensitive match) is a plain
/// column; anything else is parsed and bound as an expression (filter::Bind with
/// require_bool = false, context "columns: 'alias'"). Without an alias, a name that is no
/// column and ends in "AS identifier" (any case) is that expression (or column) under that
/// alias: `["id", "price * 2 AS double_price"]` keeps the order given.
/// Errors: Invalid naming an unknown column (and listing the table's columns), a bad
/// expression (token and position), or a duplicate output name.
Result<Projection> ResolveProjection(const arrow::SchemaPtr& schema,
                                     const std::vector<ColumnRef>& columns);

/// The projected columns of `batch` (zero-copy for plain columns; computed ones evaluated)
/// under `projection.schema`. Errors: Invalid from evaluation.
Result<arrow::RecordBatchPtr> ApplyProjection(const Projection& projection,
                                              const arrow::RecordBatch& batch);

}  // namespace strata::query
