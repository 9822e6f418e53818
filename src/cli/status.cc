#include "cli/status.h"

#include <cstdio>
#include <memory>

#include "cli/client_flags.h"
#include "cli/exit_codes.h"
#include "cli/output.h"

namespace strata::cli {

namespace {

struct StatusOptions {
  ClientOptions client;
  bool json = false;
};

long long Int(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<long long>() : 0;
}

Result<std::vector<std::string>> ListTables(RestClient& client) {
  std::vector<std::string> names;
  std::string token;
  for (;;) {
    std::string path = "/v1/table/?limit=1000";
    if (!token.empty()) path += "&page_token=" + EncodePathSegment(token);
    STRATA_ASSIGN_OR_RETURN(nlohmann::json page, client.GetJson(path));
    const auto tables = page.value("tables", nlohmann::json::array());
    for (const auto& t : tables) {
      if (t.is_string()) names.push_back(t.get<std::string>());
    }
    if (tables.size() < 1000) break;
    token = names.back();
  }
  return names;
}

int RunStatus(const StatusOptions& o) {
  RestClient client(o.client);
  auto health = client.GetRaw("/healthz");
  if (!health.ok()) return ReportError("status", health.status());
  const bool healthy = health->status == 200;
  auto ready = client.GetRaw("/readyz");
  nlohmann::json readyz = nullptr;
  if (ready.ok()) {
    readyz = nlohmann::json::parse(ready->body, nullptr, false);
    if (readyz.is_discarded()) readyz = nullptr;
  }
  auto names = ListTables(client);
  if (!names.ok()) return ReportError("status", names.status());
  nlohmann::json tables = nlohmann::json::array();
  for (const auto& name : *names) {
    nlohmann::json t = {{"name", name}};
    auto rows = client.PostTableJson(name, "count_rows/", nlohmann::json::object());
    t["rows"] = rows.ok() ? *rows : nlohmann::json(nullptr);
    auto mw = client.PostTableJson(name, "mem_wal/describe/", nullptr);
    t["mem_wal"] = mw.ok() ? *mw : nlohmann::json(nullptr);
    if (!rows.ok() || !mw.ok()) {
      t["error"] = (!rows.ok() ? rows.status() : mw.status()).message();
    }
    tables.push_back(std::move(t));
  }
  if (o.json) {
    nlohmann::json out = {{"url", o.client.url},
                          {"database", o.client.database},
                          {"healthy", healthy},
                          {"ready", readyz},
                          {"tables", tables}};
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return healthy ? kExitOk : kExitServer;
  }
  std::string readiness = "readiness unknown";
  if (readyz.is_object()) {
    if (readyz.value("ready", false)) {
      readiness = "ready";
    } else {
      readiness = "NOT READY";
      const auto reasons = readyz.value("reasons", nlohmann::json::array());
      if (!reasons.empty()) readiness += " " + reasons.dump();
    }
  }
  std::printf("server %s: %s, %s\n", o.client.url.c_str(),
              healthy ? "healthy" : ("UNHEALTHY (" + std::to_string(health->status) + ")").c_str(),
              readiness.c_str());
  std::printf("database %s: %zu tables\n", o.client.database.c_str(), names->size());
  if (tables.empty()) return healthy ? kExitOk : kExitServer;
  TextTable out;
  out.header = {"TABLE",  "ROWS",        "SHARDS",  "STATE",        "GENERATION", "ACTIVE ROWS",
                "FROZEN", "L0 SSTABLES", "L0 ROWS", "BASE VERSION", "BASE ROWS"};
  for (const auto& t : tables) {
    const auto& mw = t["mem_wal"];
    if (!mw.is_object()) {
      out.rows.push_back({t["name"].get<std::string>(), "?", "?", t.value("error", "error")});
      continue;
    }
    const auto shards = mw.value("shards", nlohmann::json::array());
    long long gen = 0, active = 0, frozen = 0, l0 = 0, l0_rows = 0;
    std::string state;
    for (const auto& s : shards) {
      gen = std::max(gen, Int(s, "current_generation"));
      active += Int(s.value("active", nlohmann::json::object()), "rows");
      frozen += static_cast<long long>(s.value("frozen", nlohmann::json::array()).size());
      for (const auto& sst : s.value("sstables", nlohmann::json::array())) {
        ++l0;
        l0_rows += Int(sst, "rows");
      }
      const std::string st = s.value("state", "?");
      if (state.find(st) == std::string::npos) state += (state.empty() ? "" : ",") + st;
    }
    const bool has_base = mw.contains("base") && mw["base"].is_object();
    out.rows.push_back({t["name"].get<std::string>(), t["rows"].is_null() ? "?" : t["rows"].dump(),
                        std::to_string(shards.size()), state, std::to_string(gen),
                        std::to_string(active), std::to_string(frozen), std::to_string(l0),
                        std::to_string(l0_rows),
                        has_base ? std::to_string(Int(mw["base"], "version")) : "-",
                        has_base ? std::to_string(Int(mw["base"], "rows")) : "-"});
  }
  std::printf("%s", out.Render().c_str());
  return healthy ? kExitOk : kExitServer;
}

}  // namespace

void AddStatusCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<StatusOptions>();
  auto* sub = app.add_subcommand(
      "status", "Server health and readiness; per table rows, shards, generations, L0 backlog");
  AddClientFlags(sub, &o->client);
  sub->add_flag("--json", o->json, "Print one JSON object");
  sub->callback([o, exit_code] { *exit_code = RunStatus(*o); });
}

}  // namespace strata::cli
