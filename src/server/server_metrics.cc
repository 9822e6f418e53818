#include "server/server_metrics.h"

#include <variant>

#include "server/query_request.h"
#include "server/request_context.h"

namespace strata::server {

const std::vector<double>& LatencyBuckets() {
  static const std::vector<double> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                               0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  return kBuckets;
}

ServerMetrics::ServerMetrics()
    : http_requests(registry.AddCounter("strata_http_requests_total",
                                        "HTTP requests answered, by route action and status class.",
                                        {"action", "status"})),
      http_duration(registry.AddHistogram(
          "strata_http_request_duration_seconds",
          "Time from request headers parsed to response ready, by route action.", {"action"},
          LatencyBuckets())),
      queries(registry.AddCounter("strata_queries_total",
                                  "Queries run on an existing table, by kind (vector, fts, scan "
                                  "from query/; count_rows; explain from explain_plan/ and "
                                  "analyze_plan/), including those that failed.",
                                  {"database", "table", "kind"})),
      query_duration(
          registry.AddHistogram("strata_query_duration_seconds",
                                "Query latency from table lookup to result encoded, by kind.",
                                {"database", "table", "kind"}, LatencyBuckets())) {}

namespace {

// Table actions of PROTOCOL.md §7 and the Strata extensions of §0: the only action labels.
bool IsKnownTableAction(std::string_view action) {
  static const char* const kActions[] = {"create",
                                         "describe",
                                         "insert",
                                         "query",
                                         "count_rows",
                                         "delete",
                                         "drop",
                                         "update",
                                         "merge_insert",
                                         "create_index",
                                         "index/list",
                                         "index/{n}/stats",
                                         "index/{n}/drop",
                                         "index/{n}/prewarm",
                                         "add_columns",
                                         "alter_columns",
                                         "drop_columns",
                                         "update_field_metadata",
                                         "version/list",
                                         "restore",
                                         "tags/list",
                                         "tags/version",
                                         "tags/create",
                                         "tags/update",
                                         "tags/delete",
                                         "rename",
                                         "stats",
                                         "clone",
                                         "explain_plan",
                                         "analyze_plan",
                                         "page_cache/prewarm",
                                         "multipart_write/create",
                                         "multipart_write/complete",
                                         "multipart_write/abort",
                                         "branches/list",
                                         "branches/create",
                                         "branches/delete",
                                         "flush",
                                         "compact",
                                         "mem_wal/describe",
                                         "set_lsm_write_spec",
                                         "unset_lsm_write_spec"};
  for (const char* a : kActions) {
    if (action == a) return true;
  }
  return false;
}

}  // namespace

std::string HttpActionLabel(const httplib::Request& req) {
  std::string_view path = RawPath(req);
  if (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (path == "/healthz") return "healthz";
  if (path == "/readyz") return "readyz";
  if (path == "/metrics") return "metrics";
  if (path == "/v1/table" || path == "/v1/namespace/$/table/list" ||
      path == "/v1/namespace/%24/table/list") {
    return "list_tables";
  }
  if (path.substr(0, 10) == "/v1/table/") {
    Result<TableRoute> route = ParseTableRoute(RawPath(req));
    if (route.ok() && IsKnownTableAction(route->action)) return route->action;
  }
  return "other";
}

std::string StatusClass(int status) {
  if (status < 100 || status > 599) return "other";
  return std::to_string(status / 100) + "xx";
}

void ObserveHttpRequest(ServerMetrics& m, const httplib::Request& req, int status, double seconds) {
  const std::string action = HttpActionLabel(req);
  m.http_requests.With({action, StatusClass(status)}).Inc();
  m.http_duration.With({action}).Observe(seconds);
}

std::string_view QueryKind(const QueryRequest& req) {
  if (std::holds_alternative<query::VectorSearchOptions>(req.plan)) return "vector";
  if (std::holds_alternative<query::FtsSearchOptions>(req.plan)) return "fts";
  return "scan";
}

ScopedQueryTimer::ScopedQueryTimer(ServerMetrics& m, const std::string& database,
                                   const std::string& table, std::string_view kind)
    : count_(m.queries.With({database, table, std::string(kind)})),
      latency_(m.query_duration.With({database, table, std::string(kind)})),
      start_(std::chrono::steady_clock::now()) {}

ScopedQueryTimer::~ScopedQueryTimer() {
  count_.Inc();
  latency_.Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
}

}  // namespace strata::server
