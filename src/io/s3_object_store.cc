#include "io/s3_object_store.h"

#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <random>
#include <thread>

#include "io/s3_wire.h"

namespace strata::io {
namespace {

using s3::HttpRequest;
using s3::HttpResponse;

bool Is2xx(const HttpResponse& r) { return r.curl_code == 0 && r.status >= 200 && r.status < 300; }

/// A failure that another attempt may not repeat: transport errors, timeouts, truncated
/// bodies, 5xx, 408 Request Timeout and 429 Too Many Requests.
bool Transient(const HttpResponse& r) {
  return r.curl_code != 0 || r.status >= 500 || r.status == 408 || r.status == 429;
}

Status HttpError(const std::string& op, const std::string& key, const HttpResponse& r) {
  std::string msg = "S3 " + op + " '" + key + "'";
  if (r.curl_code != 0) return Status::IOError(msg + ": " + r.curl_error);
  msg += " -> HTTP " + std::to_string(r.status);
  const std::string summary = s3::ErrorSummary(r.body);
  if (!summary.empty()) msg += " " + summary;
  return Status::IOError(msg);
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::string Trim(std::string s, char c) {
  while (!s.empty() && s.front() == c) s.erase(s.begin());
  while (!s.empty() && s.back() == c) s.pop_back();
  return s;
}

/// Parses "bytes a-b/total" (total may be '*'); false when malformed.
bool ParseContentRange(std::string_view v, int64_t* first, int64_t* last) {
  if (v.rfind("bytes ", 0) != 0) return false;
  v.remove_prefix(6);
  const size_t dash = v.find('-'), slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) {
    return false;
  }
  auto num = [](std::string_view s, int64_t* out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && p == s.data() + s.size();
  };
  return num(v.substr(0, dash), first) && num(v.substr(dash + 1, slash - dash - 1), last);
}

}  // namespace

Result<S3Options> S3OptionsFromEnv(S3Options base) {
  auto fill = [](std::string* field, const char* var) {
    if (field->empty()) *field = Env(var);
  };
  fill(&base.endpoint, "STRATA_S3_ENDPOINT");
  fill(&base.bucket, "STRATA_S3_BUCKET");
  fill(&base.prefix, "STRATA_S3_PREFIX");
  fill(&base.access_key, "AWS_ACCESS_KEY_ID");
  fill(&base.secret_key, "AWS_SECRET_ACCESS_KEY");
  fill(&base.session_token, "AWS_SESSION_TOKEN");
  if (Env("AWS_REGION") != "" && base.region == S3Options().region) base.region = Env("AWS_REGION");
  if (Env("AWS_REGION") == "" && Env("AWS_DEFAULT_REGION") != "" &&
      base.region == S3Options().region) {
    base.region = Env("AWS_DEFAULT_REGION");
  }
  if (base.endpoint.empty()) return Status::Invalid("S3 endpoint missing: set STRATA_S3_ENDPOINT");
  if (base.bucket.empty()) return Status::Invalid("S3 bucket missing: set STRATA_S3_BUCKET");
  if (base.access_key.empty()) {
    return Status::Invalid("S3 credentials missing: set AWS_ACCESS_KEY_ID");
  }
  if (base.secret_key.empty()) {
    return Status::Invalid("S3 credentials missing: set AWS_SECRET_ACCESS_KEY");
  }
  return base;
}

Status ParseS3Url(const std::string& url, S3Options* options) {
  if (url.rfind("s3://", 0) != 0) {
    return Status::Invalid("store URL '" + url + "' does not start with s3://");
  }
  const std::string rest = url.substr(5);
  const size_t slash = rest.find('/');
  options->bucket = rest.substr(0, slash);
  options->prefix = slash == std::string::npos ? "" : Trim(rest.substr(slash + 1), '/');
  if (options->bucket.empty()) return Status::Invalid("store URL '" + url + "' has no bucket");
  return Status::OK();
}

S3ObjectStore::S3ObjectStore(S3Options options)
    : options_(std::move(options)),
      http_(s3::HttpConfig{options_.region, options_.access_key, options_.secret_key,
                           options_.session_token, options_.connect_timeout_ms,
                           options_.stall_timeout_s, options_.total_timeout_ms}) {}

Result<std::shared_ptr<S3ObjectStore>> S3ObjectStore::Open(S3Options options) {
  options.endpoint = Trim(options.endpoint, '/');
  options.prefix = Trim(options.prefix, '/');
  if (options.endpoint.rfind("http://", 0) != 0 && options.endpoint.rfind("https://", 0) != 0) {
    return Status::Invalid("S3 endpoint '" + options.endpoint +
                           "' must start with http:// or https://");
  }
  if (options.bucket.empty() || options.bucket.find('/') != std::string::npos) {
    return Status::Invalid("S3 bucket name '" + options.bucket + "' is empty or has a '/'");
  }
  if (!options.prefix.empty()) STRATA_RETURN_IF_ERROR(ValidateKey(options.prefix));
  if (options.access_key.empty() || options.secret_key.empty()) {
    return Status::Invalid("S3 access key and secret key are required");
  }
  if (options.max_attempts < 1 || options.list_page_size < 1 || options.list_page_size > 1000) {
    return Status::Invalid("S3 max_attempts must be >= 1 and list_page_size in [1, 1000]");
  }
  std::shared_ptr<S3ObjectStore> store(new S3ObjectStore(std::move(options)));
  HttpRequest req;
  req.method = "HEAD";
  req.url = store->options_.endpoint + "/" + store->options_.bucket;
  HttpResponse r = store->SendIdempotent(req, "");
  if (r.curl_code == 0 && r.status == 404) {
    return Status::NotFound("S3 bucket '" + store->options_.bucket + "' does not exist at " +
                            store->options_.endpoint);
  }
  if (!Is2xx(r)) return HttpError("HEAD bucket", store->options_.bucket, r);
  return store;
}

std::string S3ObjectStore::FullKey(const std::string& key) const {
  return options_.prefix.empty() ? key : options_.prefix + "/" + key;
}

std::string S3ObjectStore::ObjectUrl(const std::string& key) const {
  return options_.endpoint + "/" + options_.bucket + "/" + s3::UriEncode(FullKey(key), true);
}

void S3ObjectStore::Backoff(int attempt) const {
  thread_local std::mt19937_64 rng(std::random_device{}());
  const int64_t cap = std::min<int64_t>(options_.retry_max_ms,
                                        int64_t{options_.retry_base_ms} << std::min(attempt, 20));
  std::uniform_int_distribution<int64_t> dist(cap / 2, std::max<int64_t>(cap, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(dist(rng)));
}

HttpResponse S3ObjectStore::Send(HttpRequest request, const std::string& key) {
  const Fault fault = fault_for_test ? fault_for_test(request.method, key) : Fault::kNone;
  HttpResponse r;
  if (fault == Fault::kLoseRequest) {
    r.curl_code = CURLE_OPERATION_TIMEDOUT;
    r.curl_error = "timed out (test hook: request never sent)";
    return r;
  }
  requests_.fetch_add(1, std::memory_order_relaxed);
  r = http_.Perform(request);
  connections_.fetch_add(r.new_connections, std::memory_order_relaxed);
  if (fault == Fault::kLoseResponse) {
    r = HttpResponse();
    r.curl_code = CURLE_RECV_ERROR;
    r.curl_error = "connection lost before the response (test hook)";
    return r;
  }
  // A body shorter (or longer) than announced is a failed transfer, never data.
  if (r.curl_code == 0 && request.method == "GET" && r.content_length >= 0 &&
      static_cast<int64_t>(r.body.size()) != r.content_length) {
    r.curl_error = "truncated body: " + std::to_string(r.body.size()) + " of " +
                   std::to_string(r.content_length) + " bytes";
    r.curl_code = CURLE_PARTIAL_FILE;
  }
  return r;
}

HttpResponse S3ObjectStore::SendIdempotent(const HttpRequest& request, const std::string& key) {
  HttpResponse r;
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    if (attempt > 0) Backoff(attempt - 1);
    r = Send(request, key);
    if (!Transient(r)) return r;
  }
  return r;
}

Status S3ObjectStore::Put(const std::string& key, std::string_view data) {
  STRATA_RETURN_IF_ERROR(ValidateKey(key));
  if (static_cast<int64_t>(data.size()) > options_.max_single_put_bytes) {
    return PutMultipart(key, data, /*if_absent=*/false);
  }
  HttpRequest req;
  req.method = "PUT";
  req.url = ObjectUrl(key);
  req.body = data;
  HttpResponse r = SendIdempotent(req, key);
  if (Is2xx(r)) return Status::OK();
  return HttpError("PUT", key, r);
}

Status S3ObjectStore::PutIfAbsent(const std::string& key, std::string_view data) {
  STRATA_RETURN_IF_ERROR(ValidateKey(key));
  if (static_cast<int64_t>(data.size()) > options_.max_single_put_bytes) {
    return PutMultipart(key, data, /*if_absent=*/true);
  }
  HttpRequest req;
  req.method = "PUT";
  req.url = ObjectUrl(key);
  req.headers.push_back("If-None-Match: *");
  req.body = data;
  // Once an attempt may have landed, a later 412 may be this writer's own earlier put: only
  // the stored bytes can tell.
  bool maybe_landed = false;
  HttpResponse r;
  auto read_back = [&](const char* why) -> std::optional<Status> {
    auto got = Get(key);
    if (got.ok()) {
      if (*got == data) return Status::OK();
      return Status::AlreadyExists("S3 PUT-if-absent '" + key + "': " + why +
                                   "; the object holds other bytes");
    }
    if (got.status().IsNotFound()) return std::nullopt;  // nothing landed: send again
    return Status::IOError("S3 PUT-if-absent '" + key + "': " + why +
                           " and reading the object back failed: " + got.status().message());
  };
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    if (attempt > 0) Backoff(attempt - 1);
    r = Send(req, key);
    if (Is2xx(r)) return Status::OK();
    if (r.curl_code == 0 && r.status == 412) {
      if (!maybe_landed) {
        return Status::AlreadyExists("S3 PUT-if-absent '" + key + "' -> HTTP 412: key taken");
      }
      if (auto st = read_back("HTTP 412 after an earlier attempt with an unknown outcome")) {
        return *st;
      }
      continue;
    }
    if (r.curl_code == 0 && r.status == 409) continue;  // conflicting write in flight: not written
    if (!Transient(r)) return HttpError("PUT-if-absent", key, r);
    if (r.not_sent) continue;  // never reached the server
    // The outcome is unknown: the server may or may not have stored the object.
    maybe_landed = true;
    const std::string why = "outcome unknown (" +
                            (r.curl_code != 0 ? r.curl_error : "HTTP " + std::to_string(r.status)) +
                            ")";
    if (auto st = read_back(why.c_str())) return *st;
  }
  Status last = HttpError("PUT-if-absent", key, r);
  const std::string n = std::to_string(options_.max_attempts);
  // An attempt read back as absent may still be in flight at the server.
  return Status::IOError(last.message() + (maybe_landed
                                               ? " (no definite outcome after " + n +
                                                     " attempts: an earlier attempt may still land)"
                                               : " (nothing written after " + n + " attempts)"));
}

