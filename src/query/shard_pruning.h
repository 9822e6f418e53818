// Which shards of a sharded table a filter can match (issue 16; docs/SHARDING.md "Reads and
// pruning"): a top-level conjunct `col = literal` or `col IN (literals)` on the LSM write
// spec's shard column narrows the shards to those of the literals; several such conjuncts
// intersect. Anything else (OR, NOT IN, ranges, functions, a literal no value of the column
// equals exactly, e.g. 3.5 on an int column) leaves every shard: pruning never drops a shard
// that could hold a matching row.
//   bucket: the literal's value is hashed exactly as a row's (format::BucketOfValue over a
//     one-row array of the column's type), so `id = 34` reads the one bucket id 34 lives in;
//   identity: the literal's key component (format/key_encoding.h), as the router groups rows.
// `col = NULL` and `col IN (NULL)` match no row (SQL), so they select no shard.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arrow/type.h"
#include "common/status.h"
#include "query/filter/ast.h"
#include "table/lsm_write_spec.h"
#include "table/table.h"

namespace strata::query {

struct ShardSelection {
  bool all = true;                         // no narrowing conjunct: every shard
  std::vector<int64_t> buckets;            // bucket mode, !all: ascending, unique (may be empty)
  std::vector<std::string> identity_keys;  // identity mode, !all: ascending, unique
  std::string how;  // for explain_plan/, e.g. "id = 34 -> bucket 3 of 8"; empty when all
};

/// The shards of `spec` that rows matching `filter` (parsed, over the user `schema`) can be
/// in. Unsharded specs and a null filter give `all`. `describe` false leaves `how` empty.
/// Errors: Invalid when hashing fails (a shard column type the bucket transform does not
/// take; the spec's validation refuses those first).
Result<ShardSelection> SelectShards(const table::LsmWriteSpec& spec, const arrow::Schema& schema,
                                    const filter::ExprPtr& filter, bool describe = true);

/// `snapshot` narrowed to the shards `filter` (SQL text over the user schema; nullopt: none)
/// can match, for a table of several bucket shards (TableSnapshot::sharding): the sources of
/// other shards are left out (the shared base, shard -1, always stays) and num_rows is the
/// kept sources' live rows. One shard: TableSnapshot::shard_views' view as is (no copy). `plan`
/// (may be null) receives one explain line, e.g. "shards: 1 of 16 read: (id = 34) -> bucket 3 of
/// 16" or "shards: 16 of 16 read (no equality or IN on id)". A one-shard snapshot, or a filter that
/// does not parse (the query reports that itself), is returned unchanged.
table::TableSnapshot PruneShards(const table::TableSnapshot& snapshot,
                                 const std::optional<std::string>& filter,
                                 std::string* plan = nullptr);

}  // namespace strata::query
