// ObjectStore on an S3-compatible service (tested against Ceph radosgw 16.2), path-style:
// key "a/b" is the object "{prefix}/a/b" of bucket {bucket} at {endpoint}/{bucket}/{prefix}/a/b.
//
// S3 API facts relied on (all checked against radosgw, shared/notes/object_store.md):
// - PUT is atomic and durable when it returns 200; a GET after it sees the new bytes and a
//   ListObjectsV2 after it lists the key (read-after-write and list-after-write consistency).
// - PUT with "If-None-Match: *" writes only when no object has the key, atomically: exactly one
//   of many concurrent writers gets 200, the others 412 PreconditionFailed (-> AlreadyExists).
//   AWS may answer 409 ConditionalRequestConflict while a competing write is in flight: nothing
//   was written, so the put is retried.
// - GET with "Range: bytes=a-b" answers 206 with the bytes that exist; 416 when `a` is at or past
//   the end (-> empty result for an existing object). A 200 (range ignored) is sliced here.
// - HEAD gives Content-Length and Last-Modified (RFC 1123, whole seconds -> mtime_micros).
// - ListObjectsV2 returns keys in UTF-8 binary order, at most max-keys per page, with
//   NextContinuationToken while IsTruncated; with delimiter '/' the sub-folders come back as
//   CommonPrefixes. LastModified in listings is ISO 8601 (milliseconds).
// - DELETE of a missing key is 204 (or 404 on some services; both are OK here).
// - SigV4 signing is libcurl's (io/s3_http.h lists its quirks).
//
// Errors: NotFound (404 on GET/HEAD); AlreadyExists (412 on PutIfAbsent); Invalid (malformed
// key or range); IOError for everything else, naming the operation, the key and the HTTP status
// with the S3 error code (e.g. "S3 PUT 'db/x' -> HTTP 403 SignatureDoesNotMatch"), or the curl
// error. A GET body shorter than its Content-Length (or Content-Range) is an IOError
// ("truncated"), never returned as data.
//
// Retries: Get, GetRange, Head, List, ListChildren, Put and Remove are idempotent and are retried
// with exponential backoff and full jitter (retry_base_ms doubling up to retry_max_ms,
// max_attempts in all) on transport errors, timeouts, truncated bodies, 5xx, 408 and 429.
// PutIfAbsent is never re-sent blindly: when its outcome is unknown (the request may have reached
// the server but no definite answer came back), the object is read back: absent -> the put is
// re-sent; the same bytes -> OK (this writer's put landed, or another writer stored identical
// bytes, which readers cannot tell apart); other bytes -> AlreadyExists.
//
// Large objects: a put above max_single_put_bytes (default 5 GiB, S3's limit for one PUT) is a
// multipart upload (CreateMultipartUpload, UploadPart of multipart_part_bytes each, retried per
// part, CompleteMultipartUpload; AbortMultipartUpload when a step fails for good). A
// PutIfAbsent that large first checks HEAD (AlreadyExists when the key is taken) and sends
// "If-None-Match: *" with the complete, which AWS S3 evaluates atomically; Ceph radosgw 16.2
// ignores it there (measured: the complete overwrote an existing key), so on radosgw a
// put-if-absent above the limit is only as safe as its key is unique. Strata's fencing objects
// (manifests, WAL entries) are far below the limit; large objects (SSTable data, base
// fragments, index checkpoints) have random names.
//
// RenamePrefix: NotSupported (the default). S3 has no atomic multi-object move; a table rename
// on S3 needs a catalog-level indirection.
//
// Thread-safety: safe from many threads; requests run concurrently over a pool of libcurl easy
// handles (connections are kept alive and reused).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "io/object_store.h"
#include "io/s3_http.h"
#include "io/s3_wire.h"

