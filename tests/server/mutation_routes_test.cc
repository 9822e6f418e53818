// delete/, update/ and merge_insert/ (PROTOCOL.md §5.3) called in-process on a catalog in a
// temporary directory (with and without a declared primary key), every write checked by
// scanning the table afterwards; plus one HTTP round trip per route through the real server.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "arrow/builder.h"
#include "arrow/ipc/writer.h"
#include "server/http_server.h"
#include "server/routes.h"
#include "server/server_context.h"

namespace strata::server {
namespace {

using nlohmann::json;
using strata::testing::TempDir;

arrow::SchemaPtr Schema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("name", arrow::utf8()),
      arrow::field("n", arrow::int64()), arrow::field("price", arrow::float64())});
}

struct Row {
  std::optional<std::string> name;
  std::optional<int64_t> n;
  std::optional<double> price;
  bool operator==(const Row& o) const { return name == o.name && n == o.n && price == o.price; }
};
using RowMap = std::multimap<int64_t, Row>;

std::ostream& operator<<(std::ostream& os, const Row& r) {
  return os << "{" << r.name.value_or("NULL") << ", " << (r.n ? std::to_string(*r.n) : "NULL")
            << ", " << (r.price ? std::to_string(*r.price) : "NULL") << "}";
}

/// Rows with ids `ids`: name "r{id}", n = id, price = id * 1.5.
arrow::RecordBatchPtr Rows(const std::vector<int64_t>& ids, const std::string& prefix = "r",
                           int64_t n_offset = 0) {
  arrow::RecordBatchBuilder b(Schema());
  for (int64_t id : ids) {
    EXPECT_TRUE(b.column(0)->AppendInt(id).ok());
    EXPECT_TRUE(b.column(1)->AppendBytes(prefix + std::to_string(id)).ok());
    EXPECT_TRUE(b.column(2)->AppendInt(id + n_offset).ok());
    EXPECT_TRUE(b.column(3)->AppendDouble(static_cast<double>(id) * 1.5).ok());
  }
  return b.Finish().value();
}

std::vector<int64_t> Ids(int64_t first, int64_t last) {
  std::vector<int64_t> out;
  for (int64_t i = first; i <= last; ++i) out.push_back(i);
  return out;
}

/// The rows Rows(ids) wrote.
RowMap Expected(const std::vector<int64_t>& ids) {
  RowMap out;
  for (int64_t id : ids) {
    out.emplace(id, Row{"r" + std::to_string(id), id, static_cast<double>(id) * 1.5});
  }
  return out;
}

struct Answer {
  int status = 0;
  json body;
};

class MutationRoutesTest : public ::testing::Test {
 protected:
  /// A catalog whose new tables have primary key `pk` (empty: hidden `_rowid`).
  void Open(std::vector<std::string> pk) {
    shard::ShardWriterOptions o;
    o.primary_key = std::move(pk);
    ctx_.catalog = std::move(table::Catalog::Open(dir_.path(), o)).value();
  }
  std::shared_ptr<table::Table> Create(const std::vector<arrow::RecordBatchPtr>& rows) {
    auto t = ctx_.catalog->CreateTable("default", "t", Schema(), rows, table::CreateMode::kCreate);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return *t;
  }
  Answer Call(void (*handler)(ServerContext&, const TableRequest&, httplib::Response&),
              const std::string& action, const std::string& body,
              const std::vector<std::pair<std::string, std::string>>& params = {}) {
    httplib::Request http;
    for (const auto& [k, v] : params) http.params.emplace(k, v);
    TableRequest req;
    req.http = &http;
    req.database = "default";
    req.route.table = "t";
    req.route.action = action;
    req.body = arrow::Buffer::CopyFrom(body.data(), static_cast<int64_t>(body.size()));
    httplib::Response res;
    handler(ctx_, req, res);
    Answer a;
    a.status = res.status;
    a.body = json::parse(res.body, nullptr, false);
    return a;
  }
  Answer Delete(const std::string& predicate) {
    return Call(HandleDelete, "delete", json{{"predicate", predicate}}.dump());
  }
  Answer Update(const json& updates, const json& predicate) {
    return Call(HandleUpdate, "update",
                json{{"updates", updates}, {"predicate", predicate}}.dump());
  }
  Answer Merge(const std::vector<arrow::RecordBatchPtr>& source,
               const std::vector<std::pair<std::string, std::string>>& params) {
    auto stream = arrow::ipc::WriteStream(*Schema(), source, {});
    EXPECT_TRUE(stream.ok());
    return Call(HandleMergeInsert, "merge_insert", *stream, params);
  }
  RowMap Scan() {
    RowMap out;
    auto t = *ctx_.catalog->GetTable("default", "t");
    for (const auto& b : strata::testing::Live(t->Snapshot())) {
      arrow::Array id = b->column(0), name = b->column(1), n = b->column(2), p = b->column(3);
      for (int64_t i = 0; i < b->num_rows(); ++i) {
        Row r;
        if (!name.IsNull(i)) r.name = std::string(name.GetView(i));
        if (!n.IsNull(i)) r.n = n.Value<int64_t>(i);
        if (!p.IsNull(i)) r.price = p.Value<double>(i);
        out.emplace(id.Value<int64_t>(i), r);
      }
    }
    return out;
  }
  static void ExpectError(const Answer& a, const std::string& needle) {
    EXPECT_EQ(a.status, 400) << a.body.dump();
    ASSERT_TRUE(a.body.is_object()) << a.body.dump();
    EXPECT_EQ(a.body["error"], "invalid_input") << a.body.dump();
    EXPECT_NE(a.body["message"].get<std::string>().find(needle), std::string::npos)
        << a.body.dump();
  }

