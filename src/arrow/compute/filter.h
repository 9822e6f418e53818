// Filter by a selection bitmap, for arrays and record batches. Follows the semantics of Arrow's
// "filter" compute function with a non-null boolean mask: keep row i when bit i is set.
// Thread-safety: pure functions over immutable arrays; safe to call concurrently.
#pragma once

#include <cstdint>

#include "arrow/array.h"
#include "common/status.h"

namespace strata::arrow::compute {

/// The rows of `data` whose selection bit is set, in order. `selection` holds data.length bits
/// (LSB order, as an Arrow boolean values buffer) starting at bit `selection_offset`; it is
/// never null. `data` may be any type of type.h, sliced, with nulls; it must be valid
/// (ValidateArray). The result owns fresh 64-byte-aligned buffers.
/// Errors: Invalid when `selection` is null while data.length > 0, or when a utf8/binary/list
/// result would need offsets past int32.
Result<ArrayDataPtr> Filter(const ArrayData& data, const uint8_t* selection,
                            int64_t selection_offset);

/// Filter applied to every column of `batch` (the selection holds num_rows bits); the result
/// keeps the batch's schema. Errors as Filter, prefixed with the column name.
Result<RecordBatchPtr> FilterBatch(const RecordBatch& batch, const uint8_t* selection,
                                   int64_t selection_offset);

/// Number of rows Filter keeps: set bits in [selection_offset, selection_offset + length).
int64_t CountSelected(const uint8_t* selection, int64_t selection_offset, int64_t length);

}  // namespace strata::arrow::compute
