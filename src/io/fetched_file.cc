#include "io/fetched_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

namespace strata::io {

// Owns one copy: the mapping first, then the file (unlinked once unmapped).
struct FetchedCopy {
  FetchedFiles* owner = nullptr;
  std::shared_ptr<const MappedFile> file;
  std::string key;
  std::string path;
  int64_t bytes = 0;
  ~FetchedCopy() {
    {
      std::lock_guard<std::mutex> lock(owner->mu_);
      auto it = owner->live_.find(key);
      if (it != owner->live_.end() && it->second.expired()) owner->live_.erase(it);
    }
    file.reset();
    ::unlink(path.c_str());
    owner->files_on_disk_.fetch_sub(1, std::memory_order_relaxed);
    owner->bytes_on_disk_.fetch_sub(bytes, std::memory_order_relaxed);
  }
};

namespace {

constexpr const char* kDirPrefix = "strata-fetch-";

std::string DefaultRoot() {
  const char* tmp = std::getenv("TMPDIR");
  return (tmp != nullptr && tmp[0] != '\0') ? std::string(tmp) : std::string("/tmp");
}

// Removes "{root}/strata-fetch-{pid}" directories whose pid no longer runs.
void RemoveDeadDirectories(const std::string& root) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kDirPrefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + std::strlen(kDirPrefix), &end, 10);
    if (end == nullptr || *end != '\0' || pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code rm_ec;
    std::filesystem::remove_all(entry.path(), rm_ec);
  }
}

std::string FileNameFor(const std::string& key, int64_t seq) {
  // "{seq}-{last two key segments}", '/' as '_': names the SSTable in a listing of the dir.
  std::string tail = key;
  const size_t last = key.rfind('/');
  if (last != std::string::npos && last > 0) {
    const size_t before = key.rfind('/', last - 1);
    tail = key.substr(before == std::string::npos ? 0 : before + 1);
  }
  std::replace(tail.begin(), tail.end(), '/', '_');
  if (tail.size() > 120) tail = tail.substr(tail.size() - 120);
  return std::to_string(seq) + "-" + tail;
}

}  // namespace

FetchedFiles& FetchedFiles::Global() {
  // Never destroyed (copies may outlive main); its directory goes at exit (RemoveAtExit).
  static FetchedFiles* instance = new FetchedFiles();
  return *instance;
}

FetchedFiles::~FetchedFiles() { RemoveDirectory(); }

void FetchedFiles::RemoveDirectory() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);  // mapped copies stay readable until unmapped
  }
}

namespace {
void RemoveGlobalDirectoryAtExit() { FetchedFiles::Global().RemoveDirectory(); }
}  // namespace

Status FetchedFiles::SetRoot(const std::string& root) {
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) return Status::IOError("--cache-dir " + root + ": " + ec.message());
  RemoveDeadDirectories(root);
  const std::string dir = root + "/" + kDirPrefix + std::to_string(::getpid());
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError("--cache-dir " + dir + ": " + ec.message());
  std::lock_guard<std::mutex> lock(mu_);
  if (this == &Global() && !at_exit_registered_) {
    at_exit_registered_ = true;
    std::atexit(RemoveGlobalDirectoryAtExit);
  }
  dir_ = dir;
  return Status::OK();
}

Result<std::string> FetchedFiles::Directory() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!dir_.empty()) return dir_;
  }
  STRATA_RETURN_IF_ERROR(SetRoot(DefaultRoot()));
  std::lock_guard<std::mutex> lock(mu_);
  return dir_;
}

