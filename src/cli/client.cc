#include "cli/client.h"

#include <httplib.h>

#include <cctype>
#include <cstdio>

#include "cli/exit_codes.h"

namespace strata::cli {

namespace {

// Version from CMake (project(strata VERSION ...)).
#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

// "401 unauthorized: the x-api-key ..." from a JSON error body, or the raw body.
std::string DescribeErrorBody(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("message")) {
    std::string code = j.value("error", "");
    std::string msg = j["message"].is_string() ? j["message"].get<std::string>() : j.dump();
    return code.empty() ? msg : code + ": " + msg;
  }
  std::string s = body.substr(0, 500);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

Status HttpError(const std::string& what, const HttpAnswer& a) {
  std::string msg = what + " answered " + std::to_string(a.status);
  if (!a.body.empty()) msg += " (" + DescribeErrorBody(a.body) + ")";
  if (a.status >= 400 && a.status < 500) return Status::Invalid("refused: " + msg);
  return Status::IOError("server: " + msg);
}

int ExitCodeFor(const Status& st) {
  if (st.ok()) return kExitOk;
  const std::string& m = st.message();
  if (m.rfind("server: ", 0) == 0) return kExitServer;
  if (m.rfind("refused: ", 0) == 0) return kExitRefused;
  return kExitInput;
}

std::string EncodePathSegment(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '$') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

RestClient::RestClient(ClientOptions options) : options_(std::move(options)) {
  http_ = std::make_unique<httplib::Client>(options_.url);
  http_->set_connection_timeout(options_.connect_timeout_s, 0);
  http_->set_read_timeout(options_.read_timeout_s, 0);
  http_->set_write_timeout(options_.read_timeout_s, 0);
  http_->set_keep_alive(true);
  // Headers and body go out in two writes: without TCP_NODELAY a small request waits for the
  // server's delayed ACK (about 40 ms) before its body is sent.
  http_->set_tcp_nodelay(true);
  httplib::Headers headers = {{"x-lancedb-database", options_.database},
                              {"user-agent", std::string("strata-cli/") + STRATA_VERSION}};
  if (!options_.api_key.empty()) headers.emplace("x-api-key", options_.api_key);
  http_->set_default_headers(headers);
}

RestClient::~RestClient() = default;

Result<HttpAnswer> RestClient::GetRaw(const std::string& path) {
  auto res = http_->Get(path.c_str());
  if (!res) {
    return Status::IOError("server: cannot reach " + options_.url + " (GET " + path +
                           "): " + httplib::to_string(res.error()));
  }
  return HttpAnswer{res->status, res->body};
}

Result<nlohmann::json> RestClient::GetJson(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(HttpAnswer a, GetRaw(path));
  if (a.status < 200 || a.status >= 300) return HttpError("GET " + path, a);
  nlohmann::json j = nlohmann::json::parse(a.body, nullptr, false);
  if (j.is_discarded()) return Status::IOError("server: GET " + path + " answered non-JSON");
  return j;
}

Result<HttpAnswer> RestClient::Post(const std::string& path, const std::string& body,
                                    const std::string& content_type,
                                    const std::string& request_id) {
  httplib::Headers headers;
  if (!request_id.empty()) headers.emplace("x-request-id", request_id);
  auto res = body.empty() && content_type.empty()
                 ? http_->Post(path.c_str(), headers)
                 : http_->Post(path.c_str(), headers, body, content_type.c_str());
  if (!res) {
    return Status::IOError("server: cannot reach " + options_.url + " (POST " + path +
                           "): " + httplib::to_string(res.error()));
  }
  return HttpAnswer{res->status, res->body, res->get_header_value("x-strata-replayed") == "true"};
}

Result<HttpAnswer> RestClient::PostTableRaw(const std::string& table, const std::string& op,
                                            const std::string& body,
                                            const std::string& content_type,
                                            const std::string& request_id) {
  return Post("/v1/table/" + EncodePathSegment(table) + "/" + op, body, content_type, request_id);
}

Result<std::string> RestClient::PostTable(const std::string& table, const std::string& op,
                                          const std::string& body,
                                          const std::string& content_type) {
  const std::string path = "/v1/table/" + EncodePathSegment(table) + "/" + op;
  STRATA_ASSIGN_OR_RETURN(HttpAnswer a, Post(path, body, content_type));
  if (a.status < 200 || a.status >= 300) return HttpError(op + " of table '" + table + "'", a);
  return std::move(a.body);
}

Result<nlohmann::json> RestClient::PostTableJson(const std::string& table, const std::string& op,
                                                 const nlohmann::json& body) {
  std::string text = body.is_null() ? std::string() : body.dump();
  STRATA_ASSIGN_OR_RETURN(
      std::string answer,
      PostTable(table, op, text, body.is_null() ? std::string() : "application/json"));
  if (answer.empty()) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(answer, nullptr, false);
  if (j.is_discarded()) return Status::IOError("server: " + op + " answered non-JSON");
  return j;
}

Result<nlohmann::json> RestClient::PostTableArrow(const std::string& table, const std::string& op,
                                                  const std::string& query,
                                                  const std::string& ipc_stream) {
  STRATA_ASSIGN_OR_RETURN(std::string answer, PostTable(table, op + query, ipc_stream,
                                                        "application/vnd.apache.arrow.stream"));
  if (answer.empty()) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(answer, nullptr, false);
  if (j.is_discarded()) return Status::IOError("server: " + op + " answered non-JSON");
  return j;
}

}  // namespace strata::cli
