// Take (gather by row index), for arrays and record batches. Follows the semantics of Arrow's
// "take" compute function without null indices: output row k is input row indices[k].
// Thread-safety: pure functions over immutable arrays; safe to call concurrently.
#pragma once

#include <cstdint>

#include "arrow/array.h"
#include "common/status.h"

namespace strata::arrow::compute {

/// A new array whose row k is row `indices[k]` of `data` (logical indices: data.offset is added
/// internally). `data` may be any type of type.h, sliced, with nulls; it must be valid
/// (ValidateArray). Indices may repeat and come in any order; n may be 0. The result owns fresh
/// 64-byte-aligned buffers with offsets starting at 0.
/// Errors: Invalid naming the position and value of the first index outside [0, data.length);
/// Invalid when a utf8/binary/list result would need offsets past int32.
Result<ArrayDataPtr> Take(const ArrayData& data, const int64_t* indices, int64_t n);

/// Take applied to every column of `batch`; the result keeps the batch's schema.
/// Errors as Take, prefixed with the column name.
Result<RecordBatchPtr> TakeBatch(const RecordBatch& batch, const int64_t* indices, int64_t n);

}  // namespace strata::arrow::compute
