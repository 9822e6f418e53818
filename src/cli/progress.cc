#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace strata::cli {

std::string HumanBytes(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[u]);
  return buf;
}

Progress::Progress(bool enabled, int64_t total_bytes)
    : enabled_(enabled),
      tty_(::isatty(STDERR_FILENO) == 1),
      total_bytes_(total_bytes),
      start_(Clock::now()),
      last_(start_) {}

void Progress::Update(int64_t rows, int64_t bytes) {
  if (!enabled_) return;
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 1.0) return;
  const double since = std::chrono::duration<double>(now - last_).count();
  if (drawn_ && since < (tty_ ? 0.1 : 2.0)) return;
  if (!drawn_ && !tty_ && since < 1.0) return;
  last_ = now;
  const double rate = rows / elapsed;
  const double byte_rate = bytes / elapsed;
  std::string eta = "?";
  if (total_bytes_ > 0 && byte_rate > 0 && bytes <= total_bytes_) {
    const int64_t s = static_cast<int64_t>((total_bytes_ - bytes) / byte_rate + 0.5);
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%lld:%02lld", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
    eta = buf;
  }
  if (tty_) {
    const double frac = total_bytes_ > 0 ? std::min(1.0, double(bytes) / total_bytes_) : 0.0;
    std::string bar(20, ' ');
    for (int i = 0; i < static_cast<int>(frac * 20); ++i) bar[static_cast<size_t>(i)] = '#';
    std::fprintf(stderr, "\r\033[K%5.1f%% |%s| %lld rows  %.0f rows/s  %s  ETA %s", frac * 100,
                 bar.c_str(), static_cast<long long>(rows), rate, HumanBytes(bytes).c_str(),
                 eta.c_str());
  } else {
    std::fprintf(stderr, "progress: %lld rows, %.0f rows/s, %s of %s, ETA %s\n",
                 static_cast<long long>(rows), rate, HumanBytes(bytes).c_str(),
                 HumanBytes(static_cast<double>(total_bytes_)).c_str(), eta.c_str());
  }
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::Finish() {
  if (enabled_ && tty_ && drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

}  // namespace strata::cli
