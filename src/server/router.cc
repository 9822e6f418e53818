#include "server/router.h"

#include <chrono>
#include <exception>

#include <spdlog/spdlog.h>

#include "server/body_reader.h"
#include "server/http_errors.h"
#include "server/routes.h"
#include "table/table_name.h"

namespace strata::server {

namespace {

// Start of the request the current worker thread is serving (set once its headers are parsed;
// one worker serves one request at a time), for the latency in the request log.
thread_local std::chrono::steady_clock::time_point t_request_start;

double ElapsedMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                   t_request_start)
      .count();
}

bool IsKnownUnimplemented(const std::string& action) {
  static const char* const kActions[] = {"update",
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
                                         "restore",
                                         "version/list",
                                         "tags/list",
                                         "tags/version",
                                         "tags/create",
                                         "tags/update",
                                         "tags/delete",
                                         "stats",
                                         "explain_plan",
                                         "analyze_plan",
                                         "rename",
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
  if (action == "create") return HandleCreate(ctx, req, res);
  if (action == "describe") return HandleDescribe(ctx, req, res);
  if (action == "count_rows") return HandleCountRows(ctx, req, res);
  if (action == "insert") return HandleInsert(ctx, req, res);
  if (action == "query") return HandleQuery(ctx, req, res);
  if (action == "drop") return HandleDrop(ctx, req, res);
  if (action == "delete") return HandleDelete(ctx, req, res);
  if (action == "flush") return HandleFlush(ctx, req, res);
  if (action == "mem_wal/describe") return HandleMemWalDescribe(ctx, req, res);
  if (IsKnownUnimplemented(action)) {
    return SendError(res, Status::NotSupported(action + "/ is not supported yet by this server"));
  }
  SendError(res, 404, "not_found", "no route for POST " + std::string(RawPath(http)));
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

  svr.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content("ok", "text/plain");
  });
  svr.Get(R"(/v1/table/?)", [&ctx](const httplib::Request& req, httplib::Response& res) {
    HandleListTables(ctx, req, res);
  });
  // Python's list_tables() of the root namespace.
  svr.Get(R"(/v1/namespace/(\$|%24)/table/list/?)",
          [&ctx](const httplib::Request& req, httplib::Response& res) {
            HandleListTables(ctx, req, res);
          });

  // A POST with neither Content-Length nor Transfer-Encoding has an empty body.
  svr.set_pre_routing_handler([&ctx](const httplib::Request& req, httplib::Response& res) {
    t_request_start = std::chrono::steady_clock::now();
    if (req.method != "POST" || req.has_header("Content-Length") ||
        req.has_header("Transfer-Encoding")) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    if (RawPath(req).substr(0, 10) == "/v1/table/") {
      DispatchTablePost(ctx, req, res, nullptr);
    } else {
      SendError(res, 404, "not_found", "no route for POST " + std::string(RawPath(req)));
    }
    return httplib::Server::HandlerResponse::Handled;
  });

  svr.Post(R"(/v1/table/.+)", [&ctx, max_body](const httplib::Request& req, httplib::Response& res,
                                               const httplib::ContentReader& reader) {
    Result<arrow::BufferPtr> body = ReadBody(reader, max_body);
    if (!body.ok()) {
      res.set_header("Connection", "close");
      return SendError(res, body.status());
    }
    DispatchTablePost(ctx, req, res, std::move(*body));
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
  svr.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    if (res.status >= 400 && res.status != 404) {
      spdlog::warn("{} {} -> {} in {:.1f} ms: {}", req.method, req.target, res.status, ElapsedMs(),
                   res.body.substr(0, 500));
    } else {
      spdlog::debug("{} {} -> {} ({} bytes) in {:.1f} ms", req.method, req.target, res.status,
                    res.body.size(), ElapsedMs());
    }
  });
}

}  // namespace strata::server
