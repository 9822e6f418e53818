// Issue 3 test 8 and the storage routes of PROTOCOL.md §0: flush/ returns under sustained
// concurrent inserts (small MemTables) and mem_wal/describe/ then lists its generation among
// the SSTables; delete/ by predicate writes tombstones; every acknowledged row stays visible
// across flushes and a restart.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "arrow/builder.h"
#include "arrow/ipc/writer.h"
#include "io/mapped_file_cache.h"
#include "server/http_server.h"

namespace strata::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

arrow::SchemaPtr Schema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64()),
      arrow::field("vector", arrow::fixed_size_list(arrow::field("item", arrow::float32()), 2))});
}

std::string Stream(int64_t first, int64_t n) {
  arrow::RecordBatchBuilder b(Schema());
  for (int64_t i = first; i < first + n; ++i) {
    EXPECT_TRUE(b.column(0)->AppendInt(i).ok());
    const float v[2] = {static_cast<float>(i), 1};
    EXPECT_TRUE(b.column(1)->child(0)->AppendFloats(v, 2).ok());
    EXPECT_TRUE(b.column(1)->AppendValid().ok());
  }
  arrow::ipc::WriteOptions o;
  o.compression = arrow::ipc::Compression::kLz4Frame;
  return *arrow::ipc::WriteStream(*Schema(), {*b.Finish()}, o);
}

class FlushRouteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata-flush-test-" + std::to_string(::getpid()) + "-" +
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
    o.data_dir = dir_.string();
    o.port = 0;
    o.threads = 6;
    o.shard.max_memtable_rows = 256;  // small MemTables: seals all the time
    // Writes must keep coming while flushes run: no L0 write throttle (with MemTables this
    // small, compaction's per-commit cost falls behind and stops the writers; covered by
    // tests/base/write_throttle_test.cc).
    o.compaction.l0_slowdown_count = 0;
    o.compaction.l0_stop_count = 0;
    auto s = HttpServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
  }
  std::unique_ptr<httplib::Client> Client() {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    c->set_read_timeout(120, 0);
    return c;
  }
  httplib::Result Post(httplib::Client& c, const std::string& path, const std::string& body,
                       const std::string& type = "application/json") {
    return c.Post(path, body, type);
  }
  int64_t Count(httplib::Client& c) {
    auto r = Post(c, "/v1/table/t/count_rows/", "{}");
    EXPECT_TRUE(r && r->status == 200);
    return r ? json::parse(r->body).get<int64_t>() : -1;
  }

  fs::path dir_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(FlushRouteTest, FlushReturnsUnderSustainedInsertsAndDescribeListsIt) {
  auto c = Client();
  auto created =
      Post(*c, "/v1/table/t/create/", Stream(0, 10), "application/vnd.apache.arrow.stream");
  ASSERT_TRUE(created && created->status == 200) << (created ? created->body : "no answer");
  std::atomic<bool> stop{false};
  std::atomic<int64_t> next{10}, acked{10}, errors{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 3; ++t) {
    writers.emplace_back([&] {
      auto wc = Client();
      while (!stop.load()) {
        const int64_t first = next.fetch_add(16);
        auto r = Post(*wc, "/v1/table/t/insert/", Stream(first, 16),
                      "application/vnd.apache.arrow.stream");
        if (r && r->status == 200) {
          acked += 16;
        } else {
          ++errors;
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::vector<double> latencies;
  for (int round = 0; round < 5; ++round) {
    const int64_t acked_before = acked.load();
    const auto t0 = std::chrono::steady_clock::now();
    auto r = Post(*c, "/v1/table/t/flush/", "{\"timeout_ms\": 30000}");
    latencies.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    json j = json::parse(r->body);
    ASSERT_EQ(j["shards"].size(), 1u);
    const auto& s = j["shards"][0];
    ASSERT_FALSE(s["waited_generation"].is_null()) << r->body;
    const uint64_t g = s["waited_generation"].get<uint64_t>();
    EXPECT_GT(s["current_generation"].get<uint64_t>(), g);
    EXPECT_TRUE(j["elapsed_ms"].is_number_integer());
    auto d = Post(*c, "/v1/table/t/mem_wal/describe/", "");
    ASSERT_TRUE(d && d->status == 200);
    json dj = json::parse(d->body);
    const auto& shard = dj["shards"][0];
    bool listed = false;
    int64_t sstable_rows = 0;
    for (const auto& st : shard["sstables"]) {
      if (st["generation"].get<uint64_t>() == g) listed = true;
      sstable_rows += st["rows"].get<int64_t>();
    }
    // The background compactor may have moved it into the base already.
    const json& base = dj["base"];
    const std::string shard_id = shard["shard_id"].get<std::string>();
    if (base["compacted_generation"].contains(shard_id) &&
        base["compacted_generation"][shard_id].get<uint64_t>() >= g) {
      listed = true;
    }
    EXPECT_TRUE(listed) << "generation " << g << " not in " << d->body;
    // Every row acknowledged before the flush request is in an SSTable or the base.
    EXPECT_GE(sstable_rows + base["rows"].get<int64_t>(), acked_before);
    EXPECT_GE(shard["writer_epoch"].get<uint64_t>(), 1u);
    EXPECT_TRUE(shard["active"].contains("age_ms"));
    EXPECT_EQ(shard["indexes"][0]["kind"], "PK");
  }
  stop = true;
  for (auto& t : writers) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(Count(*c), acked.load());
  std::sort(latencies.begin(), latencies.end());
  std::printf(
      "[figures] flush/ under 3 concurrent HTTP inserters: min %.0f ms, median %.0f ms, "
      "max %.0f ms; %lld rows acknowledged\n",
      latencies.front(), latencies[latencies.size() / 2], latencies.back(),
      static_cast<long long>(acked.load()));
  // Restart: every acknowledged row is still there, once.
  const int64_t total = acked.load();
  server_->Stop();
  server_.reset();
  Start();
  auto c2 = Client();
  EXPECT_EQ(Count(*c2), total);
}

TEST_F(FlushRouteTest, DeleteByPredicateAndErrors) {
  auto c = Client();
  auto created =
      Post(*c, "/v1/table/t/create/", Stream(0, 20), "application/vnd.apache.arrow.stream");
  ASSERT_TRUE(created && created->status == 200);
  auto r = Post(*c, "/v1/table/t/delete/", R"({"predicate":"id = 5"})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j["num_deleted_rows"], 1);
  EXPECT_TRUE(j["version"].is_number_integer());
  EXPECT_EQ(Count(*c), 19);
  auto f = Post(*c, "/v1/table/t/flush/", "");
  ASSERT_TRUE(f && f->status == 200) << (f ? f->body : "");
  EXPECT_EQ(Count(*c), 19);
  auto again = Post(*c, "/v1/table/t/delete/", R"({"predicate":"id = 5"})");
  ASSERT_TRUE(again && again->status == 200);
  EXPECT_EQ(json::parse(again->body)["num_deleted_rows"], 0);
  // Empty flush: nothing sealed, nothing waited.
  auto f2 = Post(*c, "/v1/table/t/flush/", "{}");
  ASSERT_TRUE(f2 && f2->status == 200);
  EXPECT_TRUE(json::parse(f2->body)["shards"][0]["sealed_generation"].is_null()) << f2->body;
  // Errors.
  auto bad = Post(*c, "/v1/table/t/flush/", R"({"timeout_ms": -1})");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("timeout_ms"), std::string::npos);
  auto bad_pred = Post(*c, "/v1/table/t/delete/", R"({"predicate":"nope = 1"})");
  ASSERT_TRUE(bad_pred);
  EXPECT_EQ(bad_pred->status, 400) << bad_pred->body;
  auto missing = Post(*c, "/v1/table/zz/flush/", "");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  // Restart: the delete is durable.
  server_->Stop();
  server_.reset();
  Start();
  auto c2 = Client();
  EXPECT_EQ(Count(*c2), 19);
  auto q = Post(*c2, "/v1/table/t/count_rows/", R"({"predicate":"id = 5"})");
  ASSERT_TRUE(q && q->status == 200);
  EXPECT_EQ(json::parse(q->body).get<int64_t>(), 0);
}

}  // namespace
}  // namespace strata::server

namespace strata::server {
namespace {

// compact/ (DESIGN.md §7): compacts the flushed SSTables into the base, answers what it did,
// and mem_wal/describe/ then shows the base; bad bodies are 400 naming the field.
TEST_F(FlushRouteTest, CompactMovesSSTablesIntoTheBase) {
  auto c = Client();
  auto created =
      Post(*c, "/v1/table/t/create/", Stream(0, 100), "application/vnd.apache.arrow.stream");
  ASSERT_TRUE(created && created->status == 200);
  ASSERT_EQ(Post(*c, "/v1/table/t/flush/", "{}")->status, 200);
  auto ins =
      Post(*c, "/v1/table/t/insert/", Stream(100, 50), "application/vnd.apache.arrow.stream");
  ASSERT_TRUE(ins && ins->status == 200);
  ASSERT_EQ(
      Post(*c, "/v1/table/t/create_index/", R"({"column": "id", "index_type": "BTREE"})")->status,
      200);
  // Memory: the MemTable holds the 50 rows; no base yet.
  auto before = Post(*c, "/v1/table/t/mem_wal/describe/", "");
  ASSERT_TRUE(before && before->status == 200);
  json bj = json::parse(before->body);
  EXPECT_GE(bj["memory"]["memtable_bytes"].get<int64_t>(), 50 * 8) << before->body;
  EXPECT_EQ(bj["memory"]["base_index_bytes"].get<int64_t>(), 0) << before->body;
  // --cache-bytes' default: a quarter of physical memory (io/mapped_file_cache.h).
  EXPECT_EQ(bj["memory"]["cache_limit_bytes"].get<int64_t>(), io::CacheBytesOrDefault(-1))
      << before->body;
  EXPECT_GE(bj["memory"]["cache_resident_bytes"].get<int64_t>(), 0) << before->body;
  ASSERT_EQ(Post(*c, "/v1/table/t/flush/", "{}")->status, 200);

  auto bad = Post(*c, "/v1/table/t/compact/", "{\"timeout_ms\": -1}");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("timeout_ms"), std::string::npos) << bad->body;

  auto r = Post(*c, "/v1/table/t/compact/", "");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j["compacted_generations"], json::array({1, 2})) << r->body;
  EXPECT_EQ(j["sstables_remaining"].get<int64_t>(), 0);
  EXPECT_EQ(j["base_version"].get<int64_t>(), 1);
  EXPECT_EQ(j["rows_written"].get<int64_t>(), 150);
  EXPECT_EQ(Count(*c), 150);

  auto d = Post(*c, "/v1/table/t/mem_wal/describe/", "");
  ASSERT_TRUE(d && d->status == 200);
  json dj = json::parse(d->body);
  EXPECT_TRUE(dj["shards"][0]["sstables"].empty()) << d->body;
  EXPECT_EQ(dj["base"]["rows"].get<int64_t>(), 150);
  EXPECT_EQ(dj["base"]["fragments"].get<int64_t>(), 1);
  EXPECT_EQ(dj["base"]["version"].get<int64_t>(), 1);
  const std::string shard_id = dj["shards"][0]["shard_id"].get<std::string>();
  EXPECT_EQ(dj["base"]["compacted_generation"][shard_id].get<int64_t>(), 2);
  // The base's BTree over 150 keys, in the index entry and in the table's memory figures.
  ASSERT_EQ(dj["base"]["indexes"].size(), 1u) << d->body;
  const int64_t btree = dj["base"]["indexes"][0]["memory_bytes"].get<int64_t>();
  EXPECT_GE(btree, 150 * 8) << d->body;
  EXPECT_EQ(dj["memory"]["base_index_bytes"].get<int64_t>(), btree);
  EXPECT_EQ(dj["base"]["indexes"][0]["type"], "BTREE") << d->body;

  // Nothing left: a no-op answer.
  auto again = Post(*c, "/v1/table/t/compact/", "{}");
  ASSERT_TRUE(again && again->status == 200);
  EXPECT_TRUE(json::parse(again->body)["compacted_generations"].empty());

  auto m = c->Get("/metrics");
  ASSERT_TRUE(m && m->status == 200);
  EXPECT_NE(m->body.find("strata_compactions_total{database=\"default\",table=\"t\"} 1"),
            std::string::npos);
  // compact/ ran it, not the idle rule.
  EXPECT_NE(m->body.find("strata_compactions_idle_total{database=\"default\",table=\"t\"} 0"),
            std::string::npos);
  // No write reached the L0 slowdown while a compaction ran.
  EXPECT_NE(m->body.find("strata_l0_inflight_passed_writes_total{database=\"default\",table="
                         "\"t\"} 0"),
            std::string::npos);
  EXPECT_NE(m->body.find("strata_base_rows{database=\"default\",table=\"t\"} 150"),
            std::string::npos);

  // Restart: the rows are read from the base.
  server_->Stop();
  server_.reset();
  Start();
  auto c2 = Client();
  EXPECT_EQ(Count(*c2), 150);
}

}  // namespace
}  // namespace strata::server
