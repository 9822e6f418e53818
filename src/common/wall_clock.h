// Wall-clock time for stored timestamps (manifest created_at, version/list).
// Thread-safety: pure function.
#pragma once

#include <chrono>
#include <cstdint>

namespace strata {

/// Microseconds since the Unix epoch (system_clock; may jump with the system time, so use it
/// for recorded timestamps only, never for durations or deadlines).
inline int64_t WallClockMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace strata
