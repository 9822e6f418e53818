// The bucket hash of the Lance MemWAL specification (lance-format/lance,
// docs/src/format/table/mem_wal.md, "Appendix 3: Bucket Hashing"; DESIGN.md §8): a 32-bit
// Murmur3 (x86_32 mixing constants), seed 0, over a value normalised by type, then
// bucket = (hash & INT32_MAX) % num_buckets; nulls go to bucket 0.
//   bool -> 0 / 1 as int32; int8/16/32, uint8/16/32, date32, time32 -> int32 (two's
//   complement) hashed as one 4-byte block; int64, uint64, timestamp, time64 -> int64 hashed as
//   two 4-byte blocks, low half first (length 8); float32 / float64 -> IEEE 754 bits (both
//   zeros -> 0, every NaN -> the canonical quiet NaN) as int32 / int64; utf8 / large_utf8 ->
//   the bytes: each complete little-endian 4-byte chunk is one block and each remaining byte
//   is a block of its own (sign-extended), length = byte count. Note the tail rule differs
//   from the reference MurmurHash3_x86_32 (which folds the 1-3 tail bytes into one block).
// Our own implementation from that description (no vendored source).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::format {

uint32_t BucketHashInt32(int32_t v);
uint32_t BucketHashInt64(int64_t v);
uint32_t BucketHashFloat32(float v);
uint32_t BucketHashFloat64(double v);
uint32_t BucketHashBool(bool v);
uint32_t BucketHashBytes(std::string_view bytes);

/// (hash & INT32_MAX) % num_buckets. num_buckets must be >= 1.
int32_t BucketOf(uint32_t hash, int32_t num_buckets);

/// Whether the bucket transform takes columns of `type` (bool, integers, floats, date32,
/// time32/64, timestamp, utf8, large_utf8).
bool BucketHashSupports(const arrow::DataType& type);

/// The bucket of row `row` of `array` (bucket 0 for a null) among `num_buckets`.
/// Errors: Invalid for num_buckets < 1, a row out of range, or a type the transform does not
/// take (naming it).
Result<int32_t> BucketOfValue(const arrow::Array& array, int64_t row, int32_t num_buckets);

}  // namespace strata::format
