#include "io/s3_http.h"

#include <curl/curl.h>
#include <openssl/sha.h>

#include <cctype>
#include <charconv>
#include <cstring>
#include <mutex>

namespace strata::io::s3 {
namespace {

std::once_flag g_curl_init;

struct Exchange {
  HttpResponse* response;
};

size_t OnBody(char* data, size_t size, size_t nmemb, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  ex->response->body.append(data, size * nmemb);
  return size * nmemb;
}

bool HeaderIs(std::string_view line, std::string_view name, std::string_view* value) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return false;
  }
  std::string_view v = line.substr(name.size() + 1);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) {
    v.remove_suffix(1);
  }
  *value = v;
  return true;
}

size_t OnHeader(char* data, size_t size, size_t nmemb, void* user) {
  auto* r = static_cast<Exchange*>(user)->response;
  const std::string_view line(data, size * nmemb);
  std::string_view v;
  if (line.rfind("HTTP/", 0) == 0) {
    // A new response (after "100 Continue" or a redirect): forget the previous headers.
    r->content_length = -1;
    r->last_modified.clear();
    r->content_range.clear();
    r->etag.clear();
  } else if (HeaderIs(line, "content-length", &v)) {
    int64_t n = -1;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    r->content_length = (ec == std::errc() && p == v.data() + v.size()) ? n : -1;
  } else if (HeaderIs(line, "last-modified", &v)) {
    r->last_modified = std::string(v);
  } else if (HeaderIs(line, "content-range", &v)) {
    r->content_range = std::string(v);
  } else if (HeaderIs(line, "etag", &v)) {
    r->etag = std::string(v);
  }
  return size * nmemb;
}

/// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * SHA256_DIGEST_LENGTH);
  for (unsigned char b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xF]);
  }
  return out;
}

}  // namespace

HttpClient::HttpClient(HttpConfig config)
    : config_(std::move(config)), sigv4_("aws:amz:" + config_.region + ":s3") {
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

HttpClient::~HttpClient() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

int HttpClient::handles_created() const {
  std::lock_guard<std::mutex> lock(mu_);
  return created_;
}

void* HttpClient::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
    ++created_;
  }
  return curl_easy_init();
}

void HttpClient::Release(void* handle) {
  // curl_easy_reset keeps the handle's live connections (and DNS cache) for the next request.
  curl_easy_reset(static_cast<CURL*>(handle));
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(handle);
}

HttpResponse HttpClient::Perform(const HttpRequest& request) {
  HttpResponse response;
  CURL* curl = static_cast<CURL*>(Acquire());
  if (curl == nullptr) {
    response.curl_code = CURLE_FAILED_INIT;
    response.curl_error = "curl_easy_init failed";
    response.not_sent = true;
    return response;
  }
  Exchange ex{&response};
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = nullptr;
  // A PUT or POST signs its payload's SHA-256, so the store rejects a body damaged or cut in
  // transit (400 XAmzContentSHA256Mismatch); requests without a body need no payload hash.
  const bool has_body = request.method == "PUT" || request.method == "POST";
  const std::string payload_hash = has_body ? Sha256Hex(request.body) : "UNSIGNED-PAYLOAD";
  headers = curl_slist_append(headers, ("x-amz-content-sha256: " + payload_hash).c_str());
  if (!config_.session_token.empty()) {
    headers =
        curl_slist_append(headers, ("x-amz-security-token: " + config_.session_token).c_str());
  }
  for (const auto& h : request.headers) headers = curl_slist_append(headers, h.c_str());

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, sigv4_.c_str());
  curl_easy_setopt(curl, CURLOPT_USERNAME, config_.access_key.c_str());
  curl_easy_setopt(curl, CURLOPT_PASSWORD, config_.secret_key.c_str());
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, config_.connect_timeout_ms);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, config_.stall_timeout_s);
  if (config_.total_timeout_ms > 0) {
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, config_.total_timeout_ms);
  }
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &ex);
  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (has_body) {
    headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.empty() ? "" : request.body.data());
  } else if (request.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  const CURLcode rc = curl_easy_perform(curl);
  response.curl_code = static_cast<int>(rc);
  if (rc != CURLE_OK) {
    response.curl_error = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc);
    response.not_sent = rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_CONNECT ||
                        rc == CURLE_COULDNT_RESOLVE_PROXY;
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &response.new_connections);
  curl_slist_free_all(headers);
  Release(curl);
  return response;
}

}  // namespace strata::io::s3