void S3ObjectStore::AbortMultipart(const std::string& key, const std::string& upload_id) {
  HttpRequest req;
  req.method = "DELETE";
  req.url = ObjectUrl(key) + "?" + s3::CanonicalQuery({{"uploadId", upload_id}});
  HttpResponse r = SendIdempotent(req, key);
  if (!Is2xx(r) && !(r.curl_code == 0 && r.status == 404)) {
    (void)HttpError("abort multipart upload", key, r);  // best effort (header comment)
  }
}

Status S3ObjectStore::PutMultipart(const std::string& key, std::string_view data, bool if_absent) {
  const char* op = if_absent ? "multipart PUT-if-absent" : "multipart PUT";
  const int64_t part = std::max<int64_t>(options_.multipart_part_bytes, 1);
  const int64_t size = static_cast<int64_t>(data.size());
  const int64_t parts = (size + part - 1) / part;
  if (parts > 10000) {
    return Status::Invalid("S3 " + std::string(op) + " '" + key + "': " + std::to_string(size) +
                           " bytes need " + std::to_string(parts) +
                           " parts; S3 allows 10,000 (raise multipart_part_bytes)");
  }
  if (if_absent) {
    auto head = Head(key);
    if (head.ok()) {
      return Status::AlreadyExists("S3 " + std::string(op) + " '" + key + "': key taken");
    }
    if (!head.status().IsNotFound()) return head.status();
  }
  // 1. Create the upload. A retry after a lost answer may leave an unused upload behind (no
  // object; parts are what cost storage, and it has none).
  HttpRequest init;
  init.method = "POST";
  init.url = ObjectUrl(key) + "?" + s3::CanonicalQuery({{"uploads", ""}});
  HttpResponse r = SendIdempotent(init, key);
  if (!Is2xx(r)) return HttpError(std::string(op) + " (create)", key, r);
  auto id_text = s3::XmlElement(r.body, "UploadId");
  if (!id_text.has_value() || id_text->empty()) {
    return Status::IOError("S3 " + std::string(op) + " '" + key +
                           "': CreateMultipartUpload answered no UploadId");
  }
  STRATA_ASSIGN_OR_RETURN(const std::string upload_id, s3::XmlUnescape(*id_text));
  // 2. The parts (idempotent: a part re-sent replaces itself).
  std::string complete = "<CompleteMultipartUpload>";
  for (int64_t i = 0; i < parts; ++i) {
    HttpRequest put;
    put.method = "PUT";
    put.url = ObjectUrl(key) + "?" +
              s3::CanonicalQuery({{"partNumber", std::to_string(i + 1)}, {"uploadId", upload_id}});
    put.body = data.substr(static_cast<size_t>(i * part),
                           static_cast<size_t>(std::min(part, size - i * part)));
    r = SendIdempotent(put, key);
    if (!Is2xx(r) || r.etag.empty()) {
      Status st =
          Is2xx(r) ? Status::IOError("S3 " + std::string(op) + " '" + key + "': part " +
                                     std::to_string(i + 1) + " answered no ETag")
                   : HttpError(std::string(op) + " (part " + std::to_string(i + 1) + ")", key, r);
      AbortMultipart(key, upload_id);
      return st;
    }
    complete += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + r.etag +
                "</ETag></Part>";
  }
  complete += "</CompleteMultipartUpload>";
  // 3. Complete. S3 may answer 200 with an <Error> body (the failure came after the headers);
  // a complete whose answer was lost is re-sent: a finished upload answers 404 NoSuchUpload,
  // then the stored size tells whether this upload made the object.
  HttpRequest fin;
  fin.method = "POST";
  fin.url = ObjectUrl(key) + "?" + s3::CanonicalQuery({{"uploadId", upload_id}});
  if (if_absent) fin.headers.push_back("If-None-Match: *");
  fin.body = complete;
  bool maybe_done = false;
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    if (attempt > 0) Backoff(attempt - 1);
    r = Send(fin, key);
    const bool error_body = Is2xx(r) && !s3::ErrorSummary(r.body).empty();
    if (Is2xx(r) && !error_body) return Status::OK();
    if (r.curl_code == 0 && r.status == 412) {
      AbortMultipart(key, upload_id);
      return Status::AlreadyExists("S3 " + std::string(op) + " '" + key +
                                   "' -> HTTP 412: key taken");
    }
    if (r.curl_code == 0 && r.status == 404 && maybe_done) {
      auto head = Head(key);
      if (head.ok() && head->size == size) return Status::OK();
      return Status::IOError("S3 " + std::string(op) + " '" + key +
                             "': the upload vanished after a complete with an unknown outcome");
    }
    if (!error_body && !Transient(r)) {
      AbortMultipart(key, upload_id);
      return HttpError(std::string(op) + " (complete)", key, r);
    }
    maybe_done = maybe_done || (!error_body && !r.not_sent);
  }
  Status st = HttpError(std::string(op) + " (complete)", key, r);
  if (!maybe_done) AbortMultipart(key, upload_id);
  return st;
}