  TempDir dir_;
  ServerContext ctx_;
};

TEST_F(MutationRoutesTest, DeleteWithComplexFilter) {
  Open({});
  auto t = Create({Rows(Ids(0, 9))});
  const uint64_t before = t->version();
  auto a = Delete("(n >= 3 AND n < 7 AND name <> 'r5') OR id IN (9, 42) OR name LIKE 'x%'");
  ASSERT_EQ(a.status, 200) << a.body.dump();
  EXPECT_EQ(a.body["num_deleted_rows"], 4);
  EXPECT_GT(a.body["version"].get<uint64_t>(), before);
  EXPECT_EQ(a.body["version"].get<uint64_t>(), t->version());
  EXPECT_EQ(Scan(), Expected({0, 1, 2, 5, 7, 8}));
  // Nothing matches: no write, same version.
  auto none = Delete("n > 100");
  ASSERT_EQ(none.status, 200);
  EXPECT_EQ(none.body["num_deleted_rows"], 0);
  EXPECT_EQ(none.body["version"], a.body["version"]);
  // A bad filter changes nothing.
  ExpectError(Delete("nope = 1"), "nope");
  ExpectError(Call(HandleDelete, "delete", "{\"predicate\": 3}"), "predicate");
  EXPECT_EQ(Scan(), Expected({0, 1, 2, 5, 7, 8}));
}

TEST_F(MutationRoutesTest, DeleteOnPrimaryKeyTableAcrossAFlush) {
  Open({"id"});
  auto t = Create({Rows(Ids(0, 4))});
  ASSERT_TRUE(t->Flush(shard::Clock::now() + std::chrono::seconds(10)).ok());
  ASSERT_TRUE(t->Insert({Rows({5, 6})}).ok());
  auto a = Delete("id % 2 = 0");
  ASSERT_EQ(a.status, 200) << a.body.dump();
  EXPECT_EQ(a.body["num_deleted_rows"], 4);
  EXPECT_EQ(Scan(), Expected({1, 3, 5}));
}

TEST_F(MutationRoutesTest, UpdateExpressionsAndCasts) {
  Open({});
  auto t = Create({Rows(Ids(0, 5))});
  // Every expression reads the values before the update (price = old n).
  auto a = Update(json::array({json::array({"n", "n * 10 + 1"}),
                               json::array({"name", "upper(name)"}), json::array({"price", "n"})}),
                  "id < 3");
  ASSERT_EQ(a.status, 200) << a.body.dump();
  EXPECT_EQ(a.body["rows_updated"], 3);
  EXPECT_EQ(a.body["version"].get<uint64_t>(), t->version());
  RowMap want = Expected({3, 4, 5});
  want.emplace(0, Row{"R0", 1, 0.0});
  want.emplace(1, Row{"R1", 11, 1.0});
  want.emplace(2, Row{"R2", 21, 2.0});
  EXPECT_EQ(Scan(), want);
  // String literal as the Node client sends values, and a cast from a string.
  auto b =
      Update(json::array({json::array({"name", "'it''s'"}), json::array({"n", "'77'"})}), "id = 4");
  ASSERT_EQ(b.status, 200) << b.body.dump();
  EXPECT_EQ(b.body["rows_updated"], 1);
  want.erase(4);
  want.emplace(4, Row{"it's", 77, 6.0});
  EXPECT_EQ(Scan(), want);
  // No predicate: every row; NULL into a nullable column.
  auto c = Update(json::array({json::array({"price", "NULL"})}), nullptr);
  ASSERT_EQ(c.status, 200) << c.body.dump();
  EXPECT_EQ(c.body["rows_updated"], 6);
  for (auto& [id, r] : want) r.price.reset();
  EXPECT_EQ(Scan(), want);
  EXPECT_EQ(t->Snapshot().num_rows, 6);  // replaced, not added
}

