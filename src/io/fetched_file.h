// Local copies of remote objects, memory-mapped (issue 17: "reads of SSTables/base use ranged
// GETs through the bounded cache"). On a local disk an SSTable's data.arrow is mapped in place
// (io/mapped_file.h) and --cache-bytes bounds its resident pages (io/mapped_file_cache.h). On
// an object store there is no file to map, and reading the object into the heap (what Strata
// did before) puts the whole base in RAM, outside any bound. So a remote data file is copied
// to a local file with ranged GETs (`chunk_bytes` each, up to `parallel` at once), mapped,
// and registered with the same MappedFileCache: the process keeps at most --cache-bytes of it
// resident, the rest stays in the kernel's page cache or on the local disk.
//
// Layout: the copies live in "{root}/strata-fetch-{pid}/" (root: --cache-dir, default
// $TMPDIR or /tmp), one file per open SSTable. A copy is removed when its last mapping goes
// (the reader that opened it was dropped: compaction replaced it, or the table closed), so
// the local disk holds exactly the remote data files of the open tables; the directory is
// removed at a clean exit, and directories of processes that no longer run are removed when
// a server sets its root.
//
// Correctness: the copy's length must equal the object's size from a HEAD and every ranged
// GET but the last must return its full length, otherwise the fetch fails with IOError
// (a truncated body is never mapped). Objects fetched are immutable once published (SSTables
// and base fragments are written once under fresh names, "{8 random hex}_gen_{g}"), so a
// copy never goes stale, and a key fetched while a copy of it is still mapped gets that copy
// (no request, no second file): a table reopened by writer recovery or a rename maps what the
// old table object still maps, instead of needing room for a second copy (break test: a
// poisoned writer stayed down with 79 MB free for a 107 MB base).
//
// Thread-safety: every method may be called from many threads at once (counters are
// atomics; the root is guarded by `mu_`).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/status.h"
#include "io/mapped_file.h"
#include "io/object_store.h"

namespace strata::io {

class FetchedFiles {
 public:
  struct Options {
    // Bytes per ranged GET. Each is a transient heap string; with 4 fetch threads, 2 MiB
    // chunks left +4 MB of heap in their malloc arenas after a 64 MiB fetch, 8 MiB +21 MB.
    int64_t chunk_bytes = 2 << 20;
    int parallel = 4;  // ranged GETs in flight per fetch
  };
  struct Stats {
    int64_t files_fetched = 0;  // copies made since start
    int64_t bytes_fetched = 0;  // bytes copied since start
    int64_t ranged_gets = 0;    // ranged GETs sent since start
    int64_t seeded = 0;         // copies made from bytes just put (Seed) since start
    int64_t reused = 0;         // fetches answered with a live copy since start
    int64_t files_on_disk = 0;  // copies present now (mapped by an open reader)
    int64_t bytes_on_disk = 0;  // their bytes
  };

  /// The process's instance (the server and every SSTable reader use it).
  static FetchedFiles& Global();

  FetchedFiles() = default;
  ~FetchedFiles();
  FetchedFiles(const FetchedFiles&) = delete;
  FetchedFiles& operator=(const FetchedFiles&) = delete;

  /// Puts this process's copies under `root` (created if missing) from now on: the directory
  /// "{root}/strata-fetch-{pid}" is created, and "strata-fetch-{N}" directories of pids that
  /// no longer run are removed. Copies made before stay where they are. Errors: IOError
  /// naming the directory.
  Status SetRoot(const std::string& root);

  /// Copies `key` from `store` to a local file and maps it (see the file comment). The
  /// returned mapping owns the copy: the file is removed when the mapping goes.
  /// Errors: NotFound; IOError (the store's, a short body, or the local disk's).
  Result<std::shared_ptr<const MappedFile>> FetchAndMap(ObjectStore& store, const std::string& key);

  /// Makes the local copy of `key` from `bytes` the caller has just put to the store (a
  /// flush or compaction writing an SSTable), so the FetchAndMap that opens it next needs no
  /// request: the copy is held for that call for up to kSeedHoldSeconds (a write whose SSTable
  /// is never opened, e.g. a failed publish, leaves it that long). Errors: IOError of the
  /// local disk (the caller may ignore it: the next FetchAndMap fetches).
  Status Seed(const std::string& key, std::string_view bytes);
  static constexpr int kSeedHoldSeconds = 60;

  Stats stats() const;
  void set_options(Options o) { options_ = o; }  // tests: before any fetch
  /// The directory copies go to now (created on first use when SetRoot was never called).
  Result<std::string> Directory();
  /// Removes the directory and every copy in it (at exit; mapped copies stay readable).
  void RemoveDirectory();

 private:
  friend struct FetchedCopy;
  Options options_;
  mutable std::mutex mu_;
  std::string dir_;  // guarded by mu_: "" until first use or SetRoot
  // guarded by mu_: the live copies by key (an entry expires with its last mapping and is
  // erased by the copy's destructor)
  std::unordered_map<std::string, std::weak_ptr<const MappedFile>> live_;
  struct Seeded {
    std::shared_ptr<const MappedFile> copy;
    std::chrono::steady_clock::time_point at;
  };
  std::unordered_map<std::string, Seeded> seeded_;  // guarded by mu_: copies Seed made
  /// Copies `size` bytes of `key` into a new local file through `fill(fd, path)` and maps
  /// it; registers it in live_.
  Result<std::shared_ptr<const MappedFile>> MakeCopy(
      const std::string& key, int64_t size,
      const std::function<Status(int fd, const std::string& path)>& fill);
  bool at_exit_registered_ = false;  // guarded by mu_
  std::atomic<int64_t> seq_{0};
  std::atomic<int64_t> files_fetched_{0};
  std::atomic<int64_t> bytes_fetched_{0};
  std::atomic<int64_t> ranged_gets_{0};
  std::atomic<int64_t> reused_{0};
  std::atomic<int64_t> seeded_count_{0};
  std::atomic<int64_t> files_on_disk_{0};
  std::atomic<int64_t> bytes_on_disk_{0};
};

}  // namespace strata::io
