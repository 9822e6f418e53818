// Version routes (PROTOCOL.md §5.1/§5.3). Strata keeps only the current version readable:
//   version/list/  (no body)           {"versions":[{"version":N, "timestamp":"RFC3339 Z",
//                                      "metadata":{}}]}: the current version only, stamped with
//                                      its commit time (table::VersionInfo).
//   restore/       {"version":N|null}  null or the current version: 200 {"version":current}
//                                      (nothing to restore; the client then checks out the
//                                      latest); older: 400 "time travel is not supported yet";
//                                      newer: 404 (CheckVersion).
#include <chrono>
#include <cstdio>
#include <ctime>

#include <nlohmann/json.hpp>

#include "server/http_errors.h"
#include "server/query_request.h"
#include "server/routes.h"
#include "server/table_helpers.h"

namespace strata::server {

namespace {

using nlohmann::json;

// "YYYY-MM-DDTHH:MM:SS.ffffffZ" (RFC 3339, UTC) of `micros` since the UNIX epoch.
std::string Rfc3339Micros(int64_t micros) {
  int64_t secs = micros / 1000000;
  int64_t frac = micros % 1000000;
  if (frac < 0) {
    frac += 1000000;
    secs -= 1;
  }
  const std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(frac));
  return buf;
}

}  // namespace

void HandleListVersions(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  const table::VersionInfo v = (*t)->CurrentVersion();
  json entry = {{"version", v.version},
                {"timestamp", Rfc3339Micros(v.timestamp_micros)},
                {"metadata", json::object()}};
  SendJson(res, json{{"versions", json::array({entry})}}.dump());
}

void HandleRestore(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<std::optional<uint64_t>> version = ParseDescribeRequest(req.body_view());
  if (!version.ok()) return SendError(res, version.status().WithContext("restore"));
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  const uint64_t current = (*t)->version();
  Status st = CheckVersion(current, *version, req.route.table);
  if (!st.ok()) return SendError(res, st.WithContext("restore"));
  SendJson(res, json{{"version", current}}.dump());
}

}  // namespace strata::server
