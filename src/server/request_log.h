// Structured request logs (spdlog): one line per request with request id, method, route
// action, database, table, status, duration and bytes in/out, plus the error code and message
// of a failed request. Never the API key, never a body.
//   text (default):  [2025-01-01 12:00:00.123] [request] [info] request_id=5f0c... method=POST
//                    route=delete db=default table=items status=200 duration_ms=3.41
//                    bytes_in=24 bytes_out=25
//   json (--log-format json): every log line (requests and others) is one JSON object:
//     {"ts":"2025-01-01T12:00:00.123+00:00","level":"info","logger":"request",
//      "request_id":"5f0c...","method":"POST","route":"delete",...}
//     {"ts":"...","level":"info","logger":"strata","msg":"serving data directory ..."}
// Requests log at info (status < 400), warn (4xx) or error (5xx) on the logger "request".
// Standard error is buffered: request lines below warn reach it within a second (or 200 ms
// when more lines follow); every other line is written at once (request_log.cc says why).
// Thread-safety: ConfigureLogging once at start (before threads serve requests);
// FormatRequestLine is pure; LogRequest may run on many threads (spdlog loggers are _mt).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace strata::server {

enum class LogFormat { kText, kJson };

/// "text" or "json". Errors: Invalid naming --log-format and the accepted values.
Result<LogFormat> ParseLogFormat(std::string_view name);

/// Installs the default logger "strata" and the request logger "request" on stderr in
/// `format`, at `level` ("trace", "debug", "info", "warn", "error", "critical", "off"), then
/// applies SPDLOG_LEVEL from the environment (which wins, as before). Replaces loggers of the
/// same names. Errors: Invalid for an unknown level (naming --log-level).
Status ConfigureLogging(LogFormat format, std::string_view level);

/// The facts of one request log line.
struct RequestLogEntry {
  std::string request_id;
  std::string method;
  std::string route;     // table action ("delete", "index/{n}/stats") or the path ("/healthz")
  std::string database;  // empty when not applicable
  std::string table;     // empty when not a table route
  int status = 0;
  double duration_ms = 0;
  uint64_t bytes_in = 0;   // request body bytes read
  uint64_t bytes_out = 0;  // response body bytes (after compression)
  std::string error;       // "code: message" of an error answer, else empty
};

/// The line in `format`: text is space-separated key=value pairs (values with spaces, quotes,
/// '=', backslashes or control bytes double-quoted and escaped; empty fields left out); json is
/// the comma-separated "key":value members WITHOUT the enclosing braces (the JSON formatter
/// adds ts, level and logger around them).
std::string FormatRequestLine(const RequestLogEntry& entry, LogFormat format);

/// Logs `entry` on the request logger at the level its status gives (info/warn/error).
void LogRequest(const RequestLogEntry& entry);

/// A fresh request id (a random UUIDv4), for requests without x-request-id.
std::string NewRequestId();

}  // namespace strata::server
