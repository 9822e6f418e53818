// GET /metrics on an in-process server: every line parses as Prometheus text 0.0.4, and the
// counters move by exactly what N inserts, M queries and one flush imply; a restart resets the
// per-table storage counters (a Prometheus counter reset) while the row gauge survives.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "arrow/builder.h"
#include "arrow/ipc/writer.h"
#include "server/http_server.h"

namespace strata::server {
namespace {

namespace fs = std::filesystem;

constexpr int kDim = 4;

arrow::SchemaPtr TableSchema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64()),
      arrow::field("vector",
                   arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
}

std::string ArrowRows(int64_t first, int64_t n) {
  arrow::RecordBatchBuilder b(TableSchema());
  for (int64_t i = first; i < first + n; ++i) {
    EXPECT_TRUE(b.column(0)->AppendInt(i).ok());
    const float v[kDim] = {static_cast<float>(i), 0, 0, 0};
    EXPECT_TRUE(b.column(1)->child(0)->AppendFloats(v, kDim).ok());
    EXPECT_TRUE(b.column(1)->AppendValid().ok());
  }
  auto s = arrow::ipc::WriteStream(*TableSchema(), {b.Finish().value()});
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

// Series key (name plus labels as written) -> value, checking every line's syntax and that
// each sample belongs to the family named by the preceding # TYPE line.
struct Scrape {
  std::map<std::string, double> values;
  std::map<std::string, std::string> types;           // family -> counter/gauge/histogram
  std::vector<std::pair<std::string, double>> lines;  // samples in output order

  double at(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? -1 : it->second;
  }
};

Scrape Parse(const std::string& text) {
  static const std::regex kHelp(R"(# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*)");
  static const std::regex kType(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram))");
  static const std::regex kSample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})? )"
      R"((-?[0-9.eE+-]+|\+Inf|-Inf|NaN))");
  Scrape s;
  std::istringstream in(text);
  std::string line, family;
  EXPECT_EQ(text.back(), '\n');
  while (std::getline(in, line)) {
    std::smatch m;
    if (line.rfind("# HELP", 0) == 0) {
      EXPECT_TRUE(std::regex_match(line, kHelp)) << line;
    } else if (line.rfind("# TYPE", 0) == 0) {
      EXPECT_TRUE(std::regex_match(line, m, kType)) << line;
      family = m[1];
      EXPECT_EQ(s.types.count(family), 0u) << "family twice: " << family;
      s.types[family] = m[2];
    } else {
      EXPECT_TRUE(std::regex_match(line, m, kSample)) << line;
      const std::string name = m[1];
      const std::string& type = s.types[family];
      if (type == "histogram") {
        EXPECT_TRUE(name == family + "_bucket" || name == family + "_sum" ||
                    name == family + "_count")
            << line;
      } else {
        EXPECT_EQ(name, family) << line;
      }
      if (type == "counter") {
        EXPECT_EQ(name.substr(name.size() - 6), "_total") << line;
      }
      const size_t sp = line.rfind(' ');
      EXPECT_EQ(s.values.count(line.substr(0, sp)), 0u) << "duplicate series: " << line;
      s.values[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
      s.lines.push_back({line.substr(0, sp), s.values[line.substr(0, sp)]});
    }
  }
  return s;
}

class MetricsRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata-metrics-test-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
    Start();
  }
  void TearDown() override {
    server_.reset();
    fs::remove_all(dir_);
  }
  void Start() {
    ServerOptions o;
    o.cache_bytes = 48 << 20;
    o.vector_code_bytes = 24 << 20;
    o.data_dir = dir_.string();
    o.port = 0;
    o.threads = 4;
    auto s = HttpServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }

  Scrape Metrics() {
    auto r = client_->Get("/metrics");
    EXPECT_TRUE(r);
    if (!r) return {};
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    return Parse(r->body);
  }
  int Post(const std::string& path, const std::string& body,
           const std::string& type = "application/json") {
    auto r = client_->Post(path, body, type);
    EXPECT_TRUE(r);
    return r ? r->status : -1;
  }

  fs::path dir_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

