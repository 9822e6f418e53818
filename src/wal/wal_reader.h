// WAL replay of one shard (DESIGN.md §4 rule 9, issue 3 reader rules): entries are read from a
// start position upward until the first missing position. A torn or corrupt LAST entry ends
// replay at the entry before it (logged with spdlog, reported in `torn_position`); a corrupt
// entry with any later entry present refuses to open (Corruption): never skip silently.
// Thread-safety: stateless; safe to call concurrently (reads only).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/status.h"
#include "io/object_store.h"
#include "wal/wal_entry.h"

namespace strata::wal {

struct WalReplaySummary {
  /// Position of the last entry handed to the visitor, 0 when none.
  uint64_t last_position = 0;
  /// Position of a torn/corrupt final entry that ended replay, if any.
  std::optional<uint64_t> torn_position;
  /// Highest entry position present in the store (>= start), 0 when none. Greater than
  /// last_position without a torn entry means a gap: entries exist past a missing position.
  uint64_t max_position_present = 0;
  uint64_t entries = 0;
  int64_t rows = 0;
};

class WalReader {
 public:
  /// Called for each good entry, in position order; a non-OK Status stops replay and is
  /// returned.
  using Visitor = std::function<Status(WalEntry&& entry)>;

  /// Replays the WAL of `shard_prefix` ("{table}/_mem_wal/{shard_id}") from `start_position`
  /// (>= 1). Errors: Corruption (corrupt entry followed by others); IOError; the visitor's.
  static Result<WalReplaySummary> Replay(io::ObjectStore& store, const std::string& shard_prefix,
                                         uint64_t start_position, const Visitor& visit);
};

}  // namespace strata::wal
