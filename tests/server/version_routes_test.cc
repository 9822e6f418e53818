// version/list/, restore/, tags/*, stats/ and rename/ (PROTOCOL.md §4, §5.1, §5.3) and the
// version rule of every read, through the real HTTP server on port 0 with a temporary data
// directory.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>

#include "arrow/builder.h"
#include "arrow/ipc/writer.h"
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

arrow::RecordBatchPtr Rows(int64_t first, int64_t n) {
  arrow::RecordBatchBuilder b(Schema());
  for (int64_t i = first; i < first + n; ++i) {
    EXPECT_TRUE(b.column(0)->AppendInt(i).ok());
    const float v[2] = {static_cast<float>(i), 1};
    EXPECT_TRUE(b.column(1)->child(0)->AppendFloats(v, 2).ok());
    EXPECT_TRUE(b.column(1)->AppendValid().ok());
  }
  return b.Finish().value();
}

std::string Stream(int64_t first, int64_t n) {
  auto s = arrow::ipc::WriteStream(*Schema(), {Rows(first, n)});
  EXPECT_TRUE(s.ok());
  return *s;
}

struct Answer {
  int status = 0;
  json body;
  std::string raw;
};

class VersionRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata-version-routes-" + std::to_string(::getpid()) +
                                        "-" + std::to_string(std::random_device{}()));
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
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = 4;
    auto s = HttpServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  void Restart() {
    server_->Stop();
    server_.reset();
    Start();
  }

  Answer Post(const std::string& path, const std::string& body,
              const std::string& type = "application/json") {
    auto r = body.empty() ? client_->Post(path) : client_->Post(path, body, type);
    EXPECT_TRUE(r) << path;
    if (!r) return {};
    Answer a;
    a.status = r->status;
    a.raw = r->body;
    a.body = json::parse(r->body, nullptr, false);
    return a;
  }
  void Create(const std::string& table, int64_t rows) {
    Answer a = Post("/v1/table/" + table + "/create/", Stream(0, rows),
                    "application/vnd.apache.arrow.stream");
    ASSERT_EQ(a.status, 200) << a.raw;
  }
  uint64_t Version(const std::string& table) {
    Answer a = Post("/v1/table/" + table + "/describe/", "");
    EXPECT_EQ(a.status, 200) << a.raw;
    return a.body.value("version", uint64_t{0});
  }
  static void ExpectError(const Answer& a, int status, const std::string& code,
                          const std::vector<std::string>& needles) {
    EXPECT_EQ(a.status, status) << a.raw;
    ASSERT_TRUE(a.body.is_object()) << a.raw;
    EXPECT_EQ(a.body.value("error", ""), code) << a.raw;
    const std::string message = a.body.value("message", "");
    for (const auto& n : needles) EXPECT_NE(message.find(n), std::string::npos) << a.raw;
  }

  fs::path dir_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(VersionRoutesTest, WritesAndIndexChangesMakeVersionsAndOldVersionsAreRefused) {
  Create("t", 3);
  const uint64_t v1 = Version("t");
  Answer ins = Post("/v1/table/t/insert/", Stream(3, 2), "application/vnd.apache.arrow.stream");
  ASSERT_EQ(ins.status, 200) << ins.raw;
  const uint64_t v2 = ins.body["version"].get<uint64_t>();
  EXPECT_GT(v2, v1);
  ASSERT_EQ(Post("/v1/table/t/create_index/", R"({"column":"id","index_type":"BTREE"})").status,
            200);
  const uint64_t v3 = Version("t");
  EXPECT_EQ(v3, v2 + 1);

  Answer list = Post("/v1/table/t/version/list/", "");
  ASSERT_EQ(list.status, 200) << list.raw;
  ASSERT_EQ(list.body["versions"].size(), 1u) << list.raw;
  const json& entry = list.body["versions"][0];
  EXPECT_EQ(entry["version"].get<uint64_t>(), v3);
  EXPECT_EQ(entry["metadata"], json::object());
  const std::string ts = entry["timestamp"].get<std::string>();
  EXPECT_TRUE(std::regex_match(ts, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)"))) << ts;
  // The timestamp is today's (UTC year of now).
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  EXPECT_EQ(ts.substr(0, 4), std::to_string(tm.tm_year + 1900));

  const std::string old = std::to_string(v1);
  const std::string cur = std::to_string(v3);
  const std::vector<std::string> needles = {"time travel is not supported yet", "version " + old,
                                            "current version " + cur};
  const std::string old_v = R"({"version":)" + old + "}";
  ExpectError(Post("/v1/table/t/describe/", old_v), 400, "invalid_input", needles);
  ExpectError(Post("/v1/table/t/count_rows/", old_v), 400, "invalid_input", needles);
  ExpectError(Post("/v1/table/t/query/", R"({"k":5,"vector":[],"version":)" + old + "}"), 400,
              "invalid_input", needles);
  ExpectError(Post("/v1/table/t/explain_plan/",
                   R"({"verbose":false,"query":{"k":5,"vector":[],"version":)" + old + "}}"),
              400, "invalid_input", needles);
  ExpectError(Post("/v1/table/t/analyze_plan/", R"({"k":5,"vector":[],"version":)" + old + "}"),
              400, "invalid_input", needles);
  ExpectError(Post("/v1/table/t/index/list/", old_v), 400, "invalid_input", needles);
  ExpectError(Post("/v1/table/t/index/id_idx/stats/", old_v), 400, "invalid_input", needles);
  ExpectError(Post("/v1/table/t/restore/", old_v), 400, "invalid_input", needles);

  // A version newer than the current one stays 404 (the client says "version: N not found").
  const std::string future = std::to_string(v3 + 5);
  ExpectError(Post("/v1/table/t/describe/", R"({"version":)" + future + "}"), 404,
              "table_not_found", {"version " + future, "current version is " + cur});
  ExpectError(Post("/v1/table/t/count_rows/", R"({"version":)" + future + "}"), 404,
              "table_not_found", {"version " + future});
  ExpectError(Post("/v1/table/t/restore/", R"({"version":)" + future + "}"), 404, "table_not_found",
              {"version " + future});

  // The current version and null read.
  const std::string cur_v = R"({"version":)" + cur + "}";
  Answer d = Post("/v1/table/t/describe/", cur_v);
  ASSERT_EQ(d.status, 200) << d.raw;
  EXPECT_EQ(d.body["version"].get<uint64_t>(), v3);
  Answer count = Post("/v1/table/t/count_rows/", cur_v);
  ASSERT_EQ(count.status, 200);
  EXPECT_EQ(count.body.get<int64_t>(), 5);
  Answer idx = Post("/v1/table/t/index/list/", cur_v);
  ASSERT_EQ(idx.status, 200) << idx.raw;
  EXPECT_EQ(idx.body["indexes"][0]["index_name"], "id_idx");
  EXPECT_EQ(Post("/v1/table/t/index/id_idx/stats/", cur_v).status, 200);

  // restore/ of null or the current version: nothing to do, answers the current version.
  for (const std::string& body : {std::string(R"({"version":null})"), cur_v, std::string()}) {
    Answer r = Post("/v1/table/t/restore/", body);
    ASSERT_EQ(r.status, 200) << body << " " << r.raw;
    EXPECT_EQ(r.body["version"].get<uint64_t>(), v3);
  }
  EXPECT_EQ(Version("t"), v3);  // restore made no version
  ExpectError(Post("/v1/table/t/restore/", R"({"version":"x"})"), 400, "invalid_input",
              {"version"});
  ExpectError(Post("/v1/table/missing/restore/", "{}"), 404, "table_not_found", {"missing"});
  ExpectError(Post("/v1/table/missing/version/list/", ""), 404, "table_not_found", {"missing"});

  // Dropping the index is a new version too, and versions survive a restart.
  ASSERT_EQ(Post("/v1/table/t/index/id_idx/drop/", "").status, 200);
  EXPECT_EQ(Version("t"), v3 + 1);
  Restart();
  EXPECT_EQ(Version("t"), v3 + 1);
  Answer after = Post("/v1/table/t/version/list/", "");
  EXPECT_EQ(after.body["versions"][0]["version"].get<uint64_t>(), v3 + 1);
}

TEST_F(VersionRoutesTest, TagsAreStoredInTheManifestAndErrorsNameTheTag) {
  Create("t", 2);
  const uint64_t v1 = Version("t");
  Post("/v1/table/t/insert/", Stream(2, 2), "application/vnd.apache.arrow.stream");
  const uint64_t v2 = Version("t");

  Answer empty = Post("/v1/table/t/tags/list/", "");
  ASSERT_EQ(empty.status, 200);
  EXPECT_EQ(empty.body, json::object());

  const std::string create_v1 = R"({"tag":"v1","version":)" + std::to_string(v1) + "}";
  ASSERT_EQ(Post("/v1/table/t/tags/create/", create_v1).status, 200);
  EXPECT_EQ(Version("t"), v2);  // a tag is not a version
  ExpectError(Post("/v1/table/t/tags/create/", create_v1), 400, "invalid_input",
              {"tag 'v1' already exists"});
  ExpectError(Post("/v1/table/t/tags/create/", R"({"tag":"z","version":0})"), 400, "invalid_input",
              {"tag 'z'", "version must be between 1"});
  ExpectError(
      Post("/v1/table/t/tags/create/", R"({"tag":"z","version":)" + std::to_string(v2 + 1) + "}"),
      400, "invalid_input", {"tag 'z'", "current version " + std::to_string(v2)});
  ExpectError(Post("/v1/table/t/tags/create/", R"({"version":1})"), 400, "invalid_input",
              {"\"tag\" is required"});
  ExpectError(Post("/v1/table/t/tags/create/", R"({"tag":"z"})"), 400, "invalid_input",
              {"\"version\" is required"});
  ExpectError(Post("/v1/table/t/tags/create/", R"({"tag":"","version":1})"), 400, "invalid_input",
              {"tag name"});
  ExpectError(Post("/v1/table/t/tags/create/", R"({"tag":"a\u0007b","version":1})"), 400,
              "invalid_input", {"tag name"});
  ExpectError(Post("/v1/table/t/tags/create/", "[1]"), 400, "invalid_input", {"JSON object"});

  Answer list = Post("/v1/table/t/tags/list/", "");
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(list.body.size(), 1u) << list.raw;
  EXPECT_EQ(list.body["v1"]["version"].get<uint64_t>(), v1);
  EXPECT_GT(list.body["v1"]["manifestSize"].get<int64_t>(), 0);

  Answer tv = Post("/v1/table/t/tags/version/", R"({"tag":"v1"})");
  ASSERT_EQ(tv.status, 200);
  EXPECT_EQ(tv.body, json({{"version", v1}}));
  ExpectError(Post("/v1/table/t/tags/version/", R"({"tag":"nope"})"), 400, "invalid_input",
              {"tag 'nope' does not exist"});

  const std::string update = R"({"tag":"v1","version":)" + std::to_string(v2) + "}";
  ASSERT_EQ(Post("/v1/table/t/tags/update/", update).status, 200);
  ExpectError(Post("/v1/table/t/tags/update/", R"({"tag":"nope","version":1})"), 400,
              "invalid_input", {"tag 'nope' does not exist"});
  EXPECT_EQ(Post("/v1/table/t/tags/version/", R"({"tag":"v1"})").body["version"], v2);
  ASSERT_EQ(Post("/v1/table/t/tags/create/", R"({"tag":"keep","version":1})").status, 200);

  Restart();
  list = Post("/v1/table/t/tags/list/", "");
  ASSERT_EQ(list.body.size(), 2u) << list.raw;
  EXPECT_EQ(list.body["v1"]["version"].get<uint64_t>(), v2);
  EXPECT_EQ(list.body["keep"]["version"].get<uint64_t>(), 1u);
  ASSERT_EQ(Post("/v1/table/t/tags/delete/", R"({"tag":"v1"})").status, 200);
  ExpectError(Post("/v1/table/t/tags/delete/", R"({"tag":"v1"})"), 400, "invalid_input",
              {"tag 'v1' does not exist"});
  list = Post("/v1/table/t/tags/list/", "");
  EXPECT_EQ(list.body.size(), 1u);
  EXPECT_TRUE(list.body.contains("keep"));
  EXPECT_EQ(Version("t"), v2);
  ExpectError(Post("/v1/table/missing/tags/list/", ""), 404, "table_not_found", {"missing"});
}

TEST_F(VersionRoutesTest, StatsCountFragmentsRowsAndIndexes) {
  Create("e", 0);
  Answer empty = Post("/v1/table/e/stats/", "");
  ASSERT_EQ(empty.status, 200) << empty.raw;
  EXPECT_EQ(empty.body["num_rows"], 0);
  EXPECT_EQ(empty.body["total_bytes"], 0);
  EXPECT_EQ(empty.body["fragment_stats"]["num_fragments"], 0);
  EXPECT_EQ(
      empty.body["fragment_stats"]["lengths"],
      json({{"min", 0}, {"max", 0}, {"mean", 0}, {"p25", 0}, {"p50", 0}, {"p75", 0}, {"p99", 0}}));

  Create("t", 10);
  ASSERT_EQ(Post("/v1/table/t/flush/", "{}").status, 200);  // an SSTable of 10 rows
  Post("/v1/table/t/insert/", Stream(10, 3), "application/vnd.apache.arrow.stream");
  ASSERT_EQ(Post("/v1/table/t/delete/", R"({"predicate":"id = 0"})").status, 200);
  ASSERT_EQ(Post("/v1/table/t/create_index/", R"({"column":"id","index_type":"BTREE"})").status,
            200);
  Answer s = Post("/v1/table/t/stats/", "");
  ASSERT_EQ(s.status, 200) << s.raw;
  EXPECT_EQ(s.body["num_rows"], 12);  // live rows
  EXPECT_EQ(s.body["num_indices"], 1);
  EXPECT_GT(s.body["total_bytes"].get<int64_t>(), 0);
  const json& f = s.body["fragment_stats"];
  // The SSTable (10 rows) and the active MemTable (3 rows + 1 tombstone).
  EXPECT_EQ(f["num_fragments"], 2) << s.raw;
  EXPECT_EQ(f["num_small_fragments"], 2);
  EXPECT_EQ(f["lengths"], json({{"min", 4},
                                {"max", 10},
                                {"mean", 7},
                                {"p25", 4},
                                {"p50", 10},
                                {"p75", 10},
                                {"p99", 10}}))
      << s.raw;
  ExpectError(Post("/v1/table/missing/stats/", ""), 404, "table_not_found", {"missing"});
}

TEST_F(VersionRoutesTest, RenameMovesTheTableAndSurvivesRestart) {
  Create("a", 4);
  Create("b", 1);
  ExpectError(Post("/v1/table/a/rename/", R"({"new_table_name":"b"})"), 400, "invalid_input",
              {"table 'b' already exists"});
  ExpectError(Post("/v1/table/missing/rename/", R"({"new_table_name":"c"})"), 404,
              "table_not_found", {"missing"});
  ExpectError(Post("/v1/table/a/rename/", R"({"new_table_name":""})"), 400, "invalid_input",
              {"new table name"});
  ExpectError(Post("/v1/table/a/rename/", R"({"new_table_name":"x\ny"})"), 400, "invalid_input",
              {"new table name"});
  ExpectError(Post("/v1/table/a/rename/", R"({"name":"c"})"), 400, "invalid_input",
              {"\"new_table_name\" is required"});
  ExpectError(Post("/v1/table/a/rename/", R"({"new_table_name":"c","new_namespace":"ns"})"), 400,
              "invalid_input", {"new_namespace"});

  const uint64_t version = Version("a");
  Answer r = Post("/v1/table/a/rename/", R"({"new_table_name":"c","new_namespace":["ns"]})");
  ASSERT_EQ(r.status, 200) << r.raw;
  auto names = client_->Get("/v1/table/");
  ASSERT_TRUE(names);
  EXPECT_EQ(json::parse(names->body)["tables"], json({"b", "ns$c"}));
  ExpectError(Post("/v1/table/a/describe/", ""), 404, "table_not_found", {"'a'"});
  EXPECT_EQ(Version("ns$c"), version);
  EXPECT_EQ(Post("/v1/table/ns$c/count_rows/", "").body, 4);

  ASSERT_EQ(Post("/v1/table/ns$c/rename/", R"({"new_table_name":"d"})").status, 200);
  Restart();
  names = client_->Get("/v1/table/");
  EXPECT_EQ(json::parse(names->body)["tables"], json({"b", "d"}));
  EXPECT_EQ(Post("/v1/table/d/count_rows/", "").body, 4);
  ExpectError(Post("/v1/table/ns$c/count_rows/", ""), 404, "table_not_found", {"ns$c"});
  Answer ins = Post("/v1/table/d/insert/", Stream(4, 1), "application/vnd.apache.arrow.stream");
  ASSERT_EQ(ins.status, 200) << ins.raw;
  EXPECT_GT(ins.body["version"].get<uint64_t>(), version);
}

}  // namespace
}  // namespace strata::server
