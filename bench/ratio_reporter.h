// A Google Benchmark console reporter that also keeps the mean time per iteration of every
// run, so a benchmark's main() can print ratios measured side by side in one run.
#pragma once

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

namespace strata::bench {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // Colors only on a terminal.
  RatioReporter() : ConsoleReporter(::isatty(1) ? OO_Defaults : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type == Run::RT_Iteration && !r.error_occurred) {
        times_[r.benchmark_name()] = r.GetAdjustedRealTime();
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  /// Benchmark name -> mean time per iteration (the benchmark's time unit).
  const std::map<std::string, double>& times() const { return times_; }

 private:
  std::map<std::string, double> times_;
};

}  // namespace strata::bench
