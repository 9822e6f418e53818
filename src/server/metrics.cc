#include "server/metrics.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

namespace strata::server::metrics {

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  // Shortest round-trip digits; fixed notation for 1e-4 <= |v| < 1e21, exponent otherwise
  // (the choice of Go's strconv.FormatFloat(v, 'g', -1, 64), which Prometheus clients use).
  const double mag = std::fabs(value);
  const auto format = value == 0 || (mag >= 1e-4 && mag < 1e21) ? std::chars_format::fixed
                                                                : std::chars_format::scientific;
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, format);
  if (ec != std::errc()) return std::to_string(value);
  return std::string(buf, end);
}

namespace {

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

std::string RenderText(const std::vector<MetricFamily>& families) {
  std::string out;
  for (const MetricFamily& f : families) {
    out += "# HELP " + f.name + " " + EscapeHelp(f.help) + "\n";
    out += "# TYPE " + f.name + " " + TypeName(f.type) + "\n";
    for (const Sample& s : f.samples) {
      out += f.name;
      out += s.suffix;
      if (!s.labels.empty()) {
        out += '{';
        for (size_t i = 0; i < s.labels.size(); ++i) {
          if (i > 0) out += ',';
          out += s.labels[i].name;
          out += "=\"";
          out += EscapeLabelValue(s.labels[i].value);
          out += '"';
        }
        out += '}';
      }
      out += ' ';
      out += FormatValue(s.value);
      out += '\n';
    }
  }
  return out;
}

void AppendHistogramSamples(const std::vector<Label>& labels, const std::vector<double>& bounds,
                            const std::vector<uint64_t>& bucket_counts, double sum,
                            std::vector<Sample>* out) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds.size(); ++i) {
    if (i < bucket_counts.size()) cumulative += bucket_counts[i];
    Sample s;
    s.suffix = "_bucket";
    s.labels = labels;
    s.labels.push_back({"le", i < bounds.size() ? FormatValue(bounds[i]) : "+Inf"});
    s.value = static_cast<double>(cumulative);
    out->push_back(std::move(s));
  }
  // Counts past the +Inf bucket (a longer bucket_counts) still belong to _count.
  for (size_t i = bounds.size() + 1; i < bucket_counts.size(); ++i) cumulative += bucket_counts[i];
  out->push_back({"_sum", labels, sum});
  out->push_back({"_count", labels, static_cast<double>(cumulative)});
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double value) {
  // First bound >= value; NaN compares false everywhere and lands in the +Inf bucket.
  size_t i = 0;
  while (i < bounds_.size() && !(value <= bounds_[i])) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  if (!std::isnan(value)) sum_.fetch_add(value, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.bucket_counts.resize(bounds_.size() + 1);
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    s.bucket_counts[i] = buckets_[i].load(std::memory_order_relaxed);
    s.count += s.bucket_counts[i];
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

template <class M>
M& Family<M>::With(const std::vector<std::string>& values) {
  std::vector<std::string> key = values;
  key.resize(label_names_.size());
  std::lock_guard<std::mutex> lock(mu_);
  auto it = children_.find(key);
  if (it == children_.end()) {
    std::unique_ptr<M> m;
    if constexpr (std::is_same_v<M, Histogram>) {
      m = std::make_unique<Histogram>(bounds_);
    } else {
      m = std::make_unique<M>();
    }
    it = children_.emplace(std::move(key), std::move(m)).first;
  }
  return *it->second;
}

template <class M>
std::vector<Label> Family<M>::LabelsOf(const std::vector<std::string>& values) const {
  std::vector<Label> labels;
  labels.reserve(label_names_.size());
  for (size_t i = 0; i < label_names_.size(); ++i) labels.push_back({label_names_[i], values[i]});
  return labels;
}

template <class M>
MetricFamily Family<M>::Collect() const {
  MetricFamily f;
  f.name = name_;
  f.help = help_;
  f.type = std::is_same_v<M, Histogram> ? MetricType::kHistogram : MetricType::kCounter;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [values, metric] : children_) {
    if constexpr (std::is_same_v<M, Histogram>) {
      const Histogram::Snapshot s = metric->Read();
      AppendHistogramSamples(LabelsOf(values), bounds_, s.bucket_counts, s.sum, &f.samples);
    } else {
      f.samples.push_back({"", LabelsOf(values), static_cast<double>(metric->value())});
    }
  }
  return f;
}

template class Family<Counter>;
template class Family<Histogram>;

CounterFamily& Registry::AddCounter(std::string name, std::string help,
                                    std::vector<std::string> label_names) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry e;
  e.counter =
      std::make_unique<CounterFamily>(std::move(name), std::move(help), std::move(label_names));
  families_.push_back(std::move(e));
  return *families_.back().counter;
}

HistogramFamily& Registry::AddHistogram(std::string name, std::string help,
                                        std::vector<std::string> label_names,
                                        std::vector<double> bounds) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && !(bounds[i - 1] < bounds[i]))) {
      std::fprintf(stderr, "metrics: histogram %s: bounds must be finite and increasing\n",
                   name.c_str());
      std::abort();
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  Entry e;
  e.histogram = std::make_unique<HistogramFamily>(std::move(name), std::move(help),
                                                  std::move(label_names), std::move(bounds));
  families_.push_back(std::move(e));
  return *families_.back().histogram;
}

std::vector<MetricFamily> Registry::Collect() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<MetricFamily> out;
  out.reserve(families_.size());
  for (const Entry& e : families_) {
    out.push_back(e.counter ? e.counter->Collect() : e.histogram->Collect());
  }
  return out;
}

}  // namespace strata::server::metrics
