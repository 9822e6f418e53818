// Tag routes (PROTOCOL.md §5.1/§5.3) on top of Table's tag API (tags live in the table
// manifest; changing one does not change the table version):
//   tags/list/     (no body)                   a bare map {"tag":{"version":N,"manifestSize":B}}
//   tags/version/  {"tag":"v1"}                {"version":N}
//   tags/create/   {"tag":"v1","version":N}    200 {}
//   tags/update/   {"tag":"v1","version":N}    200 {}
//   tags/delete/   {"tag":"v1"}                200 {}
// Every tag error is 400 invalid_input naming the tag (an unknown tag is not 404: the client
// would report the table as missing); an existing tag on create says "already exists"; a
// version outside [1, current] names both.
#include <nlohmann/json.hpp>

#include "server/http_errors.h"
#include "server/routes.h"

namespace strata::server {

namespace {

using nlohmann::json;

struct TagRequest {
  std::string tag;
  uint64_t version = 0;
};

// Parses {"tag": string, "version": u64} (version only when `with_version`); other keys (such
// as "branch") are ignored.
Result<TagRequest> ParseTagRequest(std::string_view body, const std::string& route,
                                   bool with_version) {
  json j = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Invalid(route + ": the body must be a JSON object {\"tag\": string" +
                           (with_version ? ", \"version\": integer}" : "}"));
  }
  TagRequest out;
  auto tag = j.find("tag");
  if (tag == j.end() || !tag->is_string()) {
    return Status::Invalid(route + ": \"tag\" is required and must be a string");
  }
  out.tag = tag->get<std::string>();
  if (with_version) {
    auto v = j.find("version");
    if (v == j.end() || !v->is_number_integer()) {
      return Status::Invalid(route + ": \"version\" is required and must be an integer >= 1");
    }
    if (v->is_number_unsigned()) {
      out.version = v->get<uint64_t>();
    } else {
      const int64_t s = v->get<int64_t>();
      if (s < 1) {
        return Status::Invalid(route + ": \"version\" must be an integer >= 1, got " +
                               std::to_string(s));
      }
      out.version = static_cast<uint64_t>(s);
    }
  }
  return out;
}

void HandleTagChange(ServerContext& ctx, const TableRequest& req, httplib::Response& res,
                     const char* action) {
  const std::string route = std::string(action) + "/";
  const bool with_version = std::string(action) != "tags/delete";
  Result<TagRequest> parsed = ParseTagRequest(req.body_view(), route, with_version);
  if (!parsed.ok()) return SendError(res, parsed.status());
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  Status st;
  if (route == "tags/create/") {
    st = (*t)->CreateTag(parsed->tag, parsed->version);
  } else if (route == "tags/update/") {
    st = (*t)->UpdateTag(parsed->tag, parsed->version);
  } else {
    st = (*t)->DeleteTag(parsed->tag);
  }
  if (!st.ok()) return SendError(res, st);
  SendJson(res, "{}");
}

}  // namespace

void HandleListTags(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  auto tags = (*t)->ListTags();
  if (!tags.ok()) return SendError(res, tags.status());
  json out = json::object();
  for (const auto& [name, info] : *tags) {
    out[name] = {{"version", info.version}, {"manifestSize", info.manifest_size}};
  }
  SendJson(res, out.dump(-1, ' ', false, json::error_handler_t::replace));
}

void HandleTagVersion(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<TagRequest> parsed = ParseTagRequest(req.body_view(), "tags/version/", false);
  if (!parsed.ok()) return SendError(res, parsed.status());
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  auto tags = (*t)->ListTags();
  if (!tags.ok()) return SendError(res, tags.status());
  auto it = tags->find(parsed->tag);
  if (it == tags->end()) {
    return SendError(res, Status::Invalid("tags/version/: tag '" + parsed->tag +
                                          "' does not exist on table '" + req.route.table + "'"));
  }
  SendJson(res, json{{"version", it->second.version}}.dump());
}

void HandleCreateTag(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  HandleTagChange(ctx, req, res, "tags/create");
}
void HandleUpdateTag(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  HandleTagChange(ctx, req, res, "tags/update");
}
void HandleDeleteTag(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  HandleTagChange(ctx, req, res, "tags/delete");
}

}  // namespace strata::server
