#include "io/free_space.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace strata::io {

std::shared_ptr<FreeSpaceFloor> FreeSpaceFloor::ForDirectory(const std::string& dir,
                                                             int64_t floor_bytes) {
  Probe probe = [dir]() -> Result<Space> {
    struct statvfs st {};
    if (::statvfs(dir.c_str(), &st) != 0) {
      return Status::IOError("statvfs '" + dir + "': " + std::strerror(errno));
    }
    Space s;
    s.free_bytes = static_cast<int64_t>(st.f_bavail) * static_cast<int64_t>(st.f_frsize);
    s.total_bytes = static_cast<int64_t>(st.f_blocks) * static_cast<int64_t>(st.f_frsize);
    return s;
  };
  return std::make_shared<FreeSpaceFloor>(std::move(probe), floor_bytes, dir);
}

FreeSpaceFloor::FreeSpaceFloor(Probe probe, int64_t floor_bytes, std::string where)
    : probe_(std::move(probe)),
      where_(std::move(where)),
      floor_bytes_(floor_bytes < 0 ? DefaultFloor(0) : floor_bytes),
      floor_default_(floor_bytes < 0),
      since_(std::chrono::steady_clock::now()) {
  state_.floor_bytes = floor_bytes_;
}

int64_t FreeSpaceFloor::DefaultFloor(int64_t total_bytes) {
  constexpr int64_t kDefault = 256ll << 20;
  if (total_bytes <= 0) return kDefault;
  return std::min(kDefault, total_bytes / 20);
}

bool FreeSpaceFloor::ProbeLocked(int64_t reserved_bytes, int64_t* free_bytes) {
  auto space = probe_();
  if (!space.ok()) {
    if (!probe_failed_logged_) {
      spdlog::warn(
          "free-space probe of {} failed ({}); the --min-free-bytes floor is not "
          "enforced until it succeeds",
          where_, space.status().ToString());
      probe_failed_logged_ = true;
    }
    state_.free_bytes = -1;
    return false;
  }
  probe_failed_logged_ = false;
  if (floor_default_) {
    // Derived again at every probe: a filesystem grown (or shrunk) moves the default.
    floor_bytes_ = DefaultFloor(space->total_bytes);
    state_.floor_bytes = floor_bytes_;
  }
  state_.free_bytes = space->free_bytes;
  state_.total_bytes = space->total_bytes;
  *free_bytes = space->free_bytes;
  const int64_t usable = space->free_bytes - std::max<int64_t>(reserved_bytes, 0);
  const bool below = floor_bytes_ > 0 && usable < floor_bytes_;
  if (below != state_.below) {
    state_.below = below;
    ++state_.state_changes;
    since_ = std::chrono::steady_clock::now();
    if (below) {
      spdlog::error(
          "free space on {} is {} bytes ({} of them reserved for flushing acknowledged "
          "rows), below the floor of {} bytes (--min-free-bytes): writes are refused (507) "
          "until space is freed; flush, compaction and GC keep running",
          where_, space->free_bytes, std::max<int64_t>(reserved_bytes, 0), floor_bytes_);
    } else {
      spdlog::info(
          "free space on {} is {} bytes, above the floor of {} bytes again: writes "
          "accepted",
          where_, space->free_bytes, floor_bytes_);
    }
  }
  return below;
}

Status FreeSpaceFloor::Check(int64_t reserved_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (floor_bytes_ == 0) return Status::OK();  // disabled: no probe on the write path
  int64_t free_bytes = 0;
  last_reserved_ = std::max<int64_t>(reserved_bytes, 0);
  if (!ProbeLocked(reserved_bytes, &free_bytes)) return Status::OK();
  ++state_.refusals;
  const std::string reserved = reserved_bytes > 0
                                   ? " (" + std::to_string(reserved_bytes) +
                                         " of them reserved for flushing acknowledged rows)"
                                   : "";
  return Status::InsufficientStorage(
      "free space on " + where_ + " is " + std::to_string(free_bytes) + " bytes" + reserved +
      ", below the floor of " + std::to_string(floor_bytes_) +
      " bytes (--min-free-bytes): writes are refused until space is freed (flush, compaction "
      "and garbage collection keep running)");
}

void FreeSpaceFloor::Refresh() {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t free_bytes = 0;  // probed even when disabled: describe and /metrics report it
  ProbeLocked(last_reserved_, &free_bytes);
}

FreeSpaceState FreeSpaceFloor::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  FreeSpaceState s = state_;
  s.since_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - since_)
                   .count();
  return s;
}

}  // namespace strata::io