const std::string kT = R"({database="default",table="m"})";
std::string Q(const std::string& kind) {
  return R"({database="default",table="m",kind=")" + kind + "\"}";
}

// Histograms: per series, buckets (in output order) never decrease, the last one is
// le="+Inf" and equals _count.
void ExpectHistogramsConsistent(const Scrape& s) {
  std::map<std::string, std::vector<std::pair<std::string, double>>> series;  // key without le
  for (const auto& [key, value] : s.lines) {
    const size_t le =
        key.find(",le=\"") != std::string::npos ? key.find(",le=\"") : key.find("{le=\"");
    if (key.find("_bucket{") == std::string::npos || le == std::string::npos) continue;
    const std::string base = key.substr(0, key.find("_bucket{"));
    const std::string labels = key.substr(key.find('{'), le - key.find('{'));
    const std::string bound = key.substr(key.find("le=\"", le) + 4);
    series[base + "|" + labels].push_back({bound.substr(0, bound.size() - 2), value});
  }
  EXPECT_FALSE(series.empty());
  for (const auto& [id, buckets] : series) {
    for (size_t i = 1; i < buckets.size(); ++i) {
      EXPECT_GE(buckets[i].second, buckets[i - 1].second) << id << " le=" << buckets[i].first;
    }
    EXPECT_EQ(buckets.back().first, "+Inf") << id;
    const std::string base = id.substr(0, id.find('|'));
    std::string labels = id.substr(id.find('|') + 1);  // "{a=..,b=.." or "{" (no other labels)
    labels = labels == "{" ? "" : labels + "}";
    EXPECT_EQ(s.at(base + "_count" + labels), buckets.back().second) << id;
  }
}

