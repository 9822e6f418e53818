#include "server/router.h"

#include <chrono>
#include <exception>
#include <memory>
#include <string>

#include <spdlog/spdlog.h>

#include "common/json_guard.h"
#include "server/api_keys.h"
#include "server/body_reader.h"
#include "server/console.h"
#include "server/http_errors.h"
#include "server/request_dedupe.h"
#include "server/request_log.h"
#include "server/routes.h"
#include "server/server_metrics.h"
#include "table/table_name.h"

namespace strata::server {

namespace {

// Start of the request the current worker thread is serving (set once its headers are parsed;
// one worker serves one request at a time), for the latency in the request log.
thread_local std::chrono::steady_clock::time_point t_request_start;
// Request body bytes read for the current request (for the request log).
thread_local uint64_t t_bytes_in = 0;

double ElapsedMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                   t_request_start)
      .count();
}

/// LanceDB routes that later issues implement (PROTOCOL.md §7 rows 8-13): answered with 400
/// "not supported yet" rather than 404, which the client would report as TableNotFound.
bool IsLaterIssueRoute(const std::string& action) {
  static const char* const kActions[] = {"update_field_metadata",
                                         "clone",
                                         "page_cache/prewarm",
                                         "multipart_write/create",
                                         "multipart_write/complete",
                                         "multipart_write/abort",
                                         "branches/list",
                                         "branches/create",
                                         "branches/delete"};
  for (const char* a : kActions) {
    if (action == a) return true;
  }
  return false;
}

// Actions whose body is JSON (insert only with content-type application/json; create and
// insert otherwise carry Arrow IPC).
bool HasJsonBody(const std::string& action, const httplib::Request& http) {
  if (action == "insert") {
    return http.get_header_value("Content-Type").rfind("application/json", 0) == 0;
  }
  return action == "describe" || action == "count_rows" || action == "query" ||
         action == "delete" || action == "update" || action == "flush" || action == "compact" ||
         action == "mem_wal/describe" || action == "create_index" || action == "index/list" ||
         action == "index/{n}/stats" || action == "explain_plan" || action == "analyze_plan" ||
         action == "add_columns" || action == "alter_columns" || action == "drop_columns" ||
         action == "restore" || action == "tags/version" || action == "tags/create" ||
         action == "tags/update" || action == "tags/delete" || action == "rename" ||
         action == "set_lsm_write_spec";
}

// A Content-Length header value: decimal digits only, at most `max_body` (RFC 9110 §8.6).
Status CheckContentLength(const std::string& value, int64_t max_body) {
  bool digits = !value.empty() && value.size() <= 19;
  for (char c : value) digits = digits && c >= '0' && c <= '9';
  if (!digits) {
    return Status::Invalid("Content-Length must be a non-negative decimal integer, got '" +
                           Excerpt(value, 40) + "'");
  }
  const uint64_t n = std::stoull(value);
  if (n > static_cast<uint64_t>(max_body)) {
    return Status::PayloadTooLarge("request body of " + value + " bytes exceeds the limit of " +
                                   std::to_string(max_body) +
                                   " bytes (strata serve --max-body-bytes)");
  }
  return Status::OK();
}

