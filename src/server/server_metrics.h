// The live metrics of one running server (GET /metrics, PROTOCOL.md §0): HTTP requests by
// route action and status class with their durations, and queries by kind per table with
// their latencies. The storage-engine series (per-table ShardWriter counters and histograms),
// table gauges and process gauges are read at scrape time by HandleMetrics
// (routes_metrics.cc), not stored here.
// Label cardinality is bounded: HTTP actions come from a fixed list (anything else is
// "other"), and query series are created only for tables that exist when the query runs
// (series of a dropped table remain until restart).
// Thread-safety: every member may be used from many threads at once (metrics.h locks).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include <httplib.h>

#include "server/metrics.h"

namespace strata::server {

struct ServerContext;
struct QueryRequest;

/// Upper bounds (seconds) of the request and query latency histograms: 0.5 ms to 10 s.
const std::vector<double>& LatencyBuckets();

struct ServerMetrics {
  ServerMetrics();

  metrics::Registry registry;
  /// strata_http_requests_total{action, status}: status is "2xx".."5xx".
  metrics::CounterFamily& http_requests;
  /// strata_http_request_duration_seconds{action}: from headers parsed to response ready.
  metrics::HistogramFamily& http_duration;
  /// strata_queries_total{database, table, kind}.
  metrics::CounterFamily& queries;
  /// strata_query_duration_seconds{database, table, kind}.
  metrics::HistogramFamily& query_duration;
  /// When the server started (for strata_process_uptime_seconds).
  const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

/// The bounded action label of a request: "healthz", "metrics", "list_tables", a table action
/// of PROTOCOL.md §7 ("insert", "query", "index/{n}/stats", ...), or "other".
std::string HttpActionLabel(const httplib::Request& req);

/// "1xx".."5xx" for an HTTP status (anything else: "other").
std::string StatusClass(int status);

/// Counts one answered request and observes its duration.
void ObserveHttpRequest(ServerMetrics& m, const httplib::Request& req, int status, double seconds);

/// The kind label of a query/ body: "vector", "fts" or "scan". (Hybrid searches of the
/// LanceDB client arrive as one vector and one fts query and are counted as such.)
std::string_view QueryKind(const QueryRequest& req);

/// Counts one query of `kind` on database/table and observes its latency when destroyed
/// (so every return path of a handler is covered). Not copyable.
class ScopedQueryTimer {
 public:
  ScopedQueryTimer(ServerMetrics& m, const std::string& database, const std::string& table,
                   std::string_view kind);
  ~ScopedQueryTimer();
  ScopedQueryTimer(const ScopedQueryTimer&) = delete;
  ScopedQueryTimer& operator=(const ScopedQueryTimer&) = delete;

 private:
  metrics::Counter& count_;
  metrics::Histogram& latency_;
  const std::chrono::steady_clock::time_point start_;
};

/// GET /metrics: the registry's families, then the storage-engine series of every open table
/// (ShardWriter counters reset when a table is reopened or overwritten: a normal Prometheus
/// counter reset), table row and version gauges, and process gauges, as Prometheus text
/// (Content-Type text/plain; version=0.0.4). Defined in routes_metrics.cc.
void HandleMetrics(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);

}  // namespace strata::server
