// Status -> HTTP status and JSON error body (PROTOCOL.md §0 rule 3):
//   {"error": "<code>", "message": "<human sentence>"}
// Codes: invalid_input 400 (InvalidArgument, AlreadyExists, NotSupported), table_not_found 404,
// payload_too_large 413, fenced 409, backpressure 503 (+ Retry-After: 1), writer_poisoned 503
// (+ Retry-After: 2; reopened in the background), insufficient_storage 507 (+ Retry-After: 5; free
// space below --min-free-bytes), flush_timeout 504, internal 500 (IOError, Corruption, Internal).
// Thread-safety: pure functions.
#pragma once

#include <string>

#include <httplib.h>

#include "common/status.h"

namespace strata::server {

struct HttpError {
  int status = 500;
  const char* code = "internal";
};

/// The HTTP status and error code of a non-OK `status`.
HttpError MapStatus(const Status& status);

/// The JSON error body {"error": code, "message": message} (compact).
std::string ErrorBody(const std::string& code, const std::string& message);

/// Fills `res` with the error of `status` (status code, JSON body, Retry-After for 503
/// backpressure). A Fenced status's message is followed by FencedServerHint().
void SendError(httplib::Response& res, const Status& status);

/// What a 409 fenced means for the server answering it (appended to the error message):
/// another server owns the table's writes, reads here may be stale, /readyz says so, restart
/// once the other stopped; a local data directory is locked, an S3 store relies on the fence.
const char* FencedServerHint();

/// Fills `res` with an explicit HTTP status, error code and message.
void SendError(httplib::Response& res, int http_status, const std::string& code,
               const std::string& message);

/// "code: message" of the last error body ErrorBody built on this thread (capped at 300
/// bytes), for the request log: the logger runs after the body may have been gzip-compressed,
/// so it must not log res.body. One worker thread serves one request at a time.
const std::string& LastErrorSummary();
/// Forgets LastErrorSummary() (called at the start and the end of each request).
void ClearLastErrorSummary();

}  // namespace strata::server
