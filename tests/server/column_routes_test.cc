// add_columns/, alter_columns/, drop_columns/ (PROTOCOL.md §5.3) called in-process on a catalog
// in a temporary directory, every change checked by reading the table's schema and values
// afterwards; every refusal is 400 naming the field and changes nothing; plus one HTTP round
// trip per route through the real server.
#include <gtest/gtest.h>
#include <httplib.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>

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
      arrow::field("n", arrow::int64()), arrow::field("price", arrow::float64()),
      arrow::field("vec", arrow::fixed_size_list(arrow::field("item", arrow::float32()), 2))});
}

/// Rows 1..count: name "r{id}" (null for id 2), n = id * 10 (null for id 3), price = id * 1.5,
/// vec = [id, -id].
arrow::RecordBatchPtr Rows(int64_t count) {
  std::vector<std::optional<int64_t>> ids, ns;
  std::vector<std::optional<std::string>> names;
  arrow::RecordBatchBuilder prices(std::make_shared<arrow::Schema>(
      std::vector<arrow::FieldPtr>{arrow::field("price", arrow::float64())}));
  std::vector<float> vec;
  for (int64_t id = 1; id <= count; ++id) {
    ids.push_back(id);
    names.push_back(id == 2 ? std::nullopt : std::optional<std::string>("r" + std::to_string(id)));
    ns.push_back(id == 3 ? std::nullopt : std::optional<int64_t>(id * 10));
    EXPECT_TRUE(prices.column(0)->AppendDouble(static_cast<double>(id) * 1.5).ok());
    vec.push_back(static_cast<float>(id));
    vec.push_back(static_cast<float>(-id));
  }
  auto price = prices.Finish().value()->column_data(0);
  return std::make_shared<arrow::RecordBatch>(
      Schema(), count,
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids), arrow::MakeUtf8Array(names),
                                       arrow::MakeInt64Array(ns), price,
                                       arrow::MakeVectorArray(vec, 2)});
}

struct Answer {
  int status = 0;
  json body;
};

class ColumnRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override { Open({}); }
  void Open(std::vector<std::string> pk) {
    shard::ShardWriterOptions o;
    o.primary_key = std::move(pk);
    ctx_.catalog = std::move(table::Catalog::Open(dir_.path(), o)).value();
    auto t =
        ctx_.catalog->CreateTable("default", "t", Schema(), {Rows(5)}, table::CreateMode::kCreate);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    table_ = *t;
  }
  Answer Call(void (*handler)(ServerContext&, const TableRequest&, httplib::Response&),
              const std::string& action, const json& body, const std::string& table = "t") {
    httplib::Request http;
    TableRequest req;
    req.http = &http;
    req.database = "default";
    req.route.table = table;
    req.route.action = action;
    const std::string text = body.dump();
    req.body = arrow::Buffer::CopyFrom(text.data(), static_cast<int64_t>(text.size()));
    httplib::Response res;
    handler(ctx_, req, res);
    return {res.status, json::parse(res.body, nullptr, false)};
  }
  Answer Add(const json& cols) {
    return Call(HandleAddColumns, "add_columns", {{"new_columns", cols}});
  }
  Answer Alter(const json& alts) {
    return Call(HandleAlterColumns, "alter_columns", {{"alterations", alts}});
  }
  Answer Drop(const json& cols) {
    return Call(HandleDropColumns, "drop_columns", {{"columns", cols}});
  }

  /// Values of column `name` by id (as JSON-ish strings: "null", ints, doubles, strings).
  std::map<int64_t, std::string> Column(const std::string& name) {
    std::map<int64_t, std::string> out;
    auto snap = table_->Snapshot();
    const int idx = snap.schema->GetFieldIndex(name);
    const int id_idx = snap.schema->GetFieldIndex("id");
    EXPECT_GE(idx, 0) << name;
    if (idx < 0) return out;
    for (const auto& b : strata::testing::Live(snap)) {
      arrow::Array a = b->column(idx);
      for (int64_t i = 0; i < b->num_rows(); ++i) {
        const int64_t id = b->column(id_idx).Value<int64_t>(i);
        std::string v;
        if (a.IsNull(i)) {
          v = "null";
        } else {
          switch (a.type_id()) {
            case arrow::TypeId::kInt64:
              v = std::to_string(a.Value<int64_t>(i));
              break;
            case arrow::TypeId::kInt32:
              v = std::to_string(a.Value<int32_t>(i));
              break;
            case arrow::TypeId::kFloat64:
              v = std::to_string(a.Value<double>(i));
              break;
            case arrow::TypeId::kBool:
              v = a.BoolValue(i) ? "true" : "false";
              break;
            case arrow::TypeId::kUtf8:
              v = std::string(a.GetView(i));
              break;
            default:
              v = "?";
          }
        }
        out[id] = v;
      }
    }
    return out;
  }
  std::vector<std::string> Names() {
    std::vector<std::string> out;
    for (const auto& f : table_->schema()->fields()) out.push_back(f->name);
    return out;
  }
  /// Expects a 400 invalid_input whose message contains `needle`, and no change.
  void ExpectRefused(const Answer& a, const std::string& needle) {
    EXPECT_EQ(a.status, 400) << a.body.dump();
    EXPECT_EQ(a.body.value("error", ""), "invalid_input") << a.body.dump();
    EXPECT_NE(a.body.value("message", "").find(needle), std::string::npos)
        << "message: " << a.body.value("message", "") << "\nexpected to contain: " << needle;
  }

  TempDir dir_;
  ServerContext ctx_;
  std::shared_ptr<table::Table> table_;
};

