// Routes the rows of a write to the shards of an LSM write spec (issue 16; DESIGN.md §8,
// docs/SHARDING.md): every row of a primary key always goes to the same shard.
//   unsharded, or bucket with 1 bucket: one part holding the batches unchanged (no copy);
//   bucket (n buckets): shard = format::BucketOfValue(row's shard column, n) (the MemWAL
//     bucket hash: Murmur3_32 seed 0, (hash & INT32_MAX) % n, nulls to bucket 0);
//   identity: one part per distinct value of the shard column (its encoded key component,
//     format/key_encoding.h, so equal values of any key type group together; null is a value).
// Each part keeps the rows' order of the write (batch by batch, row by row), so a key written
// twice in one write keeps its last-wins order inside its shard. A batch whose rows all go to
// one shard is passed on as it is; others are split with arrow::compute::TakeBatch.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/array.h"
#include "common/status.h"
#include "table/lsm_write_spec.h"

namespace strata::table {

/// The rows of one write that go to one shard.
struct ShardPart {
  int64_t bucket = 0;        // bucket mode: the bucket in [0, num_buckets); otherwise 0
  std::string identity_key;  // identity mode: the value's encoded key component; else empty
  std::vector<arrow::RecordBatchPtr> batches;
  int64_t rows = 0;
};

/// Splits `batches` (one schema, holding `spec.column` unless unsharded) into the parts of the
/// shards they touch: ascending bucket, or ascending identity key; parts without rows are
/// left out (so no rows -> no part, except unsharded, which always gives one part).
/// Errors: Invalid when the shard column is missing from a batch (naming it and the spec
/// mode) or its type cannot be hashed (bucket) or encoded (identity), naming the type.
Result<std::vector<ShardPart>> RouteRows(const LsmWriteSpec& spec,
                                         const std::vector<arrow::RecordBatchPtr>& batches);

/// The value an identity shard holds, back from its key component (ShardPart::identity_key)
/// of a column of `type` (the identity types: bool, integers, utf8, large_utf8), as JSON text:
/// `null`, `true`, `-7`, `"eu"` (a string JSON-escaped). Errors: Corruption for a component
/// that is not one of `type` (wrong length, tag or terminator); NotSupported for other types.
Result<std::string> IdentityValueJson(const arrow::DataType& type, std::string_view component);

}  // namespace strata::table