TEST_F(MutationRoutesTest, UpdateRefusalsChangeNothing) {
  Open({"id"});
  Create({Rows(Ids(0, 3))});
  const RowMap before = Scan();
  ExpectError(Update(json::array({json::array({"id", "id + 100"})}), nullptr),
              "column 'id' is part of the primary key");
  ExpectError(Update(json::array({json::array({"_rowid", "1"})}), nullptr), "'_rowid' is hidden");
  ExpectError(Update(json::array({json::array({"nope", "1"})}), nullptr), "unknown column 'nope'");
  ExpectError(Update(json::array({json::array({"n", "nope + 1"})}), nullptr),
              "update expression for 'n'");
  ExpectError(Update(json::array({json::array({"n", "'abc'"})}), nullptr), "abc");
  ExpectError(Update(json::array({json::array({"n", "1"}), json::array({"n", "2"})}), nullptr),
              "listed twice");
  ExpectError(Call(HandleUpdate, "update", "{\"updates\": {\"n\": \"1\"}}"), "updates");
  EXPECT_EQ(Scan(), before);
  // On a primary-key table an update replaces the row of its key.
  auto a = Update(json::array({json::array({"n", "n + 100"})}), "id = 2");
  ASSERT_EQ(a.status, 200) << a.body.dump();
  RowMap want = Expected({0, 1, 3});
  want.emplace(2, Row{"r2", 102, 3.0});
  EXPECT_EQ(Scan(), want);
}

const std::vector<std::pair<std::string, std::string>> kUpsert = {
    {"on", "id"},
    {"when_matched_update_all", "true"},
    {"when_not_matched_insert_all", "true"},
    {"when_not_matched_by_source_delete", "false"}};

void ExpectCounts(const Answer& a, int64_t inserted, int64_t updated, int64_t deleted,
                  int64_t rows) {
  ASSERT_EQ(a.status, 200) << a.body.dump();
  EXPECT_EQ(a.body["num_inserted_rows"], inserted) << a.body.dump();
  EXPECT_EQ(a.body["num_updated_rows"], updated) << a.body.dump();
  EXPECT_EQ(a.body["num_deleted_rows"], deleted) << a.body.dump();
  EXPECT_EQ(a.body["num_attempts"], 1);
  EXPECT_EQ(a.body["num_rows"], rows);
}

/// Target ids 1..5 (r{id}); source ids 4..7 named s{id} with n = id + 100.
RowMap UpsertResult(const std::vector<int64_t>& kept, const std::vector<int64_t>& from_source) {
  RowMap want = Expected(kept);
  for (int64_t id : from_source) {
    want.emplace(id, Row{"s" + std::to_string(id), id + 100, static_cast<double>(id) * 1.5});
  }
  return want;
}

TEST_F(MutationRoutesTest, MergeUpsertOnPrimaryKey) {
  Open({"id"});
  auto t = Create({Rows(Ids(1, 5))});
  auto a = Merge({Rows(Ids(4, 7), "s", 100)}, kUpsert);
  ExpectCounts(a, 2, 2, 0, 4);
  EXPECT_EQ(a.body["version"].get<uint64_t>(), t->version());
  EXPECT_EQ(Scan(), UpsertResult({1, 2, 3}, {4, 5, 6, 7}));
}

TEST_F(MutationRoutesTest, MergeUpsertWithoutPrimaryKeyKeepsRowIds) {
  Open({});
  auto t = Create({Rows(Ids(1, 5))});
  ASSERT_TRUE(t->Flush(shard::Clock::now() + std::chrono::seconds(10)).ok());
  auto a = Merge({Rows(Ids(4, 7), "s", 100)}, kUpsert);
  ExpectCounts(a, 2, 2, 0, 4);
  EXPECT_EQ(Scan(), UpsertResult({1, 2, 3}, {4, 5, 6, 7}));
  EXPECT_EQ(t->Snapshot().num_rows, 7);
  // Again (rows 4..7 now matched): all updated, nothing inserted, no duplicate.
  auto b = Merge({Rows(Ids(4, 7), "s", 100)}, kUpsert);
  ExpectCounts(b, 0, 4, 0, 4);
  EXPECT_EQ(Scan(), UpsertResult({1, 2, 3}, {4, 5, 6, 7}));
}

