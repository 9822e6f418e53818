#include "server/http_errors.h"

#include <nlohmann/json.hpp>

#include "common/json_guard.h"

namespace strata::server {

namespace {
thread_local std::string t_last_error;
}  // namespace

const std::string& LastErrorSummary() { return t_last_error; }

const char* FencedServerHint() {
  return ". This server is fenced: another strata server opened the same data and now owns "
         "the table's writes, so this server refuses them and its reads may be stale (GET "
         "/readyz says fenced). Restart this server once the other one stopped, or send the "
         "requests to the other one. A local --data directory is locked against a second "
         "server; on an --store s3:// bucket this writer-epoch fence is the only guard";
}
void ClearLastErrorSummary() { t_last_error.clear(); }

HttpError MapStatus(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return {200, "ok"};
    case StatusCode::kInvalidArgument:
    case StatusCode::kAlreadyExists:
    case StatusCode::kNotSupported:
      return {400, "invalid_input"};
    case StatusCode::kNotFound:
      return {404, "table_not_found"};
    case StatusCode::kPayloadTooLarge:
      return {413, "payload_too_large"};
    case StatusCode::kFenced:
      return {409, "fenced"};
    case StatusCode::kBackpressure:
      return {503, "backpressure"};
    case StatusCode::kWriterPoisoned:
      return {503, "writer_poisoned"};
    case StatusCode::kCancelled:
      return {503, "cancelled"};
    case StatusCode::kInsufficientStorage:
      return {507, "insufficient_storage"};
    case StatusCode::kTimeout:
      return {504, "flush_timeout"};
    case StatusCode::kIOError:
    case StatusCode::kCorruption:
    case StatusCode::kInternal:
      return {500, "internal"};
  }
  return {500, "internal"};
}

std::string ErrorBody(const std::string& code, const std::string& message) {
  t_last_error = code + ": " + Excerpt(message, 300);
  nlohmann::json body = {{"error", code}, {"message", message}};
  // Replace invalid UTF-8 (e.g. echoed table names) instead of throwing.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void SendError(httplib::Response& res, int http_status, const std::string& code,
               const std::string& message) {
  res.status = http_status;
  res.body = ErrorBody(code, message);
  res.set_header("Content-Type", "application/json");
}

void SendError(httplib::Response& res, const Status& status) {
  const HttpError e = MapStatus(status);
  if (status.code() == StatusCode::kFenced) {
    // Every write of a fenced table lands here: say what it means for this server.
    SendError(res, e.status, e.code, status.message() + FencedServerHint());
  } else {
    SendError(res, e.status, e.code, status.message());
  }
  if (status.code() == StatusCode::kBackpressure) res.set_header("Retry-After", "1");
  // Space comes back when flush, compaction and GC free it, or an operator does.
  if (status.code() == StatusCode::kInsufficientStorage) res.set_header("Retry-After", "5");
  // The shard is reopened in the background (table/writer_recovery.h).
  if (status.code() == StatusCode::kWriterPoisoned) res.set_header("Retry-After", "2");
}

}  // namespace strata::server
