// Primary-key index of one SSTable (pk_index.bin, DESIGN.md §3): the distinct encoded keys
// (format/key_encoding.h) of its rows, sorted by memcmp order, each with the position of the
// newest row holding that key (a higher row position is newer). Lookup is a binary search.
//
// Serialized form (little-endian): "STPK" | u32 format version (1) | u64 n | (n+1) x u64 key
// offsets into the key blob (first 0, ascending) | n x i64 row positions | key blob |
// u64 XXH64 (seed 0) of every preceding byte.
// Thread-safety: immutable after Build/Deserialize; concurrent const use is safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace strata::sstable {

class PkIndex {
 public:
  PkIndex() = default;

  /// From the key of every row, in row-position order (keys[i] is the key of row i): keeps,
  /// per distinct key, the highest position. `superseded` (optional) receives the positions of
  /// the rows that are not the newest of their key, ascending.
  static PkIndex Build(const std::vector<std::string>& row_keys,
                       std::vector<int64_t>* superseded = nullptr);

  /// Position of the newest row with `key`, or nullopt.
  std::optional<int64_t> Find(std::string_view key) const;

  /// Number of distinct keys.
  int64_t size() const { return static_cast<int64_t>(positions_.size()); }
  /// Key i (sorted order) and its position.
  std::string_view key(int64_t i) const;
  int64_t position(int64_t i) const { return positions_[static_cast<size_t>(i)]; }

  std::string Serialize() const;
  /// Errors: Corruption naming what is wrong (magic, version, sizes, offsets, order, checksum).
  static Result<PkIndex> Deserialize(std::string_view bytes);

 private:
  std::string blob_;               // concatenated keys, sorted order
  std::vector<uint64_t> offsets_;  // size n+1
  std::vector<int64_t> positions_;
};

}  // namespace strata::sstable
