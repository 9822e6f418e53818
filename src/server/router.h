// Registers every route of PROTOCOL.md on a cpp-httplib server and dispatches table routes
// (`POST /v1/table/{id}/{action}/`) to the handlers of routes.h after reading the body under
// the body limit. Also installs the JSON error handler (unknown routes -> 404
// {"error":"not_found"}), the exception handler (500 internal) and the request logger
// (spdlog: requests at debug, errors at warn).
// Bodiless POSTs without Content-Length or Transfer-Encoding (RFC 9112 §6.3: zero-length body)
// are answered from the pre-routing hook, because cpp-httplib 0.11 would otherwise wait for the
// connection to close. The same hook answers a Content-Length above the body limit with 413
// payload_too_large (and a malformed or negative one with 400) before reading the body, and
// asks the client to close the connection. JSON bodies nesting deeper than kMaxJsonDepth
// (common/json_guard.h) are rejected with 400 before any parser runs. Error log lines carry
// the error code and message (LastErrorSummary), never the possibly compressed body.
// Thread-safety: Register once before listening; handlers then run concurrently.
#pragma once

#include <httplib.h>

#include "server/server_context.h"

namespace strata::server {

/// Installs routes and hooks on `svr`; `ctx` must outlive the server.
void RegisterRoutes(httplib::Server& svr, ServerContext& ctx);

}  // namespace strata::server
