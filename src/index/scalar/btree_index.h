// Scalar index (DESIGN.md §5 "BTree"): ordered map from one column's value to the row positions
// holding it, answering =, !=, <, <=, >, >=, BETWEEN, IN and IS NULL with sorted positions.
// Keys are the order-preserving encoding of format/key_encoding.h (one component: the null tag
// or value tag then the value), so byte order is the SQL order of the column type and nulls
// sort first; callers encode literals with the column's type (format::Append*Component).
// SQL semantics: every comparison except IS NULL excludes null rows.
//
// In memory it is an ordered map (one writer appends, many readers query). Serialize writes
// the sorted (key, position) pairs in pages ("sorted pages": each page holds up to 4,096
// entries; a page directory of first keys allows binary search); Deserialize loads them into
// the same read structure.
//
// Float columns follow the key encoding (PostgreSQL semantics): -0.0 equals +0.0, NaN equals
// NaN and sorts above +inf.
//
// Layering: DESIGN.md §2 lets index/ use arrow/ only; the key encoding of format/key_encoding.h
// is a pragmatic exception (one order-preserving encoding shared with primary keys, literals and
// SSTables), so this file depends on format/key_encoding.h as well.
//
// Serialized form (all integers little-endian; version 1):
//   "STRBTREE" magic (8) | u32 version | u32 page capacity (entries, 4,096) |
//   u32 schema length | Arrow IPC Schema flatbuffer with one field (column name and type) |
//   u64 entries | u64 distinct keys | u32 pages |
//   page directory, per page: u64 offset (from the first page) | u64 bytes | u32 entries |
//     u32 first key length | first key |
//   pages, per page: u32 groups, per group: u32 key length | key | u32 count | count x u64
//     position (a key's positions may continue on the next page) |
//   u64 XXH64 (seed 0) of every byte before it.
// (key, position) pairs are strictly increasing over the whole file.
//
// Thread-safety: `mu_` (shared_mutex) guards the map: AddColumn takes it exclusively, queries
// share it. Every method may be called from many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::index {

/// One end of a key range: an encoded key and whether it is included.
struct KeyBound {
  std::string key;
  bool inclusive = true;
};

class BTreeIndex {
 public:
  /// Maximum (key, position) entries per serialized page.
  static constexpr uint32_t kPageEntries = 4096;

  /// An empty index for a column of `type`. Errors: NotSupported for types that cannot be keys
  /// (format::ValidateKeyType: nested types, ...), naming `column_name`.
  static Result<std::unique_ptr<BTreeIndex>> Make(arrow::DataTypePtr type,
                                                  const std::string& column_name);
  ~BTreeIndex();

  const arrow::DataTypePtr& type() const;
  /// The column name given to Make (or read by Deserialize).
  const std::string& column_name() const;

  /// Indexes rows [0, column.length) under positions first_position + i (nulls included, for
  /// IS NULL). Errors: Invalid when the column's type differs from type().
  Status AddColumn(const arrow::Array& column, int64_t first_position);

  /// Positions whose value equals encoded `key` (a null key matches nothing: use IsNull).
  std::vector<int64_t> Equal(std::string_view key) const;
  /// Positions with a non-null value different from `key`.
  std::vector<int64_t> NotEqual(std::string_view key) const;
  /// Positions with a non-null value in the range (nullopt = unbounded on that side);
  /// <, <=, >, >= and BETWEEN (both inclusive) map onto it.
  std::vector<int64_t> Range(const std::optional<KeyBound>& lower,
                             const std::optional<KeyBound>& upper) const;
  /// Positions whose value equals any of `keys` (duplicates and null keys ignored).
  std::vector<int64_t> In(const std::vector<std::string>& keys) const;
  /// Positions whose value is null.
  std::vector<int64_t> IsNull() const;
  /// All answers above are sorted ascending, without duplicates.

  /// How many positions Range / NotEqual would return, counted key by key until the count
  /// reaches `limit` (then some value >= limit): O(keys counted), nothing materialised. A
  /// query planner's selectivity measure.
  int64_t CountRange(const std::optional<KeyBound>& lower, const std::optional<KeyBound>& upper,
                     int64_t limit) const;
  int64_t CountNotEqual(std::string_view key, int64_t limit) const;
  /// How many positions Equal / In / IsNull would return: O(keys).
  int64_t CountIn(const std::vector<std::string>& keys) const;
  int64_t CountIsNull() const;

  /// Rows indexed (null rows included; re-adding the same value at the same position counts once).
  int64_t size() const;
  /// Approximate bytes held (keys, positions, map nodes).
  int64_t memory_bytes() const;

  /// The index as bytes (header with the type, magic, sorted pages, xxhash64 checksum).
  Result<std::string> Serialize() const;
  /// Inverse of Serialize. Errors: Corruption naming what failed (size, magic, checksum, version,
  /// schema, bounds, key form for the type, order, counts); nothing is ever read out of bounds.
  static Result<std::unique_ptr<BTreeIndex>> Deserialize(std::string_view bytes);

 private:
  struct Impl;
  explicit BTreeIndex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::index
