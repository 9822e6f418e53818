// WAL replay of one shard (DESIGN.md §4 rule 9, issue 3 reader rules): entries are read from a
// start position upward until the first missing position.
//
// Damage rules (never skip a good entry, never reuse a position):
// - A run of unreadable (torn/corrupt) entries at the END of the log ends replay at the entry
//   before the run (logged with spdlog, reported in `torn_position`..`torn_last_position`).
//   The recovering writer then writes its fence sentinel at torn_last_position + 1 with
//   fence_skip_from = torn_position (WalWriter::WriteFenceSentinel), leaving the torn files in
//   place.
// - A run of unreadable entries [a, b] directly followed by a readable fence sentinel at b + 1
//   whose fence_skip_from == a is skipped (logged, reported in `skipped_positions`); the
//   sentinel is visited and replay continues.
// - Any other unreadable entry followed by a present entry refuses to open (Corruption).
// - A missing position ends replay; entries present past it are reported through
//   max_position_present (a gap, which the caller treats as Corruption).
// Fence sentinels are handed to the visitor like data entries (fence_sentinel = true, no
// batches), so the caller sees every entry's writer_epoch and generation in order.
// Thread-safety: stateless; safe to call concurrently (reads only).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "io/object_store.h"
#include "wal/wal_entry.h"

namespace strata::wal {

struct WalReplaySummary {
  /// Position of the last entry handed to the visitor, 0 when none.
  uint64_t last_position = 0;
  /// First position of an unreadable run at the end of the log that ended replay, if any.
  std::optional<uint64_t> torn_position;
  /// Last position of that run (== *torn_position for a single torn entry), 0 when none.
  uint64_t torn_last_position = 0;
  /// Unreadable positions skipped because a later fence sentinel vouched for them.
  std::vector<uint64_t> skipped_positions;
  /// Highest entry position present in the store (>= start), 0 when none. Greater than
  /// last_position without a torn run means a gap: entries exist past a missing position.
  /// The next writer position is max_position_present + 1 (positions are never reused).
  uint64_t max_position_present = 0;
  /// Entries handed to the visitor (fence sentinels included) and their rows.
  uint64_t entries = 0;
  uint64_t fence_sentinels = 0;
  int64_t rows = 0;
  /// writer_epoch / generation of the last visited entry (0 when none).
  uint64_t last_writer_epoch = 0;
  uint64_t last_generation = 0;
};

class WalReader {
 public:
  /// Called for each good entry, in position order; a non-OK Status stops replay and is
  /// returned.
  using Visitor = std::function<Status(WalEntry&& entry)>;

  /// Replays the WAL of `shard_prefix` ("{table}/_mem_wal/{shard_id}") from `start_position`
  /// (>= 1). Errors: Corruption (unreadable entry followed by entries without a vouching
  /// fence sentinel); IOError; the visitor's.
  static Result<WalReplaySummary> Replay(io::ObjectStore& store, const std::string& shard_prefix,
                                         uint64_t start_position, const Visitor& visit);
};

}  // namespace strata::wal
