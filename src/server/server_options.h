// Options of `strata serve`. Plain data; copy freely.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/base_table.h"
#include "shard/shard_writer.h"
#include "table/writer_recovery.h"

namespace strata::server {

/// Per-request limits (strata serve flags; checked by server/write_limits.h). A request over a
/// limit is answered 400 invalid_input naming the limit, its value and the flag, and changes
/// nothing.
struct RequestLimits {
  /// Rows one write may carry: create/, insert/ (Arrow and JSON), merge_insert/ uploads, and
  /// the rows an update/ rewrites (--max-rows-per-write).
  int64_t max_rows_per_write = 1000000;
  /// Widest vector (fixed_size_list) column a create/ or overwrite may declare
  /// (--max-vector-dim); at most kHardMaxVectorDim.
  int64_t max_vector_dim = 65536;
  /// Largest k of a vector or full-text query (--max-k); plain scans have no limit.
  int64_t max_k = 100000;
  /// Longest SQL filter / predicate text in bytes (--max-filter-bytes); at most the SQL
  /// parser's own limit (query::filter::ParseOptions::max_length, 64 KiB).
  int64_t max_filter_bytes = 65536;
  /// Largest single utf8/binary value in a write, bytes (--max-string-bytes).
  int64_t max_string_bytes = 16LL << 20;

  /// The ceiling of max_vector_dim (DESIGN.md §9: vectors of at most 65,536 dimensions).
  static constexpr int64_t kHardMaxVectorDim = 65536;
};

struct ServerOptions {
  /// Root data directory; databases are folders under it, tables folders under those.
  std::string data_dir = "./data";
  /// Where the data lives instead of data_dir (--store): empty = the local directory
  /// data_dir; "s3://BUCKET/PREFIX" = an S3-compatible store at s3_endpoint
  /// (io/s3_object_store.h), credentials and region from AWS_ACCESS_KEY_ID,
  /// AWS_SECRET_ACCESS_KEY and AWS_REGION.
  std::string store_url;
  /// S3 endpoint URL for store_url (--s3-endpoint; default STRATA_S3_ENDPOINT).
  std::string s3_endpoint;
  /// Listen address; loopback by default so a fresh install is not exposed.
  std::string host = "127.0.0.1";
  /// TCP port; 0 picks a free port (printed on start). A port another process listens on
  /// fails the start (never shared: no SO_REUSEPORT).
  int port = 8080;
  /// Take an exclusive lock on the local data directory (server/data_dir_lock.h) so that a
  /// second server on it fails to start, naming the holder's pid (--no-data-dir-lock turns
  /// it off: tests of fencing run two servers on one directory). Not used with store_url: an
  /// object store cannot be locked; the writer-epoch fence protects it.
  bool lock_data_dir = true;
  /// HTTP worker threads serving requests (--threads; 0 = max(8, 2 x cores)). Idle and
  /// half-received connections wait in the listener's event loop, not in a worker.
  int threads = 0;
  /// Largest accepted request body in bytes (413 payload_too_large above it).
  int64_t max_body_bytes = 256LL << 20;
  /// Seconds one socket read (headers or a piece of the body) may wait for the client before
  /// the connection is dropped (strata serve --read-timeout-s). Bounds how long a stalled
  /// client holds a worker thread per read; it is not a deadline for the whole body.
  int read_timeout_s = 30;
  /// Connection handling (server/http_listener.h): a request head must arrive within
  /// header_timeout_ms of its first byte (--header-timeout-ms), an idle keep-alive connection
  /// is closed after idle_timeout_ms (--idle-timeout-ms), and at most max_connections
  /// (--max-connections) connections are open, max_connections_per_ip from one address
  /// (--max-connections-per-ip); beyond, 503 too_many_connections.
  int header_timeout_ms = 10000;
  int idle_timeout_ms = 60000;
  int max_connections = 768;
  int max_connections_per_ip = 256;
  /// After transfer_grace_ms, a request body and then its response must move at least
  /// min_transfer_rate_bytes per second on average (--min-transfer-rate-bytes, 0 = off;
  /// --transfer-grace-ms), or the connection is dropped and its worker freed.
  int64_t min_transfer_rate_bytes = 16 * 1024;
  int transfer_grace_ms = 10000;
  /// After a response, a worker waits up to this many microseconds for the next request on
  /// the same keep-alive connection while another worker is idle (--keepalive-linger-us;
  /// 0 = hand the connection straight back to the event loop). HttpListener::linger.
  int keepalive_linger_us = 1000;
  /// The first part of that wait polls without sleeping (--keepalive-spin-us; 0 = sleep at
  /// once). HttpListener::spin.
  int keepalive_spin_us = 50;
  /// Rows per write, vector dimension, k, filter length, string value size.
  RequestLimits limits;
  /// Shard writer options of every table (MemTable sizes, durability, backpressure).
  shard::ShardWriterOptions shard;
  /// Compaction of every table's SSTables into its base (DESIGN.md §7): triggers and limits.
  base::CompactionOptions compaction;
  /// Free-space floor of the data directory in bytes (--min-free-bytes): below it writes are
  /// refused with 507 insufficient_storage. -1 = the default (io/free_space.h: 256 MiB, at
  /// most 5% of the filesystem); 0 = no floor.
  int64_t min_free_bytes = -1;
  /// Bound on the base fragments' mapped pages resident in the process (--cache-bytes;
  /// io/mapped_file_cache.h): -1 = a quarter of physical memory; 0 = no bound.
  int64_t cache_bytes = -1;
  /// Budget of the 8-bit vector codes exact searches keep per batch (--vector-code-bytes;
  /// index/vector/sq8_cache.h): -1 = a sixteenth of physical memory; 0 = no codes.
  int64_t vector_code_bytes = -1;
  /// Budget of the bits of repeated filters' passing rows per source (--filter-cache-bytes;
  /// query/filter_bits_cache.h): -1 = 1/256 of physical memory; 0 = no cache.
  int64_t filter_cache_bytes = -1;
  /// Where local copies of an object store's data files go (--cache-dir; io/fetched_file.h),
  /// in a "strata-fetch-{pid}" sub-directory. "" = $TMPDIR or /tmp. Unused on a local disk.
  std::string cache_dir;
  /// Background reopening of poisoned shard writers (table/writer_recovery.h).
  table::RecoveryOptions recovery;

  // --- Operations (api_keys.h, request_dedupe.h, request_log.h) ---
  /// Keys of --api-key (repeatable); united with STRATA_API_KEYS when the server starts. When
  /// any key is set every route but GET /healthz, /readyz and /console/ needs a matching
  /// x-api-key (401 otherwise).
  std::vector<std::string> api_keys;
  /// Most remembered write answers by x-request-id, for insert/ and for the other writes each
  /// (--dedupe-max-entries; 0 disables).
  size_t dedupe_max_entries = 10000;
  /// Seconds a remembered answer is kept (--dedupe-ttl-s).
  int dedupe_ttl_s = 600;
  /// "text" (key=value) or "json" (one object per line) (--log-format).
  std::string log_format = "text";
  /// spdlog level name (--log-level); SPDLOG_LEVEL in the environment overrides it.
  std::string log_level = "info";
  /// On SIGTERM/SIGINT, seconds in-flight requests may take before the server exits anyway
  /// (--shutdown-timeout-s).
  int shutdown_timeout_s = 30;
};

}  // namespace strata::server
