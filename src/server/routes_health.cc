// GET /readyz (issue 19): readiness for reads and writes, next to the liveness check
// GET /healthz (which answers "ok" while the process serves HTTP at all).
#include <nlohmann/json.hpp>

#include "server/http_errors.h"
#include "server/routes.h"

namespace strata::server {

void HandleReadyz(ServerContext& ctx, const httplib::Request& req, httplib::Response& res,
                  bool detailed) {
  bool reads = true;
  bool writes = true;
  nlohmann::json reasons = nlohmann::json::array();
  if (ctx.shutting_down.load()) {
    reads = writes = false;
    reasons.push_back({{"state", "shutting_down"}});
  }
  if (auto disk = ctx.catalog->FreeSpace(); disk && disk->below) {
    writes = false;
    reasons.push_back({{"state", "below_free_space_floor"},
                       {"free_bytes", disk->free_bytes},
                       {"min_free_bytes", disk->floor_bytes},
                       {"since_ms", disk->since_ms}});
  }
  for (const auto& f : ctx.catalog->OpenFailures()) {
    // Neither reads nor writes of that table work until it opens (retried in the background).
    reads = writes = false;
    nlohmann::json r = {{"state", "open_failed"}, {"since_ms", f.since_ms}};
    if (detailed) {
      r["database"] = f.database;
      r["table"] = f.name;
      r["reason"] = f.status.ToString();
    }
    reasons.push_back(std::move(r));
  }
  for (const auto& open : ctx.catalog->OpenTables()) {
    const table::WriterRecoveryInfo recovery = open.table->RecoveryInfo();
    for (const auto& d : open.table->DescribeShards()) {
      if (d.state == "open" || d.state == "closed") continue;
      writes = false;
      // A fenced server's reads are stale: another server writes the shard.
      if (d.state == "fenced") reads = false;
      nlohmann::json r = {{"state", d.state}, {"since_ms", d.state_age_ms}};
      if (detailed) {
        r["database"] = open.database;
        r["table"] = open.name;
        r["shard_id"] = d.shard_id;
        r["reason"] = d.state_reason;
        if (d.state == "poisoned") {
          r["recovery_attempts"] = recovery.attempts;
          r["next_attempt_ms"] = recovery.next_attempt_ms;
          r["last_error"] = recovery.last_error;
        }
      }
      reasons.push_back(std::move(r));
    }
  }
  const std::string for_what = req.get_param_value("for");
  if (!for_what.empty() && for_what != "reads" && for_what != "writes") {
    return SendError(res, Status::Invalid("readyz: query parameter 'for' must be 'reads' or "
                                          "'writes' (or absent: both), got '" +
                                          for_what + "'"));
  }
  const bool reads_only = for_what == "reads";
  const bool ready = reads_only ? reads : (reads && writes);
  nlohmann::json out = {
      {"ready", ready}, {"reads", reads}, {"writes", writes}, {"reasons", reasons}};
  res.status = ready ? 200 : 503;
  res.set_content(out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json");
}

}  // namespace strata::server