TEST_F(ColumnRoutesTest, AddColumnsEvaluatesSqlPerRow) {
  const uint64_t before = table_->version();
  Answer a = Add(json::array({{{"name", "d"}, {"expression", "price * 2"}},
                              {{"name", "n_plus"}, {"expression", "n + id"}},
                              {{"name", "big"}, {"expression", "n > 20"}},
                              {{"name", "upper_name"}, {"expression", "upper(name)"}},
                              {{"name", "nothing"}, {"expression", "CAST(NULL AS bigint)"}}}));
  ASSERT_EQ(a.status, 200) << a.body.dump();
  ASSERT_TRUE(a.body["version"].is_number_unsigned());
  EXPECT_GT(a.body["version"].get<uint64_t>(), before);
  EXPECT_EQ(a.body["version"].get<uint64_t>(), table_->version());
  EXPECT_EQ(Names(), (std::vector<std::string>{"id", "name", "n", "price", "vec", "d", "n_plus",
                                               "big", "upper_name", "nothing"}));
  auto schema = table_->schema();
  EXPECT_EQ(schema->field(5)->type->id(), arrow::TypeId::kFloat64);
  EXPECT_TRUE(schema->field(5)->nullable);
  EXPECT_EQ(schema->field(6)->type->id(), arrow::TypeId::kInt64);
  EXPECT_EQ(schema->field(7)->type->id(), arrow::TypeId::kBool);
  EXPECT_EQ(schema->field(9)->type->id(), arrow::TypeId::kInt64);
  EXPECT_EQ(
      Column("d"),
      (std::map<int64_t, std::string>{
          {1, "3.000000"}, {2, "6.000000"}, {3, "9.000000"}, {4, "12.000000"}, {5, "15.000000"}}));
  EXPECT_EQ(Column("n_plus"), (std::map<int64_t, std::string>{
                                  {1, "11"}, {2, "22"}, {3, "null"}, {4, "44"}, {5, "55"}}));
  EXPECT_EQ(Column("big"), (std::map<int64_t, std::string>{
                               {1, "false"}, {2, "false"}, {3, "null"}, {4, "true"}, {5, "true"}}));
  EXPECT_EQ(Column("upper_name"), (std::map<int64_t, std::string>{
                                      {1, "R1"}, {2, "null"}, {3, "R3"}, {4, "R4"}, {5, "R5"}}));
  EXPECT_EQ(Column("nothing").at(4), "null");
  EXPECT_EQ(Column("vec").size(), 5u);  // the vector column is carried along
}