void DispatchTablePost(ServerContext& ctx, const httplib::Request& http, httplib::Response& res,
                       arrow::BufferPtr body) {
  Result<TableRoute> route = ParseTableRoute(RawPath(http));
  if (!route.ok()) {
    if (route.status().IsNotFound()) {
      return SendError(res, 404, "not_found", route.status().message());
    }
    return SendError(res, route.status());
  }
  Result<std::string> db = DatabaseOf(http);
  if (!db.ok()) return SendError(res, db.status());
  Status name_ok = table::ValidateTableName(route->table);
  if (!name_ok.ok()) return SendError(res, name_ok);

  TableRequest req;
  req.http = &http;
  req.database = std::move(*db);
  req.route = std::move(*route);
  req.body = body ? std::move(body) : arrow::Buffer::AllocateZeroed(0);
  const std::string& action = req.route.action;
  // Deep JSON would overflow the stack wherever a parsed value is serialized: reject it before
  // any parser runs (every JSON route; the parsers check again). query/ is left to its parser,
  // which enforces the same limit while it builds the tree (common/json_fast_parse.h): a
  // separate pass over a 784-d vector body was 1.5% of a query's server CPU.
  if (action != "query" && HasJsonBody(action, http)) {
    Status depth = CheckJsonDepth(req.body_view(), action + "/");
    if (!depth.ok()) return SendError(res, depth);
  }
  if (action == "create") return HandleCreate(ctx, req, res);
  if (action == "describe") return HandleDescribe(ctx, req, res);
  if (action == "count_rows") return HandleCountRows(ctx, req, res);
  if (action == "insert") return HandleInsert(ctx, req, res);
  if (action == "query") return HandleQuery(ctx, req, res);
  if (action == "drop") return HandleDrop(ctx, req, res);
  if (action == "delete") return HandleDelete(ctx, req, res);
  if (action == "update") return HandleUpdate(ctx, req, res);
  if (action == "merge_insert") return HandleMergeInsert(ctx, req, res);
  if (action == "explain_plan") return HandleExplainPlan(ctx, req, res);
  if (action == "analyze_plan") return HandleAnalyzePlan(ctx, req, res);
  if (action == "flush") return HandleFlush(ctx, req, res);
  if (action == "compact") return HandleCompact(ctx, req, res);
  if (action == "mem_wal/describe") return HandleMemWalDescribe(ctx, req, res);
  if (action == "create_index") return HandleCreateIndex(ctx, req, res);
  if (action == "index/list") return HandleListIndexes(ctx, req, res);
  if (action == "index/{n}/stats") return HandleIndexStats(ctx, req, res);
  if (action == "index/{n}/drop") return HandleDropIndex(ctx, req, res);
  if (action == "index/{n}/prewarm") return HandlePrewarmIndex(ctx, req, res);
  if (action == "add_columns") return HandleAddColumns(ctx, req, res);
  if (action == "alter_columns") return HandleAlterColumns(ctx, req, res);
  if (action == "drop_columns") return HandleDropColumns(ctx, req, res);
  if (action == "version/list") return HandleListVersions(ctx, req, res);
  if (action == "restore") return HandleRestore(ctx, req, res);
  if (action == "tags/list") return HandleListTags(ctx, req, res);
  if (action == "tags/version") return HandleTagVersion(ctx, req, res);
  if (action == "tags/create") return HandleCreateTag(ctx, req, res);
  if (action == "tags/update") return HandleUpdateTag(ctx, req, res);
  if (action == "tags/delete") return HandleDeleteTag(ctx, req, res);
  if (action == "stats") return HandleStats(ctx, req, res);
  if (action == "rename") return HandleRename(ctx, req, res);
  if (action == "set_lsm_write_spec") return HandleSetLsmWriteSpec(ctx, req, res);
  if (action == "unset_lsm_write_spec") return HandleUnsetLsmWriteSpec(ctx, req, res);
  if (IsLaterIssueRoute(action)) {
    return SendError(res, Status::NotSupported(action + "/ is not supported yet by this server"));
  }
  SendError(res, 404, "not_found", "no route for POST " + std::string(RawPath(http)));
}

constexpr const char* kRequestIdHeader = "x-request-id";
// Longest x-request-id remembered by the dedupe (the LanceDB client sends 36-byte UUIDs).
constexpr size_t kMaxRequestIdBytes = 256;

// Write routes the LanceDB client retries with the same x-request-id (PROTOCOL.md §2.2), and
// insert/: the client's retries of it use new ids (so this changes nothing for it), while
// `strata import` re-sends a batch in flight under its own id (cli/import.h). Not create/.
bool IsDedupedAction(const std::string& action) {
  static const char* const kActions[] = {"insert",
                                         "update",
                                         "delete",
                                         "create_index",
                                         "add_columns",
                                         "alter_columns",
                                         "drop_columns",
                                         "index/{n}/drop",
                                         "restore",
                                         "tags/create",
                                         "tags/update",
                                         "tags/delete",
                                         "merge_insert",
                                         "set_lsm_write_spec",
                                         "unset_lsm_write_spec"};
  for (const char* a : kActions) {
    if (action == a) return true;
  }
  return false;
}

// The request-id dedupes: insert/ answers are remembered apart from the other writes', so that
// a heavy insert load (every SDK insert has a new id) does not evict the answer of an update/
// the client is about to retry. Each has --dedupe-max-entries entries.
struct Dedupes {
  explicit Dedupes(const RequestDedupeOptions& options) : writes(options), inserts(options) {}
  RequestDedupe writes;
  RequestDedupe inserts;
};

