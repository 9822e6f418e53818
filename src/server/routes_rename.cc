// rename/ (PROTOCOL.md §4): POST /v1/table/{from}/rename/ with
//   {"new_table_name": "b", "new_namespace"?: ["ns1", "ns2"]}
// The new table id is the namespace and the name joined with '$' ("ns1$ns2$b"), as the
// client names namespaced tables. Catalog::RenameTable moves the table atomically.
// 200 {} on success; 404 table_not_found when {from} does not exist; 400 invalid_input for a
// malformed body, an invalid new name, or an existing target ("already exists").
#include <nlohmann/json.hpp>

#include "server/http_errors.h"
#include "server/routes.h"

namespace strata::server {

void HandleRename(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  using nlohmann::json;
  const std::string_view body = req.body_view();
  json j = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return SendError(res, Status::Invalid("rename/: the body must be a JSON object "
                                          "{\"new_table_name\": string, \"new_namespace\"?: "
                                          "[string]}"));
  }
  auto name = j.find("new_table_name");
  if (name == j.end() || !name->is_string()) {
    return SendError(
        res, Status::Invalid("rename/: \"new_table_name\" is required and must be a string"));
  }
  std::string target;
  auto ns = j.find("new_namespace");
  if (ns != j.end() && !ns->is_null()) {
    if (!ns->is_array()) {
      return SendError(res, Status::Invalid("rename/: \"new_namespace\" must be an array of "
                                            "strings"));
    }
    for (const json& part : *ns) {
      if (!part.is_string() || part.get<std::string>().empty()) {
        return SendError(res, Status::Invalid("rename/: \"new_namespace\" entries must be "
                                              "non-empty strings"));
      }
      target += part.get<std::string>() + "$";
    }
  }
  target += name->get<std::string>();
  Status st = ctx.catalog->RenameTable(req.database, req.route.table, target);
  if (!st.ok()) return SendError(res, st);
  SendJson(res, "{}");
}

}  // namespace strata::server
