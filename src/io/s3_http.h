// One HTTP exchange with an S3-compatible endpoint through libcurl, signed with AWS SigV4 by
// libcurl itself (CURLOPT_AWS_SIGV4), over a pool of reusable easy handles so that connections
// are kept alive across requests (no TCP handshake per small request).
// libcurl 7.88 SigV4 quirks this layer relies on (measured against radosgw 16.2, see
// shared/notes/object_store.md): the x-amz-content-sha256 header must be set by the caller
// (the hex SHA-256 of a PUT body, so the store verifies it; UNSIGNED-PAYLOAD for requests
// without a body), the query string is signed verbatim so callers pass it already
// canonical (s3::CanonicalQuery), and no empty "Expect:" header may be added (curl would sign it).
// PUT bodies go out through CURLOPT_POSTFIELDS with a custom "PUT" method, so curl adds
// "Expect: 100-continue" only above 1 MiB.
// Thread-safety: Perform may be called from many threads at once; each call takes its own easy
// handle from the pool (creating one when the pool is empty) and returns it afterwards.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace strata::io::s3 {

struct HttpRequest {
  std::string method = "GET";        // GET, PUT, POST, HEAD or DELETE
  std::string url;                   // fully encoded, query canonical
  std::vector<std::string> headers;  // extra "Name: value" lines (signed by curl)
  std::string_view body;             // PUT and POST only (its SHA-256 is signed)
};

struct HttpResponse {
  /// CURLcode of the transfer (0 = a complete HTTP response arrived).
  int curl_code = 0;
  std::string curl_error;  // text for a non-zero curl_code
  /// True when the transfer failed before the request could have reached the server (name
  /// resolution or TCP connect refused), so a non-idempotent request may be re-sent blindly.
  bool not_sent = false;
  long status = 0;  // HTTP status (0 without a response)
  std::string body;
  int64_t content_length = -1;  // Content-Length header of the final response; -1 if absent
  std::string last_modified;    // Last-Modified header
  std::string content_range;    // Content-Range header
  std::string etag;             // ETag header, quotes included (multipart parts)
  long new_connections = 0;     // TCP connections this exchange had to open (0 when reused)
};

struct HttpConfig {
  std::string region = "us-east-1";
  std::string access_key;
  std::string secret_key;
  std::string session_token;  // sent as x-amz-security-token when not empty
  long connect_timeout_ms = 3000;
  /// A transfer slower than 1 byte/s for this long fails with a timeout (stalled server).
  long stall_timeout_s = 20;
  /// Upper bound of a whole exchange (0 = none).
  long total_timeout_ms = 120'000;
};

class HttpClient {
 public:
  explicit HttpClient(HttpConfig config);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  /// Runs one exchange. Never throws; transport failures are reported in curl_code.
  HttpResponse Perform(const HttpRequest& request);

  /// Handles created so far (pool size plus those in use): tests check reuse with it.
  int handles_created() const;

 private:
  void* Acquire();
  void Release(void* handle);

  const HttpConfig config_;
  const std::string sigv4_;  // "aws:amz:{region}:s3"
  mutable std::mutex mu_;
  std::vector<void*> idle_;  // CURL* easy handles
  int created_ = 0;
};

}  // namespace strata::io::s3