namespace strata::io {

struct S3Options {
  std::string endpoint;  // "http://127.0.0.1:17480" (scheme, host, port; no path)
  std::string region = "us-east-1";
  std::string bucket;
  std::string prefix;  // folder inside the bucket ("" or "a/b", no leading/trailing '/')
  std::string access_key;
  std::string secret_key;
  std::string session_token;  // optional (AWS_SESSION_TOKEN)
  int max_attempts = 5;       // per operation, first try included
  int retry_base_ms = 25;
  int retry_max_ms = 2000;
  int list_page_size = 1000;  // max-keys per ListObjectsV2 request (tests use small pages)
  /// Puts above this many bytes are multipart uploads (S3 refuses a single PUT over 5 GiB).
  int64_t max_single_put_bytes = int64_t{5} << 30;
  /// Part size of a multipart upload (S3: at least 5 MiB except the last part; at most 10,000
  /// parts, so objects up to 640 GB at the default).
  int64_t multipart_part_bytes = int64_t{64} << 20;
  long connect_timeout_ms = 3000;
  long stall_timeout_s = 20;
  long total_timeout_ms = 120'000;
};

/// Options from the environment: STRATA_S3_ENDPOINT, STRATA_S3_BUCKET, STRATA_S3_PREFIX
/// (optional), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (optional), and
/// AWS_REGION or AWS_DEFAULT_REGION (default us-east-1). Fields set in `base` win over the
/// environment. Errors: Invalid naming the first missing variable.
Result<S3Options> S3OptionsFromEnv(S3Options base = {});

/// Parses "s3://BUCKET/PREFIX" (prefix optional) into `options`. Errors: Invalid.
Status ParseS3Url(const std::string& url, S3Options* options);

class S3ObjectStore : public ObjectStore {
 public:
  /// Checks the options and that the bucket answers (HEAD bucket). Errors: Invalid for bad
  /// options; NotFound when the bucket does not exist; IOError when the endpoint does not
  /// answer or refuses the credentials.
  static Result<std::shared_ptr<S3ObjectStore>> Open(S3Options options);

  Status Put(const std::string& key, std::string_view data) override;
  Status PutIfAbsent(const std::string& key, std::string_view data) override;
  Result<std::string> Get(const std::string& key) override;
  Result<std::string> GetRange(const std::string& key, int64_t offset, int64_t length) override;
  Result<ObjectMeta> Head(const std::string& key) override;
  Result<std::vector<ObjectMeta>> List(const std::string& prefix) override;
  Result<std::vector<std::string>> ListChildren(const std::string& prefix) override;
  Status Remove(const std::string& key) override;

  const S3Options& options() const { return options_; }
  /// Easy handles created so far (connection reuse: stays at the peak concurrency).
  int handles_created() const { return http_.handles_created(); }

  /// Requests sent so far (retries and read-backs included) and TCP connections opened for
  /// them: with reuse, sequential requests open one connection.
  int64_t requests_sent() const { return requests_.load(); }
  int64_t connections_opened() const { return connections_.load(); }

  /// Test hook, consulted before each exchange with its method and key (set it before
  /// concurrent use). kLoseRequest reports a timeout without sending anything; kLoseResponse
  /// sends the request and then reports a broken connection instead of the answer, as if the
  /// network failed after the server acted.
  enum class Fault { kNone, kLoseRequest, kLoseResponse };
  std::function<Fault(const std::string& method, const std::string& key)> fault_for_test;

 private:
  explicit S3ObjectStore(S3Options options);

  std::string ObjectUrl(const std::string& key) const;  // key relative to the prefix
  std::string FullKey(const std::string& key) const;
  s3::HttpResponse Send(s3::HttpRequest request, const std::string& key);
  /// Sends `request` until it gets a definite answer (2xx, 3xx or 4xx other than 408/429) or
  /// runs out of attempts; the last response either way.
  s3::HttpResponse SendIdempotent(const s3::HttpRequest& request, const std::string& key);
  void Backoff(int attempt) const;
  Result<std::string> GetImpl(const std::string& key, int64_t offset, int64_t length);
  /// The multipart upload of a put above max_single_put_bytes (see the header comment).
  Status PutMultipart(const std::string& key, std::string_view data, bool if_absent);
  /// Aborts upload `upload_id` of `key` (best effort: a failure leaves parts that a bucket
  /// lifecycle rule or a later abort removes).
  void AbortMultipart(const std::string& key, const std::string& upload_id);
  Result<s3::ListPage> ListPageOf(const std::string& full_prefix, const std::string& delimiter,
                                  const std::string& token);

  const S3Options options_;
  s3::HttpClient http_;
  std::atomic<int64_t> requests_{0};
  std::atomic<int64_t> connections_{0};
};

}  // namespace strata::io