TEST_F(ColumnRoutesTest, AddColumnsRefusals) {
  const uint64_t version = table_->version();
  ExpectRefused(Add(json::array({{{"name", "z"}, {"expression", "NULL"}}})), "CAST(NULL AS");
  ExpectRefused(Add(json::array({{{"name", "price"}, {"expression", "1"}}})),
                "new_columns[0].name: column 'price' already exists");
  ExpectRefused(Add(json::array(
                    {{{"name", "a"}, {"expression", "1"}}, {{"name", "a"}, {"expression", "2"}}})),
                "new_columns[1].name: column 'a' is listed twice");
  ExpectRefused(Add(json::array({{{"name", ""}, {"expression", "1"}}})),
                "new_columns[0].name is empty");
  ExpectRefused(Add(json::array({{{"name", "_distance"}, {"expression", "1"}}})), "reserved");
  ExpectRefused(Add(json::array({{{"name", "_RowId"}, {"expression", "1"}}})), "reserved");
  ExpectRefused(Add(json::array({{{"name", "x"}, {"expression", "price +* 2"}}})),
                "new_columns[0].expression");
  ExpectRefused(Add(json::array({{{"name", "x"}, {"expression", "nope + 1"}}})), "nope");
  ExpectRefused(Add(json::array({{{"name", "x"}}})), "new_columns[0].expression must be");
  ExpectRefused(Add(json::array()), "'new_columns' is empty");
  ExpectRefused(Call(HandleAddColumns, "add_columns", {{"columns", 1}}),
                "add_columns: body must be");
  // A runtime failure (integer overflow) also changes nothing.
  ExpectRefused(Add(json::array({{{"name", "x"}, {"expression", "n * 9223372036854775807"}}})),
                "overflow");
  EXPECT_EQ(table_->version(), version);
  EXPECT_EQ(Names().size(), 5u);
  Answer missing =
      Call(HandleAddColumns, "add_columns",
           {{"new_columns", json::array({{{"name", "x"}, {"expression", "1"}}})}}, "nope");
  EXPECT_EQ(missing.status, 404) << missing.body.dump();
}

