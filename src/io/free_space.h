// FreeSpaceFloor: the free-space floor of a local store (issue 19, DESIGN.md §4 "Headroom").
// Below `floor_bytes` of free space, row writes are refused up front with InsufficientStorage
// (HTTP 507) naming the floor, so the space left stays for what frees space: flushes (which let
// the WAL be collected), compactions and garbage collection, which are never refused.
// The same convention as Elasticsearch's flood-stage watermark (writes blocked, lifted by
// itself when usage falls) and RocksDB's SstFileManager (a reserve kept for compaction).
//
// Free space is statvfs(2)'s f_bavail * f_frsize of the data directory (space an unprivileged
// process may use), probed on every Check (about a microsecond, no cache: a freed disk is seen
// by the next write). A failing probe never refuses writes (it is logged once).
// State changes (above -> below the floor and back) are logged once each, not per request.
// Thread-safety: every method may be called from many threads at once; `mu_` guards the
// state.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"

namespace strata::io {

/// What FreeSpaceFloor::state() reports (describe, /metrics, /readyz).
struct FreeSpaceState {
  int64_t floor_bytes = 0;     // the floor (0 = disabled)
  int64_t free_bytes = -1;     // at the last probe (-1 = never probed or probe failed)
  int64_t total_bytes = -1;    // size of the filesystem at the last probe (-1 = unknown)
  bool below = false;          // free_bytes < floor_bytes at the last probe
  int64_t since_ms = 0;        // milliseconds in the current state (below or not)
  uint64_t refusals = 0;       // writes refused since start
  uint64_t state_changes = 0;  // transitions since start
};

class FreeSpaceFloor {
 public:
  /// Free and total bytes of the filesystem, or an error.
  struct Space {
    int64_t free_bytes = 0;
    int64_t total_bytes = 0;
  };
  using Probe = std::function<Result<Space>()>;

  /// A floor over the filesystem holding `dir` (statvfs). `floor_bytes` < 0 = the default:
  /// DefaultFloor(size of the filesystem), derived again at every probe (a grown filesystem
  /// moves it). 0 disables the floor: Check is always OK without probing, while Refresh still
  /// probes so the free space is reported.
  static std::shared_ptr<FreeSpaceFloor> ForDirectory(const std::string& dir, int64_t floor_bytes);
  /// A floor over any probe (tests: a simulated small disk). `where` names it in messages.
  FreeSpaceFloor(Probe probe, int64_t floor_bytes, std::string where);

  /// The default floor of a filesystem of `total_bytes`: 256 MiB, but at most 5% of the
  /// filesystem (a 40 MiB test filesystem keeps 2 MiB; a 1 TB disk keeps 256 MiB).
  static int64_t DefaultFloor(int64_t total_bytes);

  /// OK, or InsufficientStorage ("free space on DIR is N bytes, below the floor of F bytes
  /// (--min-free-bytes); writes are refused until space is freed") after probing. Counts
  /// refusals. `reserved_bytes` (>= 0) is space the caller has already promised: the bytes of
  /// acknowledged rows still to be flushed from its MemTables. The write is refused when
  /// free - reserved < floor, so a flush of everything acknowledged never eats the floor that
  /// compaction and GC need (a flush that falls behind under load otherwise met ENOSPC and
  /// poisoned the shard). `below` and the logged state follow the same comparison.
  Status Check(int64_t reserved_bytes = 0);
  /// Probes and updates the state without counting a refusal (the supervisor's tick, so a
  /// change is logged even when no write arrives). It keeps the reservation of the last Check
  /// (a flush that has not run yet still needs its bytes), so the reported state does not
  /// flip to "above" between two refused writes.
  void Refresh();
  FreeSpaceState state() const;
  const std::string& where() const { return where_; }

 private:
  /// Probes, updates the state (logging a change) and returns whether free - reserved is below
  /// the floor.
  bool ProbeLocked(int64_t reserved_bytes, int64_t* free_bytes);

  const Probe probe_;
  const std::string where_;
  mutable std::mutex mu_;
  int64_t floor_bytes_;       // guarded by mu_ (derived at every probe when defaulted)
  const bool floor_default_;  // floor_bytes_ follows DefaultFloor(filesystem size)
  FreeSpaceState state_;      // guarded by mu_
  std::chrono::steady_clock::time_point since_;  // guarded by mu_
  bool probe_failed_logged_ = false;             // guarded by mu_
  int64_t last_reserved_ = 0;  // guarded by mu_: the reservation of the last Check (Refresh)
};

}  // namespace strata::io
