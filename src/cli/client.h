// HTTP client of the Strata REST API (PROTOCOL.md) for the `strata` client commands, on
// cpp-httplib's blocking client. One RestClient talks to one server URL and database: every
// request carries `x-lancedb-database` and, when set, `x-api-key`.
// Errors are values: a connection failure or a 5xx answer is a Status whose message starts
// with "server: " (kExitServer), a 4xx answer one that starts with "refused: " (kExitRefused);
// both name the route, the HTTP status and the server's error code and message.
// Thread-safety: a RestClient is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace httplib {
class Client;
}

namespace strata::cli {

struct ClientOptions {
  /// http://HOST:PORT (https is not supported: put a TLS proxy in front of the server).
  std::string url = "http://127.0.0.1:8080";
  /// Sent as x-api-key when not empty (the server checks it when started with --api-key).
  std::string api_key;
  /// The database, sent as x-lancedb-database.
  std::string database = "default";
  /// Seconds to wait for a connection, and for an answer.
  int connect_timeout_s = 10;
  int read_timeout_s = 600;
};

struct HttpAnswer {
  int status = 0;
  std::string body;
  /// The server answered from its request-id dedupe (header x-strata-replayed: true): the
  /// request had already been applied.
  bool replayed = false;
};

class RestClient {
 public:
  explicit RestClient(ClientOptions options);
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  const ClientOptions& options() const { return options_; }

  /// GET `path` (e.g. "/healthz"). Any HTTP status is returned; only a connection failure
  /// is an error.
  Result<HttpAnswer> GetRaw(const std::string& path);
  /// GET `path`, expecting a JSON answer. Non-2xx is an error (see the file comment).
  Result<nlohmann::json> GetJson(const std::string& path);
  /// POST /v1/table/{table}/{op}/ with a JSON body (nullptr = no body). Non-2xx is an error.
  Result<nlohmann::json> PostTableJson(const std::string& table, const std::string& op,
                                       const nlohmann::json& body);
  /// The same, returning the raw 2xx body (query/ answers an Arrow IPC file).
  Result<std::string> PostTable(const std::string& table, const std::string& op,
                                const std::string& body, const std::string& content_type);
  /// POST /v1/table/{table}/{op} returning any HTTP status; only a connection failure is an
  /// error (for callers that handle 404 or retry 503 themselves).
  Result<HttpAnswer> PostTableRaw(const std::string& table, const std::string& op,
                                  const std::string& body, const std::string& content_type,
                                  const std::string& request_id = "");
  /// POST with an Arrow IPC stream body; `query` is appended to the route (e.g. "?mode=create").
  Result<nlohmann::json> PostTableArrow(const std::string& table, const std::string& op,
                                        const std::string& query, const std::string& ipc_stream);

 private:
  /// `request_id`, when not empty, is sent as x-request-id.
  Result<HttpAnswer> Post(const std::string& path, const std::string& body,
                          const std::string& content_type, const std::string& request_id = "");

  ClientOptions options_;
  std::unique_ptr<httplib::Client> http_;
};

/// The error for a non-2xx answer to `what` (e.g. "insert/ of table 't'"): "refused: ..." for
/// 4xx, "server: ..." otherwise, with the server's error code and message.
Status HttpError(const std::string& what, const HttpAnswer& answer);

/// Percent-encodes a table name for a route segment (everything but unreserved characters).
std::string EncodePathSegment(const std::string& s);

}  // namespace strata::cli