Result<std::string> S3ObjectStore::GetImpl(const std::string& key, int64_t offset, int64_t length) {
  STRATA_RETURN_IF_ERROR(ValidateKey(key));
  const bool ranged = length >= 0;
  HttpRequest req;
  req.url = ObjectUrl(key);
  if (ranged) {
    if (offset < 0) {
      return Status::Invalid("range of '" + key + "' has a negative offset or length");
    }
    if (length == 0) {
      STRATA_RETURN_IF_ERROR(Head(key).status());
      return std::string();
    }
    std::string range = "Range: bytes=" + std::to_string(offset) + "-";
    if (length <= INT64_MAX - offset) range += std::to_string(offset + length - 1);
    req.headers.push_back(std::move(range));
  }
  const char* op = ranged ? "ranged GET" : "GET";
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    if (attempt > 0) Backoff(attempt - 1);
    HttpResponse r = SendIdempotent(req, key);
    if (r.curl_code == 0 && r.status == 404) {
      return Status::NotFound("S3 " + std::string(op) + " '" + key + "' -> HTTP 404: no such key");
    }
    if (ranged && r.curl_code == 0 && r.status == 416) return std::string();  // offset >= size
    if (!Is2xx(r)) return HttpError(op, key, r);
    if (!ranged) return std::move(r.body);
    if (r.status == 200) {  // the server ignored the range: slice the whole object
      if (offset >= static_cast<int64_t>(r.body.size())) return std::string();
      return r.body.substr(static_cast<size_t>(offset), static_cast<size_t>(length));
    }
    int64_t first = 0, last = 0;
    if (r.status != 206 || !ParseContentRange(r.content_range, &first, &last) || first != offset ||
        last < first || last - first + 1 > length) {
      return Status::IOError("S3 ranged GET '" + key + "' -> HTTP " + std::to_string(r.status) +
                             " with an unexpected Content-Range '" + r.content_range + "'");
    }
    if (static_cast<int64_t>(r.body.size()) == last - first + 1) return std::move(r.body);
    // A short body without a Content-Length: retry like any truncated transfer.
    if (attempt + 1 == options_.max_attempts) {
      return Status::IOError("S3 ranged GET '" + key +
                             "': truncated body: " + std::to_string(r.body.size()) + " of " +
                             std::to_string(last - first + 1) + " bytes");
    }
  }
  return Status::IOError("S3 ranged GET '" + key + "': no complete answer");
}