namespace {

// pwrite of all of `data` at `offset`; the 507 of a full local disk, IOError otherwise.
Status WriteAll(int fd, const char* data, size_t len, int64_t offset, const std::string& key,
                const std::string& path) {
  size_t done = 0;
  while (done < len) {
    const ssize_t n = ::pwrite(fd, data + done, len - done,
                               static_cast<off_t>(offset + static_cast<int64_t>(done)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : EIO;
      std::string what = "writing the copy of " + key + " to " + path + ": " + std::strerror(e) +
                         " (--cache-dir names where copies go)";
      // A full local disk is the 507 of writes refused for space, not a store failure.
      return e == ENOSPC ? Status(StatusCode::kInsufficientStorage, std::move(what))
                         : Status::IOError(std::move(what));
    }
    done += static_cast<size_t>(n);
  }
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<const MappedFile>> FetchedFiles::MakeCopy(
    const std::string& key, int64_t size,
    const std::function<Status(int fd, const std::string& path)>& fill) {
  STRATA_ASSIGN_OR_RETURN(std::string dir, Directory());
  const std::string path =
      dir + "/" + FileNameFor(key, seq_.fetch_add(1, std::memory_order_relaxed));
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::IOError("copy of " + key + " to " + path + ": " + std::strerror(errno));
  }
  Status filled = fill(fd, path);
  ::close(fd);
  if (!filled.ok()) {
    ::unlink(path.c_str());
    return filled;
  }
  auto mapped = MappedFile::Open(path);
  if (!mapped.ok()) {
    ::unlink(path.c_str());
    return mapped.status();
  }
  if ((*mapped)->size() != size) {
    ::unlink(path.c_str());
    return Status::IOError("copy of " + key + " is " + std::to_string((*mapped)->size()) +
                           " bytes, the object " + std::to_string(size));
  }
  files_on_disk_.fetch_add(1, std::memory_order_relaxed);
  bytes_on_disk_.fetch_add(size, std::memory_order_relaxed);
  auto copy = std::make_shared<FetchedCopy>();
  copy->owner = this;
  copy->file = std::move(*mapped);
  copy->key = key;
  copy->path = path;
  copy->bytes = size;
  const MappedFile* raw = copy->file.get();
  std::shared_ptr<const MappedFile> out(std::move(copy), raw);
  {
    std::lock_guard<std::mutex> lock(mu_);
    live_[key] = out;  // a concurrent fetch of the same key: the newer copy is the one reused
  }
  return out;
}

Result<std::shared_ptr<const MappedFile>> FetchedFiles::FetchAndMap(ObjectStore& store,
                                                                    const std::string& key) {
  {
    std::shared_ptr<const MappedFile> live;
    std::vector<Seeded> expired;  // released without mu_ (~FetchedCopy takes it)
    {
      std::lock_guard<std::mutex> lock(mu_);
      const auto now = std::chrono::steady_clock::now();
      for (auto it = seeded_.begin(); it != seeded_.end();) {
        if (it->first == key) {
          live = std::move(it->second.copy);
          it = seeded_.erase(it);
        } else if (now - it->second.at > std::chrono::seconds(kSeedHoldSeconds)) {
          expired.push_back(std::move(it->second));
          it = seeded_.erase(it);
        } else {
          ++it;
        }
      }
      if (live == nullptr) {
        auto it = live_.find(key);
        if (it != live_.end()) live = it->second.lock();
      }
    }
    if (live != nullptr) {
      reused_.fetch_add(1, std::memory_order_relaxed);
      return live;
    }
  }
  STRATA_ASSIGN_OR_RETURN(ObjectMeta meta, store.Head(key));
  const int64_t size = meta.size;
  const int64_t chunk = std::max<int64_t>(1, options_.chunk_bytes);
  const int64_t chunks = (size + chunk - 1) / chunk;
  auto fill = [&](int fd, const std::string& path) -> Status {
    std::atomic<int64_t> next{0};
    std::mutex err_mu;
    Status first_error;  // guarded by err_mu
    auto worker = [&] {
      for (;;) {
        const int64_t i = next.fetch_add(1);
        if (i >= chunks) return;
        {
          std::lock_guard<std::mutex> lock(err_mu);
          if (!first_error.ok()) return;
        }
        const int64_t offset = i * chunk;
        const int64_t want = std::min(chunk, size - offset);
        ranged_gets_.fetch_add(1, std::memory_order_relaxed);
        auto bytes = store.GetRange(key, offset, want);
        Status st;
        if (!bytes.ok()) {
          st = bytes.status().WithContext("ranged GET of " + key);
        } else if (static_cast<int64_t>(bytes->size()) != want) {
          st = Status::IOError("ranged GET of " + key + " at " + std::to_string(offset) +
                               " returned " + std::to_string(bytes->size()) + " bytes, expected " +
                               std::to_string(want) + " (the object is " + std::to_string(size) +
                               " bytes): truncated body");
        } else {
          st = WriteAll(fd, bytes->data(), bytes->size(), offset, key, path);
        }
        if (!st.ok()) {
          std::lock_guard<std::mutex> lock(err_mu);
          if (first_error.ok()) first_error = st;
          return;
        }
      }
    };
    const int threads = static_cast<int>(
        std::min<int64_t>(std::max(1, options_.parallel), std::max<int64_t>(1, chunks)));
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    // The chunks were heap strings of chunk_bytes each; glibc keeps such freed blocks in its
    // arenas once its mmap threshold has risen past them, so give what it can back.
    if (chunks > 1) ::malloc_trim(0);
    return first_error;
  };
  STRATA_ASSIGN_OR_RETURN(auto out, MakeCopy(key, size, fill));
  files_fetched_.fetch_add(1, std::memory_order_relaxed);
  bytes_fetched_.fetch_add(size, std::memory_order_relaxed);
  return out;
}

Status FetchedFiles::Seed(const std::string& key, std::string_view bytes) {
  const auto size = static_cast<int64_t>(bytes.size());
  STRATA_ASSIGN_OR_RETURN(auto copy, MakeCopy(key, size, [&](int fd, const std::string& path) {
                            return WriteAll(fd, bytes.data(), bytes.size(), 0, key, path);
                          }));
  seeded_count_.fetch_add(1, std::memory_order_relaxed);
  Seeded replaced;  // released without mu_
  std::lock_guard<std::mutex> lock(mu_);
  Seeded& slot = seeded_[key];
  replaced = std::move(slot);
  slot = Seeded{std::move(copy), std::chrono::steady_clock::now()};
  return Status::OK();
}

FetchedFiles::Stats FetchedFiles::stats() const {
  Stats s;
  s.files_fetched = files_fetched_.load(std::memory_order_relaxed);
  s.bytes_fetched = bytes_fetched_.load(std::memory_order_relaxed);
  s.ranged_gets = ranged_gets_.load(std::memory_order_relaxed);
  s.reused = reused_.load(std::memory_order_relaxed);
  s.seeded = seeded_count_.load(std::memory_order_relaxed);
  s.files_on_disk = files_on_disk_.load(std::memory_order_relaxed);
  s.bytes_on_disk = bytes_on_disk_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace strata::io
