// The LSM write spec of a table (PROTOCOL.md §5.6, issue 16; docs/SHARDING.md): how rows map to
// shards (unsharded | bucket(column, n) | identity(column), DESIGN.md §8), which index
// definitions the MemTables maintain, and per-table writer options (table/writer_config.h).
// The JSON shape is the one @lancedb/lancedb 0.31.0 sends to set_lsm_write_spec/:
//   {"sharding": {"mode": "bucket", "column": "id", "num_buckets": 4},
//    "maintained_indexes": ["vector_idx"], "writer_config_defaults": {"durable_write": "true"}}
// Parse checks the shape, Validate checks it against a table (schema, primary key, index
// definitions).
// Thread-safety: plain values and stateless functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/type.h"
#include "common/status.h"
#include "format/proto/table_manifest.pb.h"
#include "index/index_spec.h"

namespace strata::table {

enum class ShardingMode { kUnsharded, kBucket, kIdentity };

/// "unsharded" | "bucket" | "identity".
const char* ShardingModeName(ShardingMode mode);

/// num_buckets limits of a bucket spec (the MemWAL specification's).
inline constexpr int64_t kMinBuckets = 1;
inline constexpr int64_t kMaxBuckets = 1024;

struct LsmWriteSpec {
  ShardingMode mode = ShardingMode::kUnsharded;
  std::string column;       // bucket / identity: the shard column; empty for unsharded
  int64_t num_buckets = 0;  // bucket only: [kMinBuckets, kMaxBuckets]
  /// Index definition names the MemTables keep, as given (duplicates removed, order kept).
  std::vector<std::string> maintained_indexes;
  /// Writer option name -> value as sent (strings); validated by ValidateWriterConfig.
  std::map<std::string, std::string> writer_config_defaults;

  /// Shards the spec needs: 1 (unsharded, bucket with 1 bucket), num_buckets, or 0 for
  /// identity (one per distinct value: not bounded in advance).
  int64_t NumShards() const;
  bool operator==(const LsmWriteSpec& other) const = default;
};

/// Parses the set_lsm_write_spec/ body. Shape rules: a JSON object; "sharding" an object with
/// "mode" one of unsharded / bucket / identity; bucket needs "column" (string) and
/// "num_buckets" (integer in [1, 1024]); identity needs "column"; unsharded takes neither;
/// "maintained_indexes" (optional) an array of non-empty strings; "writer_config_defaults"
/// (optional) an object of string values (numbers and booleans are accepted and kept as
/// their JSON text) whose keys and values ValidateWriterConfig accepts. Unknown top-level or
/// sharding fields are refused. Errors: Invalid naming the field (e.g. "sharding.num_buckets
/// must be in [1, 1024], got 0").
Result<LsmWriteSpec> ParseLsmWriteSpec(std::string_view json);

/// The wire JSON of `spec` (the shape ParseLsmWriteSpec reads); round-trips through it.
std::string LsmWriteSpecToJson(const LsmWriteSpec& spec);

/// What a table offers a spec to be checked against.
struct LsmSpecTarget {
  const arrow::Schema* schema = nullptr;  // user schema
  std::vector<std::string> primary_key;   // declared key (empty: none)
  std::vector<index::IndexSpec> indexes;  // index definitions
};

/// Checks `spec` against a table: it needs a declared primary key; bucket's column must be the
/// single-column primary key of a type the bucket hash takes (format/bucket_hash.h); identity's
/// a scalar column (bool, integer, utf8, large_utf8: the MemWAL spec's identity types) that is
/// one of the primary key's columns. (The SDK asks for a column that is a function of the key;
/// a key column is one by construction, and it lets a delete by key find its shard. A column
/// outside the key could give one key two shards, and a read two rows of that key.)
/// maintained_indexes must name index definitions of the table; writer options as
/// ValidateWriterConfig. Errors: Invalid naming the field and the rule.
Status ValidateLsmWriteSpec(const LsmWriteSpec& spec, const LsmSpecTarget& target);

/// Whether table manifest `m` holds an identity spec (one shard per value, added as values
/// arrive: LocalTable keeps its base shared and its shard_values).
bool HasIdentitySpec(const format::TableManifest& m);

/// Manifest form (format/proto/table_manifest.proto LsmWriteSpec) and back.
format::LsmWriteSpec LsmWriteSpecToProto(const LsmWriteSpec& spec);
/// Errors: Corruption naming the bad field (an unknown mode, a bucket count out of range).
Result<LsmWriteSpec> LsmWriteSpecFromProto(const format::LsmWriteSpec& proto);

}  // namespace strata::table