Result<std::string> S3ObjectStore::Get(const std::string& key) { return GetImpl(key, 0, -1); }

Result<std::string> S3ObjectStore::GetRange(const std::string& key, int64_t offset,
                                            int64_t length) {
  if (offset < 0 || length < 0) {
    return Status::Invalid("range of '" + key + "' has a negative offset or length");
  }
  return GetImpl(key, offset, length);
}

Result<ObjectMeta> S3ObjectStore::Head(const std::string& key) {
  STRATA_RETURN_IF_ERROR(ValidateKey(key));
  HttpRequest req;
  req.method = "HEAD";
  req.url = ObjectUrl(key);
  HttpResponse r = SendIdempotent(req, key);
  if (r.curl_code == 0 && r.status == 404) {
    return Status::NotFound("S3 HEAD '" + key + "' -> HTTP 404: no such key");
  }
  if (!Is2xx(r)) return HttpError("HEAD", key, r);
  if (r.content_length < 0) {
    return Status::IOError("S3 HEAD '" + key + "' -> HTTP " + std::to_string(r.status) +
                           " without a Content-Length");
  }
  return ObjectMeta{key, r.content_length, s3::ParseHttpDate(r.last_modified)};
}

Result<s3::ListPage> S3ObjectStore::ListPageOf(const std::string& full_prefix,
                                               const std::string& delimiter,
                                               const std::string& token) {
  std::vector<std::pair<std::string, std::string>> q = {
      {"list-type", "2"},
      {"max-keys", std::to_string(options_.list_page_size)},
      {"prefix", full_prefix}};
  if (!delimiter.empty()) q.emplace_back("delimiter", delimiter);
  if (!token.empty()) q.emplace_back("continuation-token", token);
  HttpRequest req;
  req.url = options_.endpoint + "/" + options_.bucket + "?" + s3::CanonicalQuery(std::move(q));
  HttpResponse r = SendIdempotent(req, full_prefix);
  if (!Is2xx(r)) return HttpError("LIST", full_prefix, r);
  return s3::ParseListPage(r.body);
}

