// A small metrics registry and the Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/): `# HELP` and `# TYPE` lines,
// then one `name{label="value",...} value` line per sample; histograms as cumulative
// `_bucket{le="..."}` samples ending with `le="+Inf"`, then `_sum` and `_count`.
//
// Two kinds of live metrics: Counter (monotonic uint64) and Histogram (fixed upper bounds,
// chosen at registration). Both are lock-free (relaxed atomics) to update. A Family holds one
// metric per label-value tuple; its map is guarded by the family's mutex (taken by With() and
// Collect(); the returned reference stays valid for the family's lifetime, so hot paths may
// keep it). Values computed at scrape time (gauges, counters read from elsewhere) are built as
// MetricFamily snapshots directly and rendered with RenderText.
// Thread-safety: every method may be called from many threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace strata::server::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

/// One label of a sample; `value` is raw (escaped when rendered).
struct Label {
  std::string name;
  std::string value;
};

/// One exposition line: `{family name}{suffix}{labels} value`, e.g. suffix "_bucket".
struct Sample {
  std::string suffix;
  std::vector<Label> labels;
  double value = 0;
};

/// A family ready to render: name (for counters ending in `_total`), help text (raw), type,
/// and its samples in output order.
struct MetricFamily {
  std::string name;
  std::string help;
  MetricType type = MetricType::kCounter;
  std::vector<Sample> samples;
};

/// A label value escaped for the text format: `\` -> `\\`, `"` -> `\"`, newline -> `\n`.
std::string EscapeLabelValue(std::string_view value);
/// A HELP text escaped for the text format: `\` -> `\\`, newline -> `\n`.
std::string EscapeHelp(std::string_view help);
/// A sample value: shortest round-trip decimal, fixed for 1e-4 <= |v| < 1e21 ("3", "0.0005"),
/// else with an exponent ("1e+21", "5e-05"); "+Inf", "-Inf", "NaN".
std::string FormatValue(double value);

/// Renders families in order: `# HELP`, `# TYPE`, then the samples, each line ending in '\n'.
/// A family without samples still gets its HELP and TYPE lines.
std::string RenderText(const std::vector<MetricFamily>& families);

/// Appends a histogram's samples to `out`: `_bucket` per bound (cumulative counts of
/// `bucket_counts`, which are per bucket, not cumulative, with one more entry than `bounds`
/// for the +Inf bucket), then `_sum`, then `_count` (= all buckets). `labels` go before `le`.
void AppendHistogramSamples(const std::vector<Label>& labels, const std::vector<double>& bounds,
                            const std::vector<uint64_t>& bucket_counts, double sum,
                            std::vector<Sample>* out);

/// A monotonically increasing count. Lock-free.
class Counter {
 public:
  void Inc(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

/// Observations counted into fixed buckets: bucket i counts values <= bounds[i] (and above
/// bounds[i-1]); the last bucket counts values above every bound (and NaN). Lock-free; a
/// concurrent snapshot may see an observation's bucket before its sum.
class Histogram {
 public:
  /// `bounds` must be strictly increasing and finite (checked by Registry::AddHistogram).
  explicit Histogram(std::vector<double> bounds);

  void Observe(double value);

  struct Snapshot {
    std::vector<uint64_t> bucket_counts;  // per bucket (not cumulative), bounds.size() + 1
    double sum = 0;
    uint64_t count = 0;  // sum of bucket_counts
  };
  Snapshot Read() const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  const std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_.size() + 1
  std::atomic<double> sum_{0};
};

/// Metrics of one name, one per label-value tuple (in the order of the family's label names).
/// `mu_` guards `children_`; the metrics themselves are atomic.
template <class M>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::vector<double> bounds = {})
      : name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        bounds_(std::move(bounds)) {}

  /// The metric for `values` (one per label name; missing values read as ""), created at
  /// zero on first use. The reference stays valid while the family lives.
  M& With(const std::vector<std::string>& values);

  const std::string& name() const { return name_; }
  /// The current samples, label tuples in ascending order.
  MetricFamily Collect() const;

 private:
  std::vector<Label> LabelsOf(const std::vector<std::string>& values) const;

  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const std::vector<double> bounds_;  // histograms only
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<M>> children_;  // guarded by mu_
};

using CounterFamily = Family<Counter>;
using HistogramFamily = Family<Histogram>;

/// The live families of a process or server, in registration order. Register everything
/// before serving (AddCounter / AddHistogram take `mu_`, as does Collect).
class Registry {
 public:
  /// A counter family; `name` should end in `_total`.
  CounterFamily& AddCounter(std::string name, std::string help,
                            std::vector<std::string> label_names);
  /// A histogram family with upper bounds `bounds` (strictly increasing, finite; a bad list
  /// is a programming error and aborts).
  HistogramFamily& AddHistogram(std::string name, std::string help,
                                std::vector<std::string> label_names, std::vector<double> bounds);

  /// Snapshots of every family, in registration order.
  std::vector<MetricFamily> Collect() const;

 private:
  mutable std::mutex mu_;
  // Guarded by mu_; each entry is one of the two (never both).
  struct Entry {
    std::unique_ptr<CounterFamily> counter;
    std::unique_ptr<HistogramFamily> histogram;
  };
  std::vector<Entry> families_;
};

}  // namespace strata::server::metrics
