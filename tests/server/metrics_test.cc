// The metrics registry (server/metrics.h) and the Prometheus text exposition format 0.0.4:
// exact text for a small registry, cumulative histogram buckets, escaping, concurrency.
#include "server/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <thread>
#include <vector>

#include "server/server_metrics.h"

namespace strata::server::metrics {
namespace {

TEST(MetricsText, SmallRegistryExactText) {
  Registry r;
  CounterFamily& reqs = r.AddCounter("app_requests_total", "Requests served.", {"route", "code"});
  HistogramFamily& lat = r.AddHistogram("app_latency_seconds", "Latency.", {"route"}, {0.25, 1});
  reqs.With({"query", "2xx"}).Inc(3);
  reqs.With({"insert", "4xx"}).Inc();
  lat.With({"query"}).Observe(0.125);
  lat.With({"query"}).Observe(0.5);
  lat.With({"query"}).Observe(7);
  lat.With({"query"}).Observe(0.25);  // on a bound: counted in that bucket (le = less or equal)

  const std::string expected =
      "# HELP app_requests_total Requests served.\n"
      "# TYPE app_requests_total counter\n"
      "app_requests_total{route=\"insert\",code=\"4xx\"} 1\n"
      "app_requests_total{route=\"query\",code=\"2xx\"} 3\n"
      "# HELP app_latency_seconds Latency.\n"
      "# TYPE app_latency_seconds histogram\n"
      "app_latency_seconds_bucket{route=\"query\",le=\"0.25\"} 2\n"
      "app_latency_seconds_bucket{route=\"query\",le=\"1\"} 3\n"
      "app_latency_seconds_bucket{route=\"query\",le=\"+Inf\"} 4\n"
      "app_latency_seconds_sum{route=\"query\"} 7.875\n"
      "app_latency_seconds_count{route=\"query\"} 4\n";
  EXPECT_EQ(RenderText(r.Collect()), expected);
}

TEST(MetricsText, FamilyWithoutSamplesAndGauges) {
  std::vector<MetricFamily> families;
  families.push_back({"x_total", "Nothing yet.", MetricType::kCounter, {}});
  families.push_back({"up_seconds", "Uptime.", MetricType::kGauge, {{"", {}, 12.5}}});
  EXPECT_EQ(RenderText(families),
            "# HELP x_total Nothing yet.\n# TYPE x_total counter\n"
            "# HELP up_seconds Uptime.\n# TYPE up_seconds gauge\nup_seconds 12.5\n");
}

TEST(MetricsText, LabelAndHelpEscaping) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapeLabelValue("plain $ / {}"), "plain $ / {}");
  // HELP escapes backslash and newline only; quotes stay.
  EXPECT_EQ(EscapeHelp("say \"hi\"\\\nnext"), "say \"hi\"\\\\\\nnext");

  Registry r;
  r.AddCounter("t_total", "Line one\nline two", {"table"}).With({"we\"ird\\na\nme"}).Inc(2);
  EXPECT_EQ(RenderText(r.Collect()),
            "# HELP t_total Line one\\nline two\n"
            "# TYPE t_total counter\n"
            "t_total{table=\"we\\\"ird\\\\na\\nme\"} 2\n");
}

TEST(MetricsText, ValueFormatting) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(42), "42");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(FormatValue(0.0005), "0.0005");
  EXPECT_EQ(FormatValue(0.00005), "5e-05");
  EXPECT_EQ(FormatValue(1e21), "1e+21");
  EXPECT_EQ(FormatValue(-2.5), "-2.5");
  EXPECT_EQ(FormatValue(18446744073709551615.0), "18446744073709551616");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
}

