// Progress display of a long client operation (`strata import`). Nothing is shown during the
// first second (short imports print only their summary). Then, on a terminal (stderr is a
// tty), one line redrawn at most 10 times a second:
//   "  12.3% |####      |  123,456 rows  45,678 rows/s  12.1 MiB  ETA 0:23"
// and when stderr is not a terminal, a plain line every 2 seconds:
//   "progress: 123456 rows, 45678 rows/s, 12.1 MiB of 98.0 MiB, ETA 23 s"
// Rates are averaged since Start(). ETA is from bytes done of bytes total (0 = unknown).
// Thread-safety: one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace strata::cli {

class Progress {
 public:
  /// `enabled` false: Update/Finish print nothing (--quiet, --json).
  Progress(bool enabled, int64_t total_bytes);
  /// Rows and bytes done so far (absolute).
  void Update(int64_t rows, int64_t bytes);
  /// Clears the terminal line, if one was drawn.
  void Finish();

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  bool tty_;
  int64_t total_bytes_;
  Clock::time_point start_;
  Clock::time_point last_;
  bool drawn_ = false;
};

/// "12.1 MiB", "980 B".
std::string HumanBytes(double bytes);

}  // namespace strata::cli