Result<std::vector<ObjectMeta>> S3ObjectStore::List(const std::string& prefix) {
  const std::string root = options_.prefix.empty() ? "" : options_.prefix + "/";
  std::vector<ObjectMeta> out;
  std::string token;
  do {
    STRATA_ASSIGN_OR_RETURN(s3::ListPage page, ListPageOf(root + prefix, "", token));
    for (auto& obj : page.objects) {
      if (obj.key.compare(0, root.size(), root) != 0) continue;
      out.push_back(ObjectMeta{obj.key.substr(root.size()), obj.size, obj.mtime_micros});
    }
    token = page.truncated ? page.next_token : "";
  } while (!token.empty());
  std::sort(out.begin(), out.end(),
            [](const ObjectMeta& a, const ObjectMeta& b) { return a.key < b.key; });
  return out;
}

Result<std::vector<std::string>> S3ObjectStore::ListChildren(const std::string& prefix) {
  if (!prefix.empty() && prefix.back() != '/') {
    return Status::Invalid("ListChildren prefix '" + prefix + "' must be empty or end with '/'");
  }
  const std::string full = (options_.prefix.empty() ? "" : options_.prefix + "/") + prefix;
  std::vector<std::string> out;
  std::string token;
  do {
    STRATA_ASSIGN_OR_RETURN(s3::ListPage page, ListPageOf(full, "/", token));
    for (auto& p : page.common_prefixes) {
      if (p.size() <= full.size() + 1 || p.compare(0, full.size(), full) != 0 || p.back() != '/') {
        continue;
      }
      out.push_back(p.substr(full.size(), p.size() - full.size() - 1));
    }
    token = page.truncated ? page.next_token : "";
  } while (!token.empty());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Status S3ObjectStore::Remove(const std::string& key) {
  STRATA_RETURN_IF_ERROR(ValidateKey(key));
  HttpRequest req;
  req.method = "DELETE";
  req.url = ObjectUrl(key);
  HttpResponse r = SendIdempotent(req, key);
  if (Is2xx(r) || (r.curl_code == 0 && r.status == 404)) return Status::OK();
  return HttpError("DELETE", key, r);
}

}  // namespace strata::io