TEST_F(MetricsRoutesTest, CountersMoveByExactAmounts) {
  ASSERT_EQ(Post("/v1/table/m/create/", ArrowRows(0, 2), "application/vnd.apache.arrow.stream"),
            200);
  const Scrape before = Metrics();
  EXPECT_EQ(before.types.at("strata_puts_total"), "counter");
  EXPECT_EQ(before.types.at("strata_wal_group_size"), "histogram");
  EXPECT_EQ(before.types.at("strata_table_rows"), "gauge");
  EXPECT_EQ(before.at("strata_table_rows" + kT), 2);
  EXPECT_EQ(before.at("strata_open_tables"), 1);
  EXPECT_GE(before.at("strata_process_uptime_seconds"), 0);
  EXPECT_GT(before.at("strata_process_resident_memory_bytes"), 1 << 20);
  // Memory accounting (issue 15): heap vs mapped file pages add up to the resident set (read a
  // moment apart, so within a few MB), the MemTable holding 2 rows has bytes, and no base
  // index exists yet.
  EXPECT_GT(before.at("strata_process_resident_anon_bytes"), 1 << 20);
  EXPECT_GE(before.at("strata_process_resident_file_bytes"), 0);
  EXPECT_NEAR(before.at("strata_process_resident_anon_bytes") +
                  before.at("strata_process_resident_file_bytes"),
              before.at("strata_process_resident_memory_bytes"), 16 << 20);
  EXPECT_GT(before.at("strata_memtable_bytes" + kT), 0);
  EXPECT_EQ(before.at("strata_base_index_memory_bytes" + kT), 0);
  // --cache-bytes (io/mapped_file_cache.h): the fixture sets 48 MiB; nothing is mapped yet.
  EXPECT_EQ(before.at("strata_cache_limit_bytes"), 48 << 20);
  EXPECT_EQ(before.types.at("strata_cache_trims_total"), "counter");
  EXPECT_LT(before.at("strata_cache_resident_bytes"), 48 << 20);
  // --vector-code-bytes (index/vector/sq8_cache.h): the fixture sets 24 MiB; 4-d vectors
  // never get codes (too short to repay them).
  EXPECT_EQ(before.at("strata_vector_code_limit_bytes"), 24 << 20);
  EXPECT_LE(before.at("strata_vector_code_bytes"), 24 << 20);
  EXPECT_EQ(before.types.at("strata_vector_code_builds_total"), "counter");

  // N sequential inserts of 3 rows: one put, one WAL entry of one append, one fsync each.
  constexpr int kInserts = 5;
  for (int i = 0; i < kInserts; ++i) {
    ASSERT_EQ(Post("/v1/table/m/insert/", ArrowRows(100 + 3 * i, 3),
                   "application/vnd.apache.arrow.stream"),
              200);
  }
  // M queries: 2 vector, 1 scan, 1 count_rows, 1 explain; plus one unparsable query/ body
  // (400 before any table work: not a query).
  const std::string vq = R"({"vector":[1,0,0,0],"k":3})";
  EXPECT_EQ(Post("/v1/table/m/query/", vq), 200);
  EXPECT_EQ(Post("/v1/table/m/query/", vq), 200);
  EXPECT_EQ(Post("/v1/table/m/query/", R"({"k":100,"vector":[],"filter":"id > 3"})"), 200);
  EXPECT_EQ(Post("/v1/table/m/count_rows/", "{}"), 200);
  EXPECT_EQ(Post("/v1/table/m/explain_plan/", R"({"verbose":false,"query":)" + vq + "}"), 200);
  EXPECT_EQ(Post("/v1/table/m/query/", "{not json"), 400);
  // A query on a missing table creates no series.
  EXPECT_EQ(Post("/v1/table/ghost/query/", vq), 404);

  const Scrape after = Metrics();
  auto delta = [&](const std::string& key) {
    const double b = before.at(key);
    return after.at(key) - (b < 0 ? 0 : b);
  };
  EXPECT_EQ(delta("strata_puts_total" + kT), kInserts);
  EXPECT_EQ(delta("strata_rows_written_total" + kT), 3 * kInserts);
  EXPECT_EQ(delta("strata_wal_entries_total" + kT), kInserts);
  EXPECT_EQ(delta("strata_wal_appends_total" + kT), kInserts);
  EXPECT_EQ(delta("strata_wal_fsyncs_total" + kT), kInserts);
  const std::string g1 = R"(strata_wal_group_size_bucket{database="default",table="m",le="1"})";
  EXPECT_EQ(delta(g1), kInserts);
  EXPECT_EQ(delta("strata_wal_group_size_count" + kT), kInserts);
  EXPECT_EQ(delta("strata_wal_group_size_sum" + kT), kInserts);
  EXPECT_EQ(after.at("strata_table_rows" + kT), 2 + 3 * kInserts);
  EXPECT_GT(after.at("strata_table_version" + kT), before.at("strata_table_version" + kT));

  EXPECT_EQ(after.at("strata_queries_total" + Q("vector")), 2);
  EXPECT_EQ(after.at("strata_queries_total" + Q("scan")), 1);
  EXPECT_EQ(after.at("strata_queries_total" + Q("count_rows")), 1);
  EXPECT_EQ(after.at("strata_queries_total" + Q("explain")), 1);
  EXPECT_EQ(after.at("strata_queries_total" + Q("fts")), -1);  // never run: no series
  EXPECT_EQ(after.at("strata_query_duration_seconds_count" + Q("vector")), 2);
  EXPECT_GT(after.at("strata_query_duration_seconds_sum" + Q("vector")), 0);
  for (const auto& [key, v] : after.values) {
    EXPECT_EQ(key.find("ghost"), std::string::npos) << key;
  }

  EXPECT_EQ(delta(R"(strata_http_requests_total{action="insert",status="2xx"})"), kInserts);
  EXPECT_EQ(after.at(R"(strata_http_requests_total{action="query",status="2xx"})"), 3);
  EXPECT_EQ(after.at(R"(strata_http_requests_total{action="query",status="4xx"})"), 2);
  EXPECT_EQ(after.at(R"(strata_http_request_duration_seconds_count{action="query"})"), 5);
  // The first scrape was counted once it was answered.
  EXPECT_EQ(after.at(R"(strata_http_requests_total{action="metrics",status="2xx"})"), 1);
  ExpectHistogramsConsistent(before);
  ExpectHistogramsConsistent(after);

  // flush/: one seal, one published SSTable, one flush duration observed.
  ASSERT_EQ(Post("/v1/table/m/flush/", "{}"), 200);
  const Scrape flushed = Metrics();
  EXPECT_EQ(
      flushed.at("strata_memtable_seals_total" + kT) - after.at("strata_memtable_seals_total" + kT),
      1);
  EXPECT_EQ(flushed.at("strata_flushes_total" + kT) - after.at("strata_flushes_total" + kT), 1);
  EXPECT_EQ(flushed.at("strata_flush_duration_seconds_count" + kT) -
                after.at("strata_flush_duration_seconds_count" + kT),
            1);
  EXPECT_GT(flushed.at("strata_flush_duration_seconds_sum" + kT), 0);
  EXPECT_EQ(flushed.at("strata_flush_failures_total" + kT), 0);
  EXPECT_EQ(flushed.at("strata_backpressure_waits_total" + kT), 0);
  ExpectHistogramsConsistent(flushed);

  // Restart: the table is not open until touched; then its storage counters restart at zero
  // (a counter reset) while rows and version carry on.
  server_.reset();
  Start();
  const Scrape fresh = Metrics();
  EXPECT_EQ(fresh.at("strata_open_tables"), 0);
  EXPECT_EQ(fresh.at("strata_puts_total" + kT), -1);
  EXPECT_EQ(Post("/v1/table/m/count_rows/", "{}"), 200);
  const Scrape reopened = Metrics();
  EXPECT_EQ(reopened.at("strata_puts_total" + kT), 0);
  EXPECT_EQ(reopened.at("strata_table_rows" + kT), 2 + 3 * kInserts);
  EXPECT_EQ(reopened.at("strata_table_version" + kT), flushed.at("strata_table_version" + kT));
  EXPECT_EQ(reopened.at("strata_queries_total" + Q("count_rows")), 1);
}

