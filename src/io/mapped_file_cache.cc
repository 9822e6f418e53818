#include "io/mapped_file_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "io/mapped_file.h"

namespace strata::io {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

MappedFileCache& MappedFileCache::Global() {
  // Never destroyed: mappings released during static destruction still unregister.
  static MappedFileCache* cache = new MappedFileCache();
  return *cache;
}

MappedFileCache::MappedFileCache() = default;

MappedFileCache::~MappedFileCache() { StopPoller(); }

int64_t MappedFileCache::ResidentFileBytes() {
  static const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  static const int64_t page = ::sysconf(_SC_PAGESIZE);
  if (fd < 0) return -1;
  char buf[256];
  const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return -1;
  buf[n] = '\0';
  // size resident shared text lib data dt (pages)
  char* p = buf;
  for (int field = 0; field < 2; ++field) {
    std::strtoll(p, &p, 10);
  }
  const long long shared = std::strtoll(p, nullptr, 10);
  return static_cast<int64_t>(shared) * page;
}

void MappedFileCache::SetLimit(int64_t bytes) {
  const int64_t rss = ResidentFileBytes();
  baseline_.store(rss < 0 ? 0 : rss, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    floor_ = 0;
  }
  limit_.store(std::max<int64_t>(bytes, 0), std::memory_order_relaxed);
}

void MappedFileCache::MaybeTrim() {
  if (limit_.load(std::memory_order_relaxed) <= 0) return;
  const int64_t now = NowNs();
  int64_t last = last_check_ns_.load(std::memory_order_relaxed);
  if (now - last < std::chrono::nanoseconds(kCheckInterval).count()) return;
  if (!last_check_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed)) return;
  TrimIfOver();
}

int64_t MappedFileCache::TrimIfOver() {
  const int64_t limit = limit_.load(std::memory_order_relaxed);
  if (limit <= 0) return 0;
  const int64_t baseline = baseline_.load(std::memory_order_relaxed);
  int64_t rss = ResidentFileBytes();
  if (rss < 0) return 0;
  last_resident_.store(rss - baseline, std::memory_order_relaxed);
  if (rss - baseline <= limit) return 0;
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return 0;  // another thread is trimming
  if (floor_ > 0 && rss < floor_ + limit / 8) return 0;
  const int64_t t0 = NowNs();
  const int64_t target = baseline + limit / 4 * 3;
  // Measure again after every quarter of the bound dropped (a /proc read costs more than an
  // madvise of a sparsely mapped chunk), so a trim reads /proc about 4 + mapped / limit times.
  const int64_t measure_every = std::max(kChunkBytes, limit / 4);
  const int64_t total = mapped_bytes_.load(std::memory_order_relaxed);  // exact under mu_
  int64_t dropped = 0, unmeasured = 0;
  while (dropped < total) {
    if (hand_file_ >= files_.size()) {
      hand_file_ = 0;
      hand_offset_ = 0;
    }
    const MappedFile* f = files_[hand_file_];
    const int64_t len = std::min(kChunkBytes, f->size() - hand_offset_);
    if (len > 0) {
      (void)::madvise(const_cast<uint8_t*>(f->data()) + hand_offset_, static_cast<size_t>(len),
                      MADV_DONTNEED);
      dropped += len;
      unmeasured += len;
      hand_offset_ += len;
    }
    if (hand_offset_ >= f->size()) {
      ++hand_file_;
      hand_offset_ = 0;
    }
    if (unmeasured >= measure_every || dropped >= total) {
      unmeasured = 0;
      rss = ResidentFileBytes();
      if (rss >= 0 && rss <= target) break;
    }
  }
  // A whole round that ends over the target: what is left is not these mappings' pages.
  floor_ = (rss > target && dropped >= total) ? rss : 0;
  if (rss >= 0) last_resident_.store(rss - baseline, std::memory_order_relaxed);
  if (dropped > 0) {
    trims_.fetch_add(1, std::memory_order_relaxed);
    advised_bytes_.fetch_add(dropped, std::memory_order_relaxed);
  }
  trim_ns_.fetch_add(NowNs() - t0, std::memory_order_relaxed);
  return dropped;
}

void MappedFileCache::StartPoller(std::chrono::milliseconds period) {
  std::lock_guard<std::mutex> lock(poller_mu_);
  if (poller_.joinable()) return;
  stop_poller_ = false;
  poller_ = std::thread([this, period] {
    std::unique_lock<std::mutex> l(poller_mu_);
    while (!poller_cv_.wait_for(l, period, [this] { return stop_poller_; })) {
      l.unlock();
      TrimIfOver();
      l.lock();
    }
  });
}

void MappedFileCache::StopPoller() {
  std::thread t;
  {
    std::lock_guard<std::mutex> lock(poller_mu_);
    stop_poller_ = true;
    t = std::move(poller_);
  }
  poller_cv_.notify_all();
  if (t.joinable()) t.join();
}

MappedFileCache::Stats MappedFileCache::stats() const {
  Stats s;
  s.limit_bytes = limit_.load(std::memory_order_relaxed);
  const int64_t rss = ResidentFileBytes();
  s.resident_bytes =
      std::max<int64_t>(0, rss < 0 ? last_resident_.load(std::memory_order_relaxed)
                                   : rss - baseline_.load(std::memory_order_relaxed));
  s.trims = trims_.load(std::memory_order_relaxed);
  s.advised_bytes = advised_bytes_.load(std::memory_order_relaxed);
  s.preads = preads_.load(std::memory_order_relaxed);
  s.trim_seconds = static_cast<double>(trim_ns_.load(std::memory_order_relaxed)) / 1e9;
  s.mapped_bytes = mapped_bytes_.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  s.mapped_files = static_cast<int64_t>(files_.size());
  return s;
}

void MappedFileCache::Register(const MappedFile* f) {
  std::lock_guard<std::mutex> lock(mu_);
  files_.push_back(f);
  mapped_bytes_.fetch_add(f->size(), std::memory_order_relaxed);
}

const MappedFile* MappedFileCache::Find(const void* p) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const MappedFile* f : files_) {
    if (f->Contains(p)) return f;
  }
  return nullptr;
}

void MappedFileCache::Unregister(const MappedFile* f) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find(files_.begin(), files_.end(), f);
  if (it == files_.end()) return;
  const size_t i = static_cast<size_t>(it - files_.begin());
  files_.erase(it);
  mapped_bytes_.fetch_sub(f->size(), std::memory_order_relaxed);
  if (hand_file_ > i) {
    --hand_file_;
  } else if (hand_file_ == i) {
    hand_offset_ = 0;
  }
}

int64_t CacheBytesOrDefault(int64_t flag) {
  if (flag >= 0) return flag;
  const int64_t pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? pages * page / 4 : int64_t{1} << 30;
}

}  // namespace strata::io