TEST(Histogram, BucketsAreCumulativeAndCountIsInf) {
  Histogram h({1, 2, 4, 8});
  // 0.5 -> le1; 1.5, 2 -> le2; 3 -> le4; 100, NaN -> +Inf.
  for (double v : {0.5, 1.5, 2.0, 3.0, 100.0, std::nan("")}) h.Observe(v);
  const Histogram::Snapshot s = h.Read();
  EXPECT_EQ(s.bucket_counts, (std::vector<uint64_t>{1, 2, 1, 0, 2}));
  EXPECT_EQ(s.count, 6u);
  EXPECT_DOUBLE_EQ(s.sum, 107.0);  // NaN not added

  std::vector<Sample> samples;
  AppendHistogramSamples({{"t", "x"}}, h.bounds(), s.bucket_counts, s.sum, &samples);
  ASSERT_EQ(samples.size(), 7u);  // 4 bounds + Inf + sum + count
  const std::vector<std::string> les = {"1", "2", "4", "8", "+Inf"};
  const std::vector<double> cumulative = {1, 3, 4, 4, 6};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(samples[i].suffix, "_bucket");
    ASSERT_EQ(samples[i].labels.size(), 2u);
    EXPECT_EQ(samples[i].labels[0].name, "t");
    EXPECT_EQ(samples[i].labels[1].name, "le");
    EXPECT_EQ(samples[i].labels[1].value, les[i]);
    EXPECT_EQ(samples[i].value, cumulative[i]) << les[i];
    if (i > 0) {
      EXPECT_GE(samples[i].value, samples[i - 1].value);
    }
  }
  EXPECT_EQ(samples[5].suffix, "_sum");
  EXPECT_EQ(samples[5].value, 107.0);
  EXPECT_EQ(samples[6].suffix, "_count");
  EXPECT_EQ(samples[6].value, samples[4].value);
}

TEST(Histogram, ConcurrentObservationsAllCounted) {
  Registry r;
  HistogramFamily& fam = r.AddHistogram("h_seconds", "h", {"k"}, {1, 10});
  CounterFamily& cnt = r.AddCounter("c_total", "c", {"k"});
  constexpr int kThreads = 4, kPer = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPer; ++i) {
        // Both label values from every thread: With() races on creation.
        const std::string k = (i + t) % 2 ? "a" : "b";
        fam.With({k}).Observe(i % 3 == 0 ? 0.5 : 5);
        cnt.With({k}).Inc();
      }
    });
  }
  for (auto& th : threads) th.join();
  const Histogram::Snapshot a = fam.With({"a"}).Read();
  const Histogram::Snapshot b = fam.With({"b"}).Read();
  EXPECT_EQ(a.count + b.count, static_cast<uint64_t>(kThreads * kPer));
  EXPECT_EQ(cnt.With({"a"}).value() + cnt.With({"b"}).value(),
            static_cast<uint64_t>(kThreads * kPer));
  EXPECT_EQ(a.count, cnt.With({"a"}).value());
  // Per thread: ceil(20000 / 3) = 6667 values of 0.5, 13333 of 5.
  EXPECT_EQ(a.bucket_counts[0] + b.bucket_counts[0], static_cast<uint64_t>(kThreads * 6667));
  EXPECT_DOUBLE_EQ(a.sum + b.sum, kThreads * (6667 * 0.5 + 13333 * 5.0));
}

TEST(Family, MissingLabelValuesReadAsEmpty) {
  Registry r;
  CounterFamily& f = r.AddCounter("m_total", "m", {"a", "b"});
  f.With({"x"}).Inc();
  EXPECT_EQ(&f.With({"x", ""}), &f.With({"x"}));
  EXPECT_EQ(RenderText(r.Collect()),
            "# HELP m_total m\n# TYPE m_total counter\nm_total{a=\"x\",b=\"\"} 1\n");
}

TEST(ServerMetricsLabels, ActionsAreBounded) {
  auto label = [](const std::string& target) {
    httplib::Request req;
    req.target = target;
    return HttpActionLabel(req);
  };
  EXPECT_EQ(label("/healthz"), "healthz");
  EXPECT_EQ(label("/metrics"), "metrics");
  EXPECT_EQ(label("/v1/table/"), "list_tables");
  EXPECT_EQ(label("/v1/table?limit=3"), "list_tables");
  EXPECT_EQ(label("/v1/table/t/insert/"), "insert");
  EXPECT_EQ(label("/v1/table/t/query"), "query");
  EXPECT_EQ(label("/v1/table/my%20t/index/vec_idx/stats/"), "index/{n}/stats");
  EXPECT_EQ(label("/v1/table/t/mem_wal/describe/"), "mem_wal/describe");
  // Client-chosen text never becomes a label value.
  EXPECT_EQ(label("/v1/table/t/whatever123/"), "other");
  EXPECT_EQ(label("/nope"), "other");
  EXPECT_EQ(StatusClass(200), "2xx");
  EXPECT_EQ(StatusClass(413), "4xx");
  EXPECT_EQ(StatusClass(503), "5xx");
  EXPECT_EQ(StatusClass(-1), "other");
}

}  // namespace
}  // namespace strata::server::metrics
