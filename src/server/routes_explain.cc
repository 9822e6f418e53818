// explain_plan/ and analyze_plan/ (PROTOCOL.md §5.1): a JSON string describing how a query
// runs on the table's current snapshot: the query, then one line per source (SSTables oldest
// first, frozen MemTables, the active MemTable) naming the index it used or the exact scan.
// Strata decides per source at run time (an index may be complete in one tier and still
// building in another), so both routes run the query on the snapshot; analyze_plan/ adds the
// rows returned and the elapsed time.
#include <chrono>

#include <nlohmann/json.hpp>

#include "common/json_guard.h"
#include "server/http_errors.h"
#include "server/query_runner.h"
#include "server/routes.h"
#include "server/server_metrics.h"
#include "server/table_helpers.h"
#include "server/write_limits.h"

namespace strata::server {

namespace {

// The plan text: header line, query line, per-source lines indented.
std::string PlanText(const std::string& table, const table::TableSnapshot& snap,
                     const QueryRequest& req, const query::QueryResult& result) {
  std::string out = "Strata plan for table '" + table + "' at version " +
                    std::to_string(snap.version) + " (" + std::to_string(snap.num_rows) +
                    " live rows)\n  " + DescribeQuery(req, snap.schema.get()) + "\n";
  for (const std::string& line : result.plan) out += "    " + line + "\n";
  return out;
}

void Explain(ServerContext& ctx, const TableRequest& req, httplib::Response& res,
             std::string_view query_body, bool analyze) {
  Result<QueryRequest> parsed = ParseQueryRequest(query_body);
  if (!parsed.ok()) return SendError(res, parsed.status());
  Status limits = CheckQueryLimits(ctx.options.limits, *parsed);
  if (!limits.ok()) return SendError(res, limits);
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  ScopedQueryTimer timer(*ctx.metrics, req.database, req.route.table, "explain");
  // A restarted table's first vector queries wait (bounded) for its base index checkpoints.
  if (const auto* v = std::get_if<query::VectorSearchOptions>(&parsed->plan);
      v != nullptr && !v->bypass_vector_index) {
    (*t)->AwaitIndexLoads(v->column);
  }
  const table::TableSnapshot snap = (*t)->Snapshot();
  Status st = CheckVersion(snap, parsed->version, req.route.table);
  if (!st.ok()) return SendError(res, st);
  const auto start = std::chrono::steady_clock::now();
  Result<query::QueryResult> result = RunQuery(snap, *parsed);
  if (!result.ok()) return SendError(res, result.status());
  std::string text = PlanText(req.route.table, snap, *parsed, *result);
  if (analyze) {
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    char elapsed[64];
    std::snprintf(elapsed, sizeof elapsed, "%.3f", ms);
    text += "  output_rows=" + std::to_string(result->num_rows) + " elapsed_ms=" + elapsed + "\n";
  }
  SendJson(res, nlohmann::json(text).dump());
}

}  // namespace

void HandleExplainPlan(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  // {"verbose": bool, "query": {query body}}.
  const std::string_view body = req.body_view();
  Status depth = CheckJsonDepth(body, "explain_plan");
  if (!depth.ok()) return SendError(res, depth);
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("query") || !j["query"].is_object()) {
    return SendError(res, Status::Invalid("explain_plan: body must be {\"verbose\": bool, "
                                          "\"query\": {query body}}"));
  }
  if (j.contains("verbose") && !j["verbose"].is_null() && !j["verbose"].is_boolean()) {
    return SendError(res, Status::Invalid("explain_plan: verbose must be true or false"));
  }
  Explain(ctx, req, res, j["query"].dump(), /*analyze=*/false);
}

void HandleAnalyzePlan(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Explain(ctx, req, res, req.body_view(), /*analyze=*/true);
}

}  // namespace strata::server