TEST_F(MetricsRoutesTest, ConcurrentInsertsGroupCommitAddsUp) {
  ASSERT_EQ(Post("/v1/table/g/create/", ArrowRows(0, 1), "application/vnd.apache.arrow.stream"),
            200);
  const Scrape before = Metrics();
  const std::string t = R"({database="default",table="g"})";
  constexpr int kThreads = 4, kPer = 25;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      httplib::Client c("127.0.0.1", server_->port());
      for (int j = 0; j < kPer; ++j) {
        auto r = c.Post("/v1/table/g/insert/", ArrowRows(1000 * (i + 1) + j, 2),
                        "application/vnd.apache.arrow.stream");
        EXPECT_TRUE(r && r->status == 200);
      }
    });
  }
  for (auto& th : threads) th.join();
  const Scrape after = Metrics();
  const double puts = after.at("strata_puts_total" + t) - before.at("strata_puts_total" + t);
  EXPECT_EQ(puts, kThreads * kPer);
  EXPECT_EQ(after.at("strata_rows_written_total" + t) - before.at("strata_rows_written_total" + t),
            2 * kThreads * kPer);
  // Group commit may merge appends: entries <= appends, and the histogram's _sum is appends.
  const double appends =
      after.at("strata_wal_appends_total" + t) - before.at("strata_wal_appends_total" + t);
  const double entries =
      after.at("strata_wal_group_size_count" + t) - before.at("strata_wal_group_size_count" + t);
  EXPECT_EQ(appends, kThreads * kPer);
  EXPECT_EQ(after.at("strata_wal_group_size_sum" + t), after.at("strata_wal_appends_total" + t));
  EXPECT_GE(entries, 1);
  EXPECT_LE(entries, appends);
  EXPECT_EQ(after.at("strata_table_rows" + t), 1 + 2 * kThreads * kPer);
  ExpectHistogramsConsistent(after);
}

}  // namespace
}  // namespace strata::server
