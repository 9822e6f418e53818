// Column projection: which table columns a query returns, in which order, under which names.
// Projection is zero-copy (the output batch shares the input's arrays).
// Thread-safety: values are immutable after ResolveProjection; functions are pure.
#pragma once

#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::query {

/// One requested output column: table column `name`, returned as `alias` (empty = `name`).
struct ColumnRef {
  std::string name;
  std::string alias;
};

/// A resolved projection: source column indices and the output schema (fields renamed to
/// their aliases; types, nullability and metadata kept).
struct Projection {
  std::vector<int> indices;
  arrow::SchemaPtr schema;
};

/// Resolves `columns` against `schema`; an empty list selects every column in schema order.
/// Errors: Invalid naming an unknown column (and listing the table's columns), or a duplicate
/// output name.
Result<Projection> ResolveProjection(const arrow::SchemaPtr& schema,
                                     const std::vector<ColumnRef>& columns);

/// The projected columns of `batch` (zero-copy) under `projection.schema`.
arrow::RecordBatchPtr ApplyProjection(const Projection& projection,
                                      const arrow::RecordBatch& batch);

}  // namespace strata::query
