// Garbage collection of one table's files (DESIGN.md §3, §7; notes/compaction.md §5
// "Garbage-collection safety"). CollectGarbage removes, under `{table_prefix}/`:
//
//  1. Table manifests `_versions/{version}.manifest`. Retained: `current` and every version
//     above it (a commit that raced the caller); the newest `retain_versions` versions (current
//     counts as one of them); every version whose created_at_micros is within `retain_age` of
//     `now_micros`; for each tag of `current` naming table version v, the newest manifest whose
//     base_version <= v (Lance cleanup_old_versions keeps tagged versions). The union of these
//     is kept ("whichever keeps more"); every other manifest is removed.
//  2. Base files under `data/`, `_deletions/`, `_indices/`. Referenced = union over every
//     retained manifest of the files under `data/{fragment.path}/`, `{deletions_path}` and index
//     checkpoint `{path}`. An unreferenced file is removed only when it is older than
//     `orphan_min_age` (a compaction in flight writes its files before the manifest that
//     references them; Lance keeps unverified files for 7 days for the same reason).
//     Index checkpoints are derived data (a base index, rebuilt from the fragments when
//     missing), each a full copy of an index: only `current` and newer manifests protect
//     them, and one that only older retained manifests name (so it was committed, not in
//     flight) is removed whatever its age.
//     Fragments and deletion vectors are likewise protected only by `current`, newer
//     manifests, and older manifests of ANOTHER table version (base_version) or other shards
//     (e.g. before an overwrite): an older manifest of current's table version and shards is a
//     predecessor by compaction, base rewrite, tag or index change, holds the same rows, and
//     cannot be read back anyway (rule 4 removes its compacted SSTables). A file that only
//     such predecessors name is removed whatever its age (a base rewrite's old fragments go
//     at the next GC, not after the retention).
//  3. WAL entries `_mem_wal/{shard}/wal/{bit_reversed_position}.arrow` of each shard of
//     `current` that has a GcShard: positions <= manifest.replay_after_wal_entry_position()
//     (their rows are in published SSTables), except fence sentinels (WAL entry metadata
//     fence_sentinel = "true"), which are kept forever: a stale writer that resumes after GC must
//     find its next WAL slot taken (SlateDB issue 352 and PR 1672). Nothing above replay_after
//     is removed, so skipped_wal_positions above it stay too. Detection reads little: an entry of
//     at most kSentinelProbeMaxBytes is read and decoded (wal/wal_entry.h); a larger one is
//     checked by its first 8 bytes (IPC framing): it is read and decoded only when it is a
//     schema message followed by end-of-stream (no rows: a sentinel of a very wide schema).
//     An entry that cannot be decoded is kept unless replay already skips it (listed in
//     skipped_wal_positions): GC never removes what it cannot prove is not a fence.
//  4. SSTable directories `_mem_wal/{shard}/{random8}_gen_{g}/` of those shards. Referenced =
//     manifest.sstables() paths, never removed. An unreferenced directory with
//     g <= current.base().compacted_generation()[shard] is removed (compacted: readers never
//     include it); with a higher g it is removed only when every file in it is older than
//     `orphan_min_age` (else it may be a flush in progress).
//  5. Orphan shard folders `_mem_wal/{id}/` whose id is in the shard_ids of no retained
//     manifest (a killed overwrite's fresh shard; normally id not in current.shard_ids()): every
//     file, manifests included, when EVERY file in the folder is older than `orphan_min_age`
//     (an overwrite still writing its shard keeps producing young files, so none is removed).
//  Never removed: shard manifests of shards named by a retained manifest (`_mem_wal/{shard}/
//  manifest/...`), files of a shard of `current` without a GcShard, anything GC does not
//  recognise (other names under `_mem_wal/{shard}/`, other folders of the table).
//
// Ages: a file's age is now_micros - ObjectMeta.mtime_micros; an unknown mtime (0) counts as
// just written, so no age rule removes it. Manifest ages use created_at_micros.
//
// Crash safety (rule 6): removal runs in this order: table manifests (oldest first); then base
// files not referenced by any manifest still present (the versions directory is listed again
// before this phase, so a manifest committed meanwhile protects its files); then per shard the
// WAL entries and SSTable directories; then orphan shard folders (shard manifests first). A
// crash or a failed remove at any point leaves every file of every remaining manifest in place,
// and a rerun finishes the job.
//
// Errors: Invalid for an empty table_prefix, current.version() 0, negative options, a shard id
// with '/' or a GcShard whose manifest has no shard id; Corruption when a table manifest
// cannot be parsed (nothing is removed then: its references are unknown); the store's error of
// the first failing List/Get/Remove (GC stops there; the counts so far are logged; what was
// removed stays removed).
//
// Thread-safety: a stateless function over a thread-safe ObjectStore. Run at most one GC per
// table at a time. It may run alongside writers, flushes and compactions (the age rules and the
// second listing of `_versions/` protect their in-flight files), provided `current` and each
// GcShard manifest were loaded just before the call: an SSTable published after its shard's
// GcShard manifest was loaded is protected only by the age rule (removed outright once its
// generation is compacted). A commit that re-references files of a removed manifest (e.g. a
// restore of an old version) must not run during GC.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "format/proto/shard_manifest.pb.h"
#include "format/proto/table_manifest.pb.h"
#include "io/object_store.h"

namespace strata::base {

/// WAL entries of at most this many bytes are read whole to look for the fence_sentinel
/// metadata; larger ones are probed by their first 8 bytes (see rule 3 above).
inline constexpr int64_t kSentinelProbeMaxBytes = 64 * 1024;

struct GcOptions {
  int64_t retain_versions = 10;                    // --retain-versions (>= 0; current always kept)
  std::chrono::seconds retain_age{7 * 24 * 3600};  // --retain-versions-days, as seconds (>= 0)
  std::chrono::seconds orphan_min_age{3600};       // unreferenced files younger than this are kept
};

struct GcShard {                   // one shard of the table, as its owning writer last committed it
  format::ShardManifest manifest;  // newest committed shard manifest
};

struct GcInput {
  std::string table_prefix;       // "{root}/{table}" without a trailing '/'
  format::TableManifest current;  // the newest table manifest (never removed)
  std::vector<GcShard> shards;    // shards of current.shard_ids() to collect WAL/SSTables of
  int64_t now_micros = 0;         // wall clock, micros since epoch
};

/// What one run removed; each removed file is counted in exactly one category.
struct GcStats {
  int64_t manifests_removed = 0;      // table manifests (rule 1)
  int64_t base_files_removed = 0;     // files under data/, _deletions/, _indices/ (rule 2)
  int64_t wal_entries_removed = 0;    // WAL entry files (rule 3)
  int64_t sstable_files_removed = 0;  // files of SSTable directories (rule 4)
  int64_t orphan_files_removed = 0;   // files of orphan shard folders (rule 5)
  int64_t bytes_removed = 0;          // sizes (as listed) of every removed file
  /// Sum of the five file counts.
  int64_t files_removed() const;
};

/// Removes the table's garbage by the rules above. Returns what was removed.
/// Errors: see the file comment.
Result<GcStats> CollectGarbage(io::ObjectStore& store, const GcInput& in, const GcOptions& opt);

}  // namespace strata::base
