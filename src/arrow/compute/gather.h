// The gather kernel behind Take, Filter and Concatenate: copy runs of rows ("spans") from one or
// more source arrays of the same type into one new array with fresh 64-byte-aligned buffers.
// Layouts follow the Arrow columnar format ("Physical memory layout"): offsets of the result
// start at 0, the validity bitmap is present only when the result has nulls, nested children are
// gathered recursively (list children by their offset range, fixed_size_list children by
// row * list_size, struct children row by row), and source offsets/slices are honoured at bit
// granularity.
// Thread-safety: pure functions over immutable arrays; safe to call concurrently.
#pragma once

#include <cstdint>
#include <vector>

#include "arrow/array.h"
#include "common/status.h"

namespace strata::arrow::compute {

/// Rows [start, start + length) of `source`, in logical indices (source->offset not included).
/// The source must outlive the gather call.
struct Span {
  const ArrayData* source;
  int64_t start;
  int64_t length;
};

/// Appends `span` to `spans`, merging it into the last span when it continues it in the same
/// source; empty spans are dropped.
void AddSpan(std::vector<Span>* spans, Span span);

/// A new array of `type` holding the rows of `spans` in order. Every source must be a valid array
/// (ValidateArray) whose type equals `type` and every span must be inside its source: the caller
/// checks. Errors: Invalid when a utf8/binary/list result would need offsets past int32.
Result<ArrayDataPtr> GatherSpans(const DataTypePtr& type, const std::vector<Span>& spans);

/// Copies `n` bits from `src` starting at bit `src_offset` to `dst` starting at bit
/// `dst_offset` (LSB bit order). Bits of `dst` outside the range are kept.
void CopyBitmap(const uint8_t* src, int64_t src_offset, uint8_t* dst, int64_t dst_offset,
                int64_t n);

/// Sets bits [offset, offset + n) of `dst`.
void SetBitsTo1(uint8_t* dst, int64_t offset, int64_t n);

}  // namespace strata::arrow::compute