// DispatchTablePost behind the request-id dedupe (request_dedupe.h): a repeated
// (database, table, action, x-request-id) gets the first answer without running again.
void DedupedDispatch(ServerContext& ctx, Dedupes& dedupes, const httplib::Request& http,
                     httplib::Response& res, arrow::BufferPtr body) {
  t_bytes_in = body ? static_cast<uint64_t>(body->size()) : 0;
  const std::string request_id = http.get_header_value(kRequestIdHeader);
  Result<TableRoute> route = ParseTableRoute(RawPath(http));
  Result<std::string> db = DatabaseOf(http);
  if (request_id.empty() || !route.ok() || !db.ok() || !IsDedupedAction(route->action)) {
    return DispatchTablePost(ctx, http, res, std::move(body));
  }
  if (request_id.size() > kMaxRequestIdBytes) {
    return SendError(res, Status::Invalid("x-request-id is " + std::to_string(request_id.size()) +
                                          " bytes; the limit is " +
                                          std::to_string(kMaxRequestIdBytes) + " bytes"));
  }
  const std::string_view body_view = body ? body->view() : std::string_view();
  RequestDedupe& dedupe = route->action == "insert" ? dedupes.inserts : dedupes.writes;
  RequestDedupe::Ticket ticket =
      dedupe.Begin(RequestDedupe::Key(*db, route->table, route->action, request_id), body_view);
  if (ticket.outcome == RequestDedupe::Outcome::kConflict) {
    return SendError(res, Status::Invalid("x-request-id '" + Excerpt(request_id, 64) +
                                          "' was already used for a different " + route->action +
                                          "/ request on table '" + Excerpt(route->table, 100) +
                                          "'; a retry must send the same body"));
  }
  if (ticket.outcome == RequestDedupe::Outcome::kReplay) {
    res.status = ticket.answer.status;
    res.set_content(ticket.answer.body, ticket.answer.content_type.c_str());
    res.set_header("x-strata-replayed", "true");
    spdlog::debug("{}/ on '{}': replayed the answer of x-request-id {}", route->action,
                  Excerpt(route->table, 100), Excerpt(request_id, 64));
    return;
  }
  DispatchTablePost(ctx, http, res, std::move(body));
  // 409 and 429 mean nothing was committed, like 5xx: the client's retry must run.
  const int status = res.status <= 0 ? 200 : res.status;
  DedupeAnswer answer{status, res.body, res.get_header_value("Content-Type")};
  if (status == 409 || status == 429) answer.status = 500;  // Finish forgets >= 500
  dedupe.Finish(ticket, answer);
}

const char* CodeForHttpStatus(int status) {
  switch (status) {
    case 400:
      return "invalid_input";
    case 401:
      return "unauthorized";
    case 404:
      return "not_found";
    case 413:
      return "payload_too_large";
    default:
      return status >= 500 ? "internal" : "invalid_input";
  }
}

}  // namespace

