// Builders for the columns Strata appends to query results (`_distance`, `_rowid`) and the
// output schema that carries them (PROTOCOL.md §5.2: selected columns, then `_distance`
// float32, then `_rowid` uint64). Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "query/projection.h"

namespace strata::query {

/// `projection.schema` plus `_distance` (float32) and/or `_rowid` (uint64), both nullable.
arrow::SchemaPtr OutputSchema(const Projection& projection, bool with_distance, bool with_row_id);

/// A float32 array without nulls holding `values`.
arrow::ArrayDataPtr MakeFloat32Values(const std::vector<float>& values);
/// A uint64 array without nulls holding `values`.
arrow::ArrayDataPtr MakeUInt64Array(const std::vector<uint64_t>& values);
/// A uint64 array start, start + 1, ..., start + n - 1.
arrow::ArrayDataPtr MakeRowIdRange(int64_t start, int64_t n);

}  // namespace strata::query
