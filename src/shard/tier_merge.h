// Reads across the tiers of one shard (DESIGN.md §1 freshness order, §6): the active MemTable
// is newest, then frozen MemTables (newer generation first), then SSTables (higher generation
// first); inside one MemTable or SSTable a higher row position is newer. MergeTiers keeps, per
// key, only the newest row, and drops it when it is a tombstone.
// Tables without a declared primary key use the hidden `_rowid` key: every row has a distinct
// one, so only tombstones (always newer than the row they delete) remove rows, and the merge
// is a set lookup per row. Primary-key tables dedup with a hash set of encoded keys (or of the
// raw 64-bit values for a single int64/uint64 key), newest source first.
// Cost: O(rows) time and O(distinct keys) memory per merge; ShardWriter caches the result
// until the next visible change.
// Thread-safety: pure function over immutable inputs.
#pragma once

#include <memory>
#include <vector>

#include "memtable/hidden_columns.h"
#include "memtable/memtable.h"
#include "shard/shard_writer.h"
#include "sstable/sstable_reader.h"

namespace strata::shard {

/// The sources of one read, oldest first within each list.
struct TierSources {
  std::vector<std::shared_ptr<const sstable::SSTableReader>> sstables;  // ascending generation
  std::vector<memtable::MemTableSnapshot> memtables;  // ascending generation, active last
  /// Optional, parallel to `memtables`: the MemTables themselves, for point lookups by key
  /// (SourceView::find_key reads their primary-key index at the snapshot's watermark). Empty
  /// = no key lookups on MemTable sources.
  std::vector<std::shared_ptr<const memtable::MemTable>> memtable_handles;
  /// WAL position already covered by SSTables (manifest replay_after_wal_entry_position).
  uint64_t base_wal_position = 0;
};

/// The live rows of `sources` under `layout` (see ShardSnapshot for the output shape).
/// Errors: from the filter kernel (Invalid for oversized string columns).
Result<ShardSnapshot> MergeTiers(const memtable::StorageLayout& layout, const TierSources& sources);

}  // namespace strata::shard