TEST_F(ColumnRoutesTest, AlterRenameNullableAndType) {
  index::IndexSpec spec;
  spec.name = "price_idx";
  spec.column = "price";
  spec.kind = index::IndexKind::kBTree;
  spec.requested_type = "BTREE";
  ASSERT_TRUE(table_->CreateIndex(spec).ok());
  Answer a = Alter(json::array({{{"path", "price"}, {"rename", "cost"}},
                                {{"path", "id"}, {"nullable", true}},
                                {{"path", "n"}, {"data_type", {{"type", "int32"}}}},
                                {{"path", "price"}, {"rename", "again"}}}));
  ExpectRefused(a, "alterations[3].path: column 'price' is altered twice");
  a = Alter(json::array({{{"path", "price"}, {"rename", "cost"}},
                         {{"path", "id"}, {"nullable", true}},
                         {{"path", "n"}, {"data_type", {{"type", "int32"}}}}}));
  ASSERT_EQ(a.status, 200) << a.body.dump();
  EXPECT_EQ(a.body["version"].get<uint64_t>(), table_->version());
  EXPECT_EQ(Names(), (std::vector<std::string>{"id", "name", "n", "cost", "vec"}));
  auto schema = table_->schema();
  EXPECT_TRUE(schema->field(0)->nullable);
  EXPECT_EQ(schema->field(2)->type->id(), arrow::TypeId::kInt32);
  EXPECT_EQ(Column("n"), (std::map<int64_t, std::string>{
                             {1, "10"}, {2, "20"}, {3, "null"}, {4, "40"}, {5, "50"}}));
  EXPECT_EQ(Column("cost").at(2), "3.000000");
  auto indexes = table_->ListIndexes();
  ASSERT_EQ(indexes.size(), 1u);
  EXPECT_EQ(indexes[0].spec.name, "price_idx");
  EXPECT_EQ(indexes[0].spec.column, "cost");  // the index follows the rename

  // nullable false: refused while the column holds nulls, fine when it holds none.
  ExpectRefused(Alter(json::array({{{"path", "name"}, {"nullable", false}}})),
                "column 'name' holds 1 nulls");
  a = Alter(json::array({{{"path", "cost"}, {"nullable", false}}}));
  ASSERT_EQ(a.status, 200) << a.body.dump();
  EXPECT_FALSE(table_->schema()->field(3)->nullable);
  // A later insert of a null there is refused by the new schema.
  arrow::RecordBatchBuilder nb(table_->schema());
  ASSERT_TRUE(nb.column(0)->AppendInt(9).ok());
  ASSERT_TRUE(nb.column(1)->AppendNull().ok());
  ASSERT_TRUE(nb.column(2)->AppendInt(1).ok());
  ASSERT_TRUE(nb.column(3)->AppendNull().ok());
  ASSERT_TRUE(nb.column(4)->AppendNull().ok());
  EXPECT_FALSE(table_->Insert({nb.Finish().value()}).ok());

  // Types: to string works; a lossy float -> int is refused; 3.0 -> int works after update.
  a = Alter(json::array({{{"path", "n"}, {"data_type", {{"type", "string"}}}}}));
  ASSERT_EQ(a.status, 200) << a.body.dump();
  EXPECT_EQ(Column("n").at(4), "40");
  const uint64_t version = table_->version();
  ExpectRefused(Alter(json::array({{{"path", "cost"}, {"data_type", {{"type", "int64"}}}}})),
                "value 1.5 does not convert to int64 without loss");
  ExpectRefused(Alter(json::array({{{"path", "name"}, {"data_type", {{"type", "int64"}}}}})),
                "alter_columns");
  ExpectRefused(Alter(json::array({{{"path", "vec"},
                                    {"data_type",
                                     {{"type", "fixed_size_list"},
                                      {"length", 3},
                                      {"fields", json::array({{{"name", "item"},
                                                               {"type", {{"type", "float"}}},
                                                               {"nullable", true}}})}}}}})),
                "vector dimension of 'vec' from 2 to 3");
  ExpectRefused(Alter(json::array({{{"path", "n"}, {"data_type", {{"type", "float32"}}}}})),
                "alterations[0].data_type");
  ExpectRefused(Alter(json::array({{{"path", "name"}, {"rename", "cost"}}})),
                "alterations[0].rename: column 'cost' already exists");
  ExpectRefused(Alter(json::array({{{"path", "name"}, {"rename", "_score"}}})), "reserved");
  ExpectRefused(Alter(json::array({{{"path", "missing"}, {"rename", "x"}}})),
                "alterations[0].path: unknown column 'missing'");
  ExpectRefused(Alter(json::array({{{"path", "name"}}})), "changes nothing");
  // The BTREE index on cost cannot hold a string column? It can (strings are key-able), so
  // int -> string keeps it; a type an index cannot hold is refused naming the index.
  EXPECT_EQ(table_->version(), version);
}

TEST_F(ColumnRoutesTest, PrimaryKeyFollowsRenameAndCannotBeDropped) {
  TempDir other;
  shard::ShardWriterOptions o;
  o.primary_key = {"id"};
  ctx_.catalog = std::move(table::Catalog::Open(other.path(), o)).value();
  table_ =
      *ctx_.catalog->CreateTable("default", "t", Schema(), {Rows(5)}, table::CreateMode::kCreate);
  ExpectRefused(Drop(json::array({"id"})), "columns[0]: column 'id' is part of the primary key");
  ExpectRefused(Alter(json::array({{{"path", "id"}, {"data_type", {{"type", "int32"}}}}})),
                "primary key");
  Answer a = Alter(json::array({{{"path", "id"}, {"rename", "key"}}}));
  ASSERT_EQ(a.status, 200) << a.body.dump();
  // Still keyed on the renamed column: inserting key 2 again replaces the row.
  arrow::RecordBatchBuilder b(table_->schema());
  ASSERT_TRUE(b.column(0)->AppendInt(2).ok());
  ASSERT_TRUE(b.column(1)->AppendBytes("again").ok());
  ASSERT_TRUE(b.column(2)->AppendInt(7).ok());
  ASSERT_TRUE(b.column(3)->AppendDouble(0.5).ok());
  ASSERT_TRUE(b.column(4)->AppendNull().ok());
  ASSERT_TRUE(table_->Insert({b.Finish().value()}).ok());
  auto snap = table_->Snapshot();
  EXPECT_EQ(snap.num_rows, 5);
  EXPECT_EQ(snap.key_columns, std::vector<std::string>{"key"});
  ExpectRefused(Drop(json::array({"key"})), "primary key");
}