TEST_F(MutationRoutesTest, MergeInsertOnly) {
  Open({"id"});
  Create({Rows(Ids(1, 5))});
  auto a = Merge({Rows(Ids(4, 7), "s", 100)}, {{"on", "id"},
                                               {"when_matched_update_all", "false"},
                                               {"when_not_matched_insert_all", "true"}});
  ExpectCounts(a, 2, 0, 0, 4);
  EXPECT_EQ(Scan(), UpsertResult({1, 2, 3, 4, 5}, {6, 7}));
}

TEST_F(MutationRoutesTest, MergeDeleteNotMatchedBySource) {
  for (bool pk : {true, false}) {
    SCOPED_TRACE(pk ? "primary key" : "no primary key");
    Open(pk ? std::vector<std::string>{"id"} : std::vector<std::string>{});
    Create({Rows(Ids(1, 5))});
    auto params = kUpsert;
    params.back().second = "true";
    ExpectCounts(Merge({Rows(Ids(4, 7), "s", 100)}, params), 2, 2, 3, 4);
    EXPECT_EQ(Scan(), UpsertResult({}, {4, 5, 6, 7}));
    ASSERT_TRUE(ctx_.catalog->DropTable("default", "t").ok());
  }
}

TEST_F(MutationRoutesTest, MergeFilters) {
  Open({"id"});
  Create({Rows(Ids(1, 5))});
  // Update only where the source has a larger n: source 4 (n 3 < 4), 5 (n 105 > 5).
  auto src = Rows({4, 5, 6}, "s", 100);
  arrow::RecordBatchBuilder b(Schema());
  for (auto [id, n] : std::vector<std::pair<int64_t, int64_t>>{{4, 3}, {5, 105}, {6, 106}}) {
    ASSERT_TRUE(b.column(0)->AppendInt(id).ok());
    ASSERT_TRUE(b.column(1)->AppendBytes("s" + std::to_string(id)).ok());
    ASSERT_TRUE(b.column(2)->AppendInt(n).ok());
    ASSERT_TRUE(b.column(3)->AppendDouble(static_cast<double>(id) * 1.5).ok());
  }
  auto a = Merge({*b.Finish()}, {{"on", "id"},
                                 {"when_matched_update_all", "true"},
                                 {"when_matched_update_all_filt", "target.n < source.n"},
                                 {"when_not_matched_insert_all", "false"},
                                 {"when_not_matched_by_source_delete", "true"},
                                 {"when_not_matched_by_source_delete_filt", "n >= 2"}});
  ExpectCounts(a, 0, 1, 2, 3);  // updated 5; deleted 2, 3 (not 1: n < 2); 6 not inserted
  RowMap want = Expected({1, 4});
  want.emplace(5, Row{"s5", 105, 7.5});
  EXPECT_EQ(Scan(), want);
  // target.-qualified delete filter.
  auto c = Merge({Rows({4})}, {{"on", "id"},
                               {"when_not_matched_by_source_delete", "true"},
                               {"when_not_matched_by_source_delete_filt", "target.name = 's5'"}});
  ExpectCounts(c, 0, 0, 1, 1);
  EXPECT_EQ(Scan(), Expected({1, 4}));
  // Bad filters: 400, nothing written.
  ExpectError(Merge({Rows({4})}, {{"on", "id"},
                                  {"when_matched_update_all", "true"},
                                  {"when_matched_update_all_filt", "n > 1"}}),
              "when_matched_update_all_filt");
  EXPECT_EQ(Scan(), Expected({1, 4}));
}

TEST_F(MutationRoutesTest, MergeOnNonKeyColumn) {
  Open({"id"});
  Create({Rows(Ids(1, 3))});
  // Match on name: source r2 carries id 20 -> the target row of id 2 is replaced by id 20.
  arrow::RecordBatchBuilder b(Schema());
  for (auto [id, name] : std::vector<std::pair<int64_t, std::string>>{{20, "r2"}, {30, "new"}}) {
    ASSERT_TRUE(b.column(0)->AppendInt(id).ok());
    ASSERT_TRUE(b.column(1)->AppendBytes(name).ok());
    ASSERT_TRUE(b.column(2)->AppendInt(id).ok());
    ASSERT_TRUE(b.column(3)->AppendNull().ok());
  }
  auto a = Merge({*b.Finish()}, {{"on", "name"},
                                 {"when_matched_update_all", "true"},
                                 {"when_not_matched_insert_all", "true"}});
  ExpectCounts(a, 1, 1, 0, 2);
  RowMap want = Expected({1, 3});
  want.emplace(20, Row{"r2", 20, std::nullopt});
  want.emplace(30, Row{"new", 30, std::nullopt});
  EXPECT_EQ(Scan(), want);
}

