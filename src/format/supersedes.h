// supersedes.bin of an SSTable (DESIGN.md §3, §6): the rows of OLDER generations of the same
// shard that the rows of this SSTable's generation superseded (a newer version of their key,
// or a tombstone), recorded at flush so that opening a shard restores liveness
// (shard/liveness.h) without re-merging the tiers.
//
// Bytes (little-endian):
//   "SUP1" | u32 count | count x { u64 generation | u32 n | n bytes: portable Roaring
//   deletion vector (format/deletion_vector.h) of row positions in that generation } |
//   u64 XXH64 (seed 0) of every byte before it.
// Generations are strictly ascending. An SSTable written before this file existed has none
// (SSTableReader reports that; the shard then probes the older SSTables' keys once at open).
// Thread-safety: value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "format/deletion_vector.h"

namespace strata::format {

struct Supersedes {
  /// (older generation, superseded rows of it), generation ascending.
  std::vector<std::pair<uint64_t, DeletionVector>> generations;

  std::string Serialize() const;
  /// Errors: Corruption naming what is wrong (magic, length, checksum, order, bitmap).
  static Result<Supersedes> Deserialize(std::string_view bytes);
  /// Total rows listed.
  uint64_t rows() const;
};

}  // namespace strata::format