void RegisterRoutes(httplib::Server& svr, ServerContext& ctx) {
  const int64_t max_body = ctx.options.max_body_bytes;
  // Owned by the handlers below (they live as long as `svr`).
  auto keys =
      std::make_shared<const ApiKeys>(ApiKeys::FromFlagsAndEnv(ctx.options.api_keys, nullptr));
  RequestDedupeOptions dedupe_options;
  dedupe_options.max_entries = ctx.options.dedupe_max_entries;
  dedupe_options.ttl = std::chrono::seconds(ctx.options.dedupe_ttl_s);
  auto dedupe = std::make_shared<Dedupes>(dedupe_options);

  svr.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content("ok", "text/plain");
  });
  // Exempt from API keys like /healthz (probes), but details only for a valid key.
  svr.Get("/readyz", [&ctx, keys](const httplib::Request& req, httplib::Response& res) {
    HandleReadyz(ctx, req, res,
                 !keys->enabled() || keys->Matches(req.get_header_value(kApiKeyHeader)));
  });
  svr.Get("/metrics", [&ctx](const httplib::Request& req, httplib::Response& res) {
    HandleMetrics(ctx, req, res);
  });
  // The web console's static files (no data in them; its API calls carry the key).
  svr.Get(R"(/console(/[^/]*)?)",
          [](const httplib::Request& req, httplib::Response& res) { HandleConsole(req, res); });
  svr.Get(R"(/v1/table/?)", [&ctx](const httplib::Request& req, httplib::Response& res) {
    HandleListTables(ctx, req, res);
  });
  // Python's list_tables() of the root namespace.
  svr.Get(R"(/v1/namespace/(\$|%24)/table/list/?)",
          [&ctx](const httplib::Request& req, httplib::Response& res) {
            HandleListTables(ctx, req, res);
          });

  // Runs after the headers and before any body byte is read.
  svr.set_pre_routing_handler(
      [&ctx, max_body, keys, dedupe](const httplib::Request& req, httplib::Response& res) {
        t_request_start = std::chrono::steady_clock::now();
        t_bytes_in = 0;
        ClearLastErrorSummary();
        // Echo (or give) the request id, for the client and the request log.
        std::string request_id = req.get_header_value(kRequestIdHeader);
        if (request_id.empty() || request_id.size() > kMaxRequestIdBytes) {
          request_id = NewRequestId();
        }
        res.set_header(kRequestIdHeader, request_id);
        // API keys before anything else, so no body byte of an unauthenticated request is
        // read (PROTOCOL.md §0 rule 2). Never echo or log the presented key.
        if (keys->enabled() &&
            !(req.method == "GET" && (RawPath(req) == "/healthz" || RawPath(req) == "/readyz" ||
                                      IsConsolePath(RawPath(req)))) &&
            !keys->Matches(req.get_header_value(kApiKeyHeader))) {
          SendError(res, 401, "unauthorized",
                    std::string(req.has_header(kApiKeyHeader) ? "invalid" : "missing") +
                        " x-api-key header: this server requires an API key on every route "
                        "but GET /healthz, /readyz and /console/");
          res.set_header("Connection", "close");
          return httplib::Server::HandlerResponse::Handled;
        }
        // A declared body over the limit (or a malformed length) is answered at once instead of
        // holding a worker while the body arrives. The body is never read, so ask the client to
        // close the connection.
        if (req.has_header("Content-Length") && !req.has_header("Transfer-Encoding")) {
          Status length_ok = CheckContentLength(req.get_header_value("Content-Length"), max_body);
          if (!length_ok.ok()) {
            SendError(res, length_ok);
            res.set_header("Connection", "close");
            return httplib::Server::HandlerResponse::Handled;
          }
        }
        // A POST with neither Content-Length nor Transfer-Encoding has an empty body.
        if (req.method != "POST" || req.has_header("Content-Length") ||
            req.has_header("Transfer-Encoding")) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        if (RawPath(req).substr(0, 10) == "/v1/table/") {
          DedupedDispatch(ctx, *dedupe, req, res, nullptr);
        } else {
          SendError(res, 404, "not_found", "no route for POST " + std::string(RawPath(req)));
        }
        return httplib::Server::HandlerResponse::Handled;
      });

  svr.Post(R"(/v1/table/.+)",
           [&ctx, max_body, dedupe](const httplib::Request& req, httplib::Response& res,
                                    const httplib::ContentReader& reader) {
             Result<arrow::BufferPtr> body = ReadBody(reader, max_body);
             if (!body.ok()) {
               res.set_header("Connection", "close");
               return SendError(res, body.status());
             }
             DedupedDispatch(ctx, *dedupe, req, res, std::move(*body));
           });
  svr.Post(R"(.*)", [max_body](const httplib::Request& req, httplib::Response& res,
                               const httplib::ContentReader& reader) {
    Result<arrow::BufferPtr> body = ReadBody(reader, max_body);
    if (!body.ok()) {
      res.set_header("Connection", "close");
      return SendError(res, body.status());
    }
    SendError(res, 404, "not_found", "no route for POST " + std::string(RawPath(req)));
  });

  // Errors cpp-httplib produces itself (no route, bad request line, ...) get JSON bodies too.
  svr.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        const std::string message =
            res.status == 404 ? "no route for " + req.method + " " + std::string(RawPath(req))
                              : "request failed with HTTP status " + std::to_string(res.status);
        res.body = ErrorBody(CodeForHttpStatus(res.status), message);
        res.set_header("Content-Type", "application/json");
        return httplib::Server::HandlerResponse::Handled;
      }));
  svr.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown exception";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        spdlog::error("{} {}: unhandled exception: {}", req.method, req.path, what);
        res.status = 500;
        res.body = ErrorBody("internal", "internal error: " + what);
        res.set_header("Content-Type", "application/json");
      });
  // Every answered request (routes, pre-routing answers, errors) is counted for /metrics.
  svr.set_post_routing_handler([&ctx](const httplib::Request& req, httplib::Response& res) {
    ObserveHttpRequest(*ctx.metrics, req, res.status, ElapsedMs() / 1000);
  });
  svr.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    // One structured line per request (request_log.h); never a header value but the request
    // id, never a body.
    RequestLogEntry entry;
    entry.request_id = res.get_header_value(kRequestIdHeader);
    entry.method = req.method;
    const std::string_view path = RawPath(req);
    Result<TableRoute> route = path.substr(0, 10) == "/v1/table/" && req.method == "POST"
                                   ? ParseTableRoute(path)
                                   : Result<TableRoute>(Status::NotFound("not a table route"));
    if (route.ok()) {
      entry.route = route->action;
      entry.table = Excerpt(route->table, 200);
    } else {
      entry.route = Excerpt(path, 200);
    }
    if (path.substr(0, 4) == "/v1/") {
      Result<std::string> db = DatabaseOf(req);
      if (db.ok()) entry.database = *db;
    }
    entry.status = res.status;
    entry.duration_ms = ElapsedMs();
    entry.bytes_in = t_bytes_in;
    // Not res.body for the error: it may already be gzip-compressed (accept-encoding: gzip).
    entry.bytes_out = res.body.size();
    if (res.status >= 400) {
      entry.error = LastErrorSummary();
      if (entry.error.empty()) entry.error = "(no error body)";
    }
    LogRequest(entry);
    ClearLastErrorSummary();
  });
}

}  // namespace strata::server
