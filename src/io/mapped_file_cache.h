// The bound on mapped-file pages a process keeps resident (issue 15, `--cache-bytes`).
//
// The base's fragments are memory-mapped (io/mapped_file.h) and read in place. Every page a
// query, scan, index build or compaction touches stays mapped into the process, and so counts
// in its RSS, until the process unmaps it: without a bound, a 2,000,000-row base reached 1.34x
// its raw vector bytes in RSS after 1,000 queries, almost all of it clean file pages. This
// cache is those mapped pages, bounded: when the process's resident file-backed pages (statm's
// "shared" field: RssFile + RssShmem) exceed the baseline measured at SetLimit by more than the
// limit, it drops mapped chunks with madvise(MADV_DONTNEED) until they are under 3/4 of the limit.
//
// - Dropping a chunk of a read-only MAP_PRIVATE file mapping only unmaps its pages from this
//   process: they stay in the kernel's page cache, so the next touch is a minor fault (no
//   I/O unless the kernel reclaimed them meanwhile), and readers on other threads see the
//   same bytes before and after. Nothing is ever written through these mappings.
// - The process cannot see which of its mapped pages are hot (mincore() reports the page
//   cache, not this process's page tables), so chunks (kChunkBytes) are dropped in clock
//   order over every registered file: a chunk in use is faulted back by its next reader.
// - What triggers a check: MaybeTrim(), called by query paths between batches and after each
//   request (rate-limited to one /proc read per kCheckInterval), and a poller thread
//   (StartPoller, every `period`) for background work (index builds, compaction).
// - Overshoot: the pages a reader maps between two checks. Exact scans check every 4 MiB of
//   vectors (query/vector_search.cc). Scattered reads (result rows, IVF refine) map one
//   page-cache folio per row touched: up to 2 MiB each on Linux 6.18, which maps whole large
//   folios on a fault; they are trimmed after the query. BaseMemory.
//   ExactSearchesOfABaseThriceTheCacheStayWithinIt holds a 64 MiB cache to +32 MiB (4 MiB step
//   + 10 result rows x 2 MiB + 8 MiB) while reading a 192 MiB base twice.
// - The baseline (the binary's and libraries' pages) is measured when the limit is set;
//   library pages touched later count against the limit, a few MB.
// - When a full round of drops cannot bring the pages under the target (the excess is not
//   ours), the cache waits until RssFile grows by another limit/8 before the next round.
//
// Units: bytes. Errors: none (a failing madvise or /proc read is counted and skipped).
// Thread-safety: every member is safe from any thread. `mu_` guards the file list, the clock
// hand and the floor; counters are atomics. MappedFile registers in Open and unregisters in
// its destructor, under `mu_`, so a trim never touches an unmapped range.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace strata::io {

class MappedFile;

class MappedFileCache {
 public:
  /// Unit of dropping: 8 MiB of a mapping.
  static constexpr int64_t kChunkBytes = 8 << 20;
  /// MaybeTrim reads /proc/self/statm at most this often.
  static constexpr std::chrono::microseconds kCheckInterval{100};

  struct Stats {
    int64_t limit_bytes = 0;     // 0 = no bound
    int64_t resident_bytes = 0;  // RssFile above the baseline (measured by stats())
    int64_t mapped_bytes = 0;    // sizes of the registered mappings
    int64_t mapped_files = 0;    // registered mappings
    int64_t trims = 0;           // trims that dropped at least one chunk
    int64_t advised_bytes = 0;   // ranges passed to madvise, resident or not
    double trim_seconds = 0;     // time spent trimming
    int64_t preads = 0;          // rows copied by MappedReads instead of mapped
  };

  /// The process-wide cache every MappedFile registers with.
  static MappedFileCache& Global();

  MappedFileCache();
  ~MappedFileCache();
  MappedFileCache(const MappedFileCache&) = delete;
  MappedFileCache& operator=(const MappedFileCache&) = delete;

  /// Bounds resident mapped pages to `bytes` above the process's RssFile now (0 = no bound,
  /// the default).
  void SetLimit(int64_t bytes);
  int64_t limit() const { return limit_.load(std::memory_order_relaxed); }

  /// Cheap when there is no bound or the last check was under kCheckInterval ago; otherwise
  /// measures RssFile and trims when it is over the limit.
  void MaybeTrim();
  /// Measures and trims now when over the limit; returns the bytes of chunks dropped.
  int64_t TrimIfOver();

  /// Runs MaybeTrim every `period` on a thread of its own until StopPoller (or destruction).
  void StartPoller(std::chrono::milliseconds period);
  void StopPoller();

  Stats stats() const;

  /// True while the bound binds: a limit is set and the registered mappings are larger than
  /// it. Scattered readers then copy rows with MappedReads (io/mapped_file.h) instead of
  /// mapping them. One relaxed atomic read each.
  bool ReadsBypassMapping() const {
    const int64_t limit = limit_.load(std::memory_order_relaxed);
    return limit > 0 && mapped_bytes_.load(std::memory_order_relaxed) > limit;
  }
  /// The registered mapping holding `p`, or nullptr. The caller keeps it alive (e.g. through
  /// the snapshot whose batches point into it).
  const MappedFile* Find(const void* p) const;
  /// MappedReads reports its reads here.
  void CountPreads(int64_t n) { preads_.fetch_add(n, std::memory_order_relaxed); }
  /// Tests: measure from a baseline of 0, so the next trim drops every registered chunk.
  void ForgetBaselineForTesting() { baseline_.store(0, std::memory_order_relaxed); }

 private:
  friend class MappedFile;
  void Register(const MappedFile* f);
  void Unregister(const MappedFile* f);
  /// Resident file-backed pages in bytes (statm's third field: RssFile + RssShmem; Strata
  /// maps no shared memory), -1 when unknown.
  static int64_t ResidentFileBytes();

  std::atomic<int64_t> limit_{0};
  std::atomic<int64_t> baseline_{0};
  std::atomic<int64_t> last_resident_{0};
  std::atomic<int64_t> last_check_ns_{0};
  std::atomic<int64_t> trims_{0};
  std::atomic<int64_t> advised_bytes_{0};
  std::atomic<int64_t> trim_ns_{0};
  std::atomic<int64_t> preads_{0};
  std::atomic<int64_t> mapped_bytes_{
      0};  // sum of the registered mappings' sizes; written under mu_

  mutable std::mutex mu_;
  std::vector<const MappedFile*> files_;  // guarded by mu_
  size_t hand_file_ = 0;                  // guarded by mu_: clock hand (file index, offset)
  int64_t hand_offset_ = 0;               // guarded by mu_
  int64_t floor_ = 0;  // guarded by mu_: RssFile a full round could not go under (0 = none)

  std::mutex poller_mu_;  // guards poller_, stop_poller_
  std::condition_variable poller_cv_;
  std::thread poller_;
  bool stop_poller_ = false;
};

/// `--cache-bytes` as given, or for -1 its default: a quarter of physical memory.
int64_t CacheBytesOrDefault(int64_t flag);

}  // namespace strata::io
