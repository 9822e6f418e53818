// Which base rows are dead for good (DESIGN.md §7): a row whose liveness mark is kDead, or
// names a generation already compacted into the base. A base shared by several shards
// (docs/SHARDING.md "One base for all shards") judges each mark by the compacted generation
// of the shard that made it: the mark's lane (shard/liveness.h "Lanes") is the shard's index
// in the table, and generations of different shards are not comparable.
// Used by compaction (deletion vectors, the copied SSTable rows) and the base rewrite (the
// rows it copies). Header only; no state. Thread-safety: as the Liveness it reads.
#pragma once

#include <cstdint>
#include <vector>

#include "shard/liveness.h"

namespace strata::base {

/// The compacted generation of every lane, by lane (index = the shard's lane).
class LaneGenerations {
 public:
  explicit LaneGenerations(std::vector<uint64_t> by_lane) : by_lane_(std::move(by_lane)) {}

  /// Whether a mark `m` of `lane` is dead for good: kDead, or an address of a generation at or
  /// below the lane's compacted generation. A lane without an entry has compacted nothing.
  bool DeadUpTo(uint64_t m, int lane) const {
    if (m == shard::Liveness::kDead) return true;
    if (m == shard::Liveness::kNone || lane < 0 || lane >= static_cast<int>(by_lane_.size())) {
      return false;
    }
    return (m >> 32) <= by_lane_[static_cast<size_t>(lane)];
  }
  /// The same for row `position` of `live` (its mark and the mark's lane).
  bool Dead(const shard::Liveness& live, int64_t position) const {
    const uint64_t m = live.Mark(position);
    if (m == shard::Liveness::kNone) return false;
    return DeadUpTo(m, m == shard::Liveness::kDead ? 0 : live.Lane(position));
  }

 private:
  std::vector<uint64_t> by_lane_;
};

}  // namespace strata::base
