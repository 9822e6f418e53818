// Database- and table-level routes: list, create, drop, describe (PROTOCOL.md §4, §5.1).
#include <algorithm>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "arrow/json/rows_json.h"
#include "arrow/json/schema_json.h"
#include "common/json_guard.h"
#include "server/http_errors.h"
#include "server/query_request.h"
#include "server/routes.h"
#include "server/table_helpers.h"
#include "server/write_limits.h"
#include "table/primary_key.h"

namespace strata::server {

using nlohmann::json;

void SendJson(httplib::Response& res, const std::string& body) {
  res.status = 200;
  res.body = body;
  res.set_header("Content-Type", "application/json");
}

void HandleListTables(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  Result<std::string> db = DatabaseOf(req);
  if (!db.ok()) return SendError(res, db.status());
  int64_t limit = -1;
  if (req.has_param("limit")) {
    const std::string s = req.get_param_value("limit");
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || v < 0) {
      return SendError(res, Status::Invalid("limit must be an integer >= 0, got '" + s + "'"));
    }
    limit = v;
  }
  const std::string page_token =
      req.has_param("page_token") ? req.get_param_value("page_token") : "";
  Result<std::vector<std::string>> names = ctx.catalog->ListTables(*db);
  if (!names.ok()) return SendError(res, names.status());
  json tables = json::array();
  std::string last;
  bool more = false;
  for (const std::string& name : *names) {  // sorted ascending by the catalog
    if (!page_token.empty() && name <= page_token) continue;
    if (limit >= 0 && static_cast<int64_t>(tables.size()) >= limit) {
      more = true;
      break;
    }
    tables.push_back(name);
    last = name;
  }
  json body = {{"tables", std::move(tables)}};
  if (more && !last.empty()) body["page_token"] = last;
  SendJson(res, body.dump(-1, ' ', false, json::error_handler_t::replace));
}

namespace {

constexpr const char* kJsonCreateShape =
    "{\"schema\": {\"fields\": [{\"name\": ..., \"type\": {\"type\": ...}, \"nullable\": "
    "...}, ...]}, \"rows\": [{column: value, ...}, ...]} (\"rows\" optional; the schema as "
    "describe/ answers it)";

// The JSON form of create/: content-type application/json, or a body whose first
// non-blank byte is '{' (curl -d sends form content-type; an Arrow IPC stream starts with
// 0xFF bytes).
bool IsJsonCreate(const TableRequest& req) {
  if (req.http->get_header_value("Content-Type").rfind("application/json", 0) == 0) return true;
  const std::string_view body = req.body_view();
  const size_t at = body.find_first_not_of(" \t\r\n");
  return at != std::string_view::npos && body[at] == '{';
}

Result<DecodedUpload> DecodeJsonCreate(std::string_view body) {
  STRATA_RETURN_IF_ERROR(CheckJsonDepth(body, "create"));
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) {
    return Status::Invalid(std::string("create: the body is not valid JSON; a JSON create is ") +
                           kJsonCreateShape);
  }
  if (!j.is_object()) {
    return Status::Invalid(std::string("create: a JSON body must be an object ") +
                           kJsonCreateShape + ", got " +
                           (j.is_array() ? "an array (rows need a schema)" : j.type_name()));
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() != "schema" && it.key() != "rows") {
      return Status::Invalid("create: unknown key '" + it.key() +
                             "' in the JSON body; a JSON create is " + kJsonCreateShape);
    }
  }
  auto schema_it = j.find("schema");
  if (schema_it == j.end() || !schema_it->is_object()) {
    return Status::Invalid(std::string("create: the JSON body needs \"schema\" (an object); a "
                                       "JSON create is ") +
                           kJsonCreateShape);
  }
  DecodedUpload out;
  Result<arrow::SchemaPtr> schema = arrow::json::SchemaFromJson(*schema_it);
  if (!schema.ok()) return schema.status().WithContext("create: schema");
  out.schema = std::move(*schema);
  auto rows_it = j.find("rows");
  if (rows_it != j.end() && !rows_it->is_null()) {
    if (!rows_it->is_array()) {
      return Status::Invalid(std::string("create: \"rows\" must be an array of row objects, got ") +
                             rows_it->type_name());
    }
    Result<arrow::RecordBatchPtr> batch = arrow::json::RowsFromJson(*rows_it, out.schema);
    if (!batch.ok()) return batch.status().WithContext("create: rows");
    if ((*batch)->num_rows() > 0) {
      out.num_rows = (*batch)->num_rows();
      out.batches.push_back(std::move(*batch));
    }
  }
  return out;
}

}  // namespace