TEST_F(ColumnRoutesTest, DropColumns) {
  index::IndexSpec spec;
  spec.name = "n_idx";
  spec.column = "n";
  spec.kind = index::IndexKind::kBTree;
  spec.requested_type = "BTREE";
  ASSERT_TRUE(table_->CreateIndex(spec).ok());
  const uint64_t version = table_->version();
  ExpectRefused(Drop(json::array({"nope"})), "columns[0]: unknown column 'nope'");
  ExpectRefused(Drop(json::array({"n", "n"})), "columns[1]: column 'n' is listed twice");
  ExpectRefused(Drop(json::array({"id", "name", "n", "price", "vec"})), "every column");
  ExpectRefused(Drop(json::array({1})), "columns[0] must be");
  ExpectRefused(Drop(json::array()), "'columns' is empty");
  EXPECT_EQ(table_->version(), version);
  Answer a = Drop(json::array({"n", "vec"}));
  ASSERT_EQ(a.status, 200) << a.body.dump();
  EXPECT_GT(a.body["version"].get<uint64_t>(), version);
  EXPECT_EQ(Names(), (std::vector<std::string>{"id", "name", "price"}));
  EXPECT_TRUE(table_->ListIndexes().empty());  // the index on n went with it
  EXPECT_EQ(Column("name"), (std::map<int64_t, std::string>{
                                {1, "r1"}, {2, "null"}, {3, "r3"}, {4, "r4"}, {5, "r5"}}));
}

// The routes are registered: add, alter, drop through the real server; 404 for a missing table.
TEST(ColumnRoutesHttp, RoutesAnswer) {
  TempDir dir;
  ServerOptions o;
  o.data_dir = dir.path();
  o.host = "127.0.0.1";
  o.port = 0;
  o.threads = 2;
  auto server = std::move(HttpServer::Start(o)).value();
  httplib::Client client("127.0.0.1", server->port());
  auto stream = *arrow::ipc::WriteStream(*Schema(), {Rows(4)}, {});
  auto created = client.Post("/v1/table/t/create/", stream, "application/vnd.apache.arrow.stream");
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 200) << created->body;
  auto add =
      client.Post("/v1/table/t/add_columns/",
                  R"({"new_columns":[{"name":"d","expression":"price * 2"}]})", "application/json");
  ASSERT_TRUE(add);
  ASSERT_EQ(add->status, 200) << add->body;
  const uint64_t v1 = json::parse(add->body)["version"];
  auto count =
      client.Post("/v1/table/t/count_rows/", R"({"predicate":"d = 12"})", "application/json");
  ASSERT_TRUE(count);
  EXPECT_EQ(count->body, "1");  // id 4: price 6.0
  auto alter = client.Post("/v1/table/t/alter_columns/",
                           R"({"alterations":[{"path":"d","rename":"dd"}]})", "application/json");
  ASSERT_TRUE(alter);
  ASSERT_EQ(alter->status, 200) << alter->body;
  const uint64_t v2 = json::parse(alter->body)["version"];
  EXPECT_GT(v2, v1);
  auto described = client.Post("/v1/table/t/describe/", "{}", "application/json");
  ASSERT_TRUE(described);
  EXPECT_NE(described->body.find("\"dd\""), std::string::npos) << described->body;
  auto drop = client.Post("/v1/table/t/drop_columns/", R"({"columns":["dd"]})", "application/json");
  ASSERT_TRUE(drop);
  ASSERT_EQ(drop->status, 200) << drop->body;
  EXPECT_GT(json::parse(drop->body)["version"].get<uint64_t>(), v2);
  described = client.Post("/v1/table/t/describe/", "{}", "application/json");
  EXPECT_EQ(described->body.find("\"dd\""), std::string::npos) << described->body;
  auto missing =
      client.Post("/v1/table/nope/drop_columns/", R"({"columns":["x"]})", "application/json");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404) << missing->body;
  auto bad = client.Post("/v1/table/t/drop_columns/", R"({"columns":["zz"]})", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400) << bad->body;
}

}  // namespace
}  // namespace strata::server
