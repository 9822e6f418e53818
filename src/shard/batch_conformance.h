// Checking incoming record batches against a table schema before anything is written
// (DESIGN.md §4 rule 1): column names, types (with parameters: vector dimension, byte width,
// time unit, timezone, decimal precision/scale, nested children), and nullability.
// Columns are matched by name, so any column order is accepted; missing nullable columns are
// filled with nulls; unknown, duplicate, or missing non-nullable columns are rejected.
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::shard {

/// Checks a table schema: at least one field, non-empty unique field names (byte-exact).
/// Errors: Invalid naming the field.
Status ValidateTableSchema(const arrow::Schema& schema);

/// `batch` as a batch under `schema` (columns reordered to the schema order, arrays relabelled
/// with the schema's types, missing nullable columns all-null). Zero-copy except for filled
/// columns. Errors: Invalid naming the column and both values, e.g.
/// "column 'vector': vector dimension 3 does not match the table's 4", "column 'id' is not
/// nullable but has 2 nulls", "column 'x' is not in the table schema"; Invalid from
/// RecordBatch::Validate for malformed arrays.
Result<arrow::RecordBatchPtr> ConformBatch(const arrow::SchemaPtr& schema,
                                           const arrow::RecordBatch& batch);

/// ConformBatch of each batch; fails on the first bad one (naming its index) without side
/// effects.
Result<std::vector<arrow::RecordBatchPtr>> ConformBatches(
    const arrow::SchemaPtr& schema, const std::vector<arrow::RecordBatchPtr>& batches);

}  // namespace strata::shard