TEST_F(MutationRoutesTest, MergeRefusals) {
  Open({});
  Create({Rows(Ids(1, 3))});
  const RowMap before = Scan();
  ExpectError(Merge({Rows({2, 5, 2})}, kUpsert), "Ambiguous merge insert");
  ExpectError(Merge({Rows({2})}, {{"when_matched_update_all", "true"}}), "'on'");
  ExpectError(Merge({Rows({2})}, {{"on", "nope"}}), "'nope'");
  ExpectError(Merge({Rows({2})}, {{"on", "id"}, {"when_matched_update_all", "yes"}}),
              "when_matched_update_all");
  ExpectError(Call(HandleMergeInsert, "merge_insert", "", {{"on", "id"}}), "empty");
  {
    // Rows without the `on` column would all be inserted with a null key: refused.
    auto only_n = std::make_shared<arrow::Schema>(
        std::vector<arrow::FieldPtr>{arrow::field("n", arrow::int64())});
    arrow::RecordBatchBuilder b(only_n);
    ASSERT_TRUE(b.column(0)->AppendInt(9).ok());
    auto batch = b.Finish();
    ASSERT_TRUE(batch.ok());
    auto stream = arrow::ipc::WriteStream(*only_n, {*batch}, {});
    ASSERT_TRUE(stream.ok());
    ExpectError(Call(HandleMergeInsert, "merge_insert", *stream, kUpsert),
                "no column 'id' (the `on` column)");
  }
  EXPECT_EQ(Scan(), before);
}

// update/ is a read-modify-write: 8 threads x 100 `n = n + 1` on one row -> exactly 800.
TEST_F(MutationRoutesTest, ConcurrentUpdatesAreNeverLost) {
  Open({});
  Create({Rows({0, 1})});
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int th = 0; th < 8; ++th) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        if (Update(json::array({json::array({"n", "n + 1"})}), "id = 0").status != 200) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  RowMap want = Expected({1});
  want.emplace(0, Row{"r0", 800, 0.0});
  EXPECT_EQ(Scan(), want);
}

// The routes are registered: one HTTP round trip each through the real server.
TEST(MutationRoutesHttp, RoutesAnswer) {
  TempDir dir;
  ServerOptions o;
  o.data_dir = dir.path();
  o.host = "127.0.0.1";
  o.port = 0;
  o.threads = 2;
  auto server = std::move(HttpServer::Start(o)).value();
  httplib::Client client("127.0.0.1", server->port());
  auto stream = *arrow::ipc::WriteStream(*Schema(), {Rows(Ids(1, 5))}, {});
  auto created = client.Post("/v1/table/t/create/", stream, "application/vnd.apache.arrow.stream");
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 200) << created->body;
  auto up = client.Post("/v1/table/t/update/",
                        R"({"updates":[["name","'x'"]],"predicate":"id = 1"})", "application/json");
  ASSERT_TRUE(up);
  ASSERT_EQ(up->status, 200) << up->body;
  EXPECT_EQ(json::parse(up->body)["rows_updated"], 1);
  auto del = client.Post("/v1/table/t/delete/", R"({"predicate":"id >= 4"})", "application/json");
  ASSERT_TRUE(del);
  ASSERT_EQ(del->status, 200) << del->body;
  EXPECT_EQ(json::parse(del->body)["num_deleted_rows"], 2);
  auto src = *arrow::ipc::WriteStream(*Schema(), {Rows({3, 9})}, {});
  auto merged = client.Post(
      "/v1/table/t/merge_insert/"
      "?on=id&when_matched_update_all=true&when_not_matched_insert_all=true",
      src, "application/vnd.apache.arrow.stream");
  ASSERT_TRUE(merged);
  ASSERT_EQ(merged->status, 200) << merged->body;
  json m = json::parse(merged->body);
  EXPECT_EQ(m["num_updated_rows"], 1);
  EXPECT_EQ(m["num_inserted_rows"], 1);
  auto count =
      client.Post("/v1/table/t/count_rows/", R"({"predicate":"name = 'x'"})", "application/json");
  ASSERT_TRUE(count);
  EXPECT_EQ(count->body, "1");
}

}  // namespace
}  // namespace strata::server