void HandleCreate(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  table::CreateMode mode = table::CreateMode::kCreate;
  if (req.http->has_param("mode")) {
    const std::string m = req.http->get_param_value("mode");
    if (m == "create") {
      mode = table::CreateMode::kCreate;
    } else if (m == "overwrite") {
      mode = table::CreateMode::kOverwrite;
    } else if (m == "exist_ok") {
      mode = table::CreateMode::kExistOk;
    } else {
      return SendError(
          res, Status::Invalid("mode must be create, overwrite or exist_ok, got '" + m + "'"));
    }
  }
  Result<DecodedUpload> upload =
      IsJsonCreate(req) ? DecodeJsonCreate(req.body_view()) : DecodeArrowUpload(req.body, "create");
  if (!upload.ok()) return SendError(res, upload.status());
  // ?primary_key=a,b declares the key by writing the Lance field metadata
  // (table/primary_key.h); the table layer derives the key from the schema.
  if (req.http->has_param("primary_key")) {
    Result<std::vector<std::string>> key =
        table::ParsePrimaryKeyList(req.http->get_param_value("primary_key"));
    if (!key.ok()) return SendError(res, key.status().WithContext("create"));
    Result<arrow::SchemaPtr> declared = table::DeclarePrimaryKey(upload->schema, *key);
    if (!declared.ok()) return SendError(res, declared.status().WithContext("create"));
    upload->schema = std::move(*declared);
  }
  {
    Result<std::vector<std::string>> key = table::PrimaryKeyOf(*upload->schema);
    if (!key.ok()) return SendError(res, key.status().WithContext("create"));
  }
  // ?lsm_write_spec=JSON (the set_lsm_write_spec/ body, URL-encoded): checked against the
  // new schema and key before anything is created, committed with the create.
  std::optional<table::LsmWriteSpec> lsm_spec;
  if (req.http->has_param("lsm_write_spec")) {
    Result<table::LsmWriteSpec> parsed =
        table::ParseLsmWriteSpec(req.http->get_param_value("lsm_write_spec"));
    if (!parsed.ok()) return SendError(res, parsed.status().WithContext("create: lsm_write_spec"));
    Result<std::vector<std::string>> key = table::PrimaryKeyOf(*upload->schema);
    Status fits = key.status();
    if (fits.ok()) {
      // A new table has no index definitions: maintained_indexes must be empty.
      fits = table::ValidateLsmWriteSpec(*parsed, {upload->schema.get(), *key, {}});
    }
    if (!fits.ok()) return SendLsmSpecError(res, fits.WithContext("create: lsm_write_spec"));
    lsm_spec = std::move(*parsed);
  }
  Status limits = CheckWrite(ctx.options.limits, upload->schema.get(), upload->batches, "create");
  if (!limits.ok()) return SendError(res, limits);
  // A new table gets the spec in its first manifest (one commit).
  auto created = ctx.catalog->CreateTable(req.database, req.route.table, upload->schema,
                                          upload->batches, mode, lsm_spec);
  if (!created.ok()) {
    if (lsm_spec) return SendLsmSpecError(res, created.status());
    return SendError(res, created.status());
  }
  SendJson(res, "{}");
}

void HandleDrop(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Status st = ctx.catalog->DropTable(req.database, req.route.table);
  // LanceDB Cloud answers 200 for a missing table too (PROTOCOL.md §2.1, §7 rule 7).
  if (!st.ok() && !st.IsNotFound()) return SendError(res, st);
  SendJson(res, "{}");
}

void HandleDescribe(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<std::optional<uint64_t>> version = ParseDescribeRequest(req.body_view());
  if (!version.ok()) return SendError(res, version.status());
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  const table::TableSnapshot snap = (*t)->Snapshot();
  Status st = CheckVersion(snap, *version, req.route.table);
  if (!st.ok()) return SendError(res, st);
  json body = {{"version", snap.version}, {"schema", arrow::json::SchemaToJson(*snap.schema)}};
  SendJson(res, body.dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace strata::server
