// Concatenation of arrays and record batches of one type / schema into one array / batch with
// fresh, contiguous 64-byte-aligned buffers (Arrow's "concatenate" semantics).
// Thread-safety: pure functions over immutable arrays; safe to call concurrently.
#pragma once

#include <vector>

#include "arrow/array.h"
#include "common/status.h"

namespace strata::arrow::compute {

/// The rows of `arrays[0]`, then `arrays[1]`, ... Inputs may be slices (offset != 0), have
/// nulls at any bit offset, and be nested; each must be valid (ValidateArray).
/// Errors: Invalid when `arrays` is empty or holds a null pointer, when array i's type differs
/// from array 0's (both types named), or when a utf8/binary/list result would need offsets past
/// int32.
Result<ArrayDataPtr> Concatenate(const std::vector<ArrayDataPtr>& arrays);

/// The rows of every batch in order, under batches[0]'s schema.
/// Errors: Invalid when `batches` is empty, when a batch's schema differs from the first (field
/// metadata included, schema metadata ignored), or as Concatenate (prefixed with the column).
Result<RecordBatchPtr> ConcatenateBatches(const std::vector<RecordBatchPtr>& batches);

}  // namespace strata::arrow::compute
