#include "server/http_server.h"

#include <algorithm>
#include <chrono>
#include <csignal>

#include <spdlog/spdlog.h>

#include "index/vector/sq8_cache.h"
#include "io/fetched_file.h"
#include "io/mapped_file_cache.h"
#include "io/s3_object_store.h"
#include "query/filter_bits_cache.h"
#include "server/router.h"

namespace strata::server {

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const ServerOptions& options) {
  std::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<HttpServer> server(new HttpServer());
  server->ctx_.options = options;
  // Before anything touches the data: a second server on the same local directory or on a
  // taken port stops here, without claiming (fencing) the first server's tables.
  if (options.store_url.empty() && options.lock_data_dir) {
    STRATA_ASSIGN_OR_RETURN(server->dir_lock_, DataDirLock::Acquire(options.data_dir));
  }
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  // Idle and half-received connections wait in the listener's epoll loop, not in a worker,
  // so the pool only needs to cover requests being served.
  ListenerOptions lo;
  lo.host = options.host;
  lo.port = options.port;
  lo.workers =
      options.threads > 0 ? static_cast<size_t>(options.threads) : std::max<size_t>(8, 2 * hw);
  lo.io_timeout = std::chrono::seconds(std::max(1, options.read_timeout_s));
  lo.write_timeout = std::chrono::seconds(60);
  lo.header_timeout = std::chrono::milliseconds(std::max(100, options.header_timeout_ms));
  lo.idle_timeout = std::chrono::milliseconds(std::max(100, options.idle_timeout_ms));
  lo.max_connections = static_cast<size_t>(std::max(1, options.max_connections));
  lo.max_connections_per_ip = static_cast<size_t>(std::max(1, options.max_connections_per_ip));
  lo.min_transfer_rate = static_cast<size_t>(std::max<int64_t>(0, options.min_transfer_rate_bytes));
  lo.transfer_grace = std::chrono::milliseconds(std::max(0, options.transfer_grace_ms));
  lo.linger = std::chrono::microseconds(std::max(0, options.keepalive_linger_us));
  lo.spin = std::chrono::microseconds(std::max(0, options.keepalive_spin_us));
  STRATA_ASSIGN_OR_RETURN(server->port_, server->svr_.Bind(lo));

  // The bound on mapped base pages (io/mapped_file_cache.h): set before any table opens, so
  // the baseline is the binary's and libraries' pages only.
  const int64_t cache_bytes = io::CacheBytesOrDefault(options.cache_bytes);
  io::MappedFileCache::Global().SetLimit(cache_bytes);
  index::Sq8Cache::Global().SetBudget(
      options.vector_code_bytes < 0 ? index::Sq8Cache::DefaultBudget() : options.vector_code_bytes);
  query::FilterBitsCache::Global().SetBudget(options.filter_cache_bytes < 0
                                                 ? query::FilterBitsCache::DefaultBudget()
                                                 : options.filter_cache_bytes);
  spdlog::info("--cache-bytes {}: mapped base pages resident in the process are bounded to {}",
               options.cache_bytes,
               cache_bytes == 0 ? std::string("no bound") : std::to_string(cache_bytes) + " bytes");
  io::MappedFileCache::Global().StartPoller(std::chrono::milliseconds(20));

  shard::ShardWriterOptions shard_options = options.shard;
  if (!options.store_url.empty()) {
    // An S3 bucket: no local free-space floor applies.
    io::S3Options s3;
    s3.endpoint = options.s3_endpoint;
    STRATA_RETURN_IF_ERROR(io::ParseS3Url(options.store_url, &s3));
    STRATA_ASSIGN_OR_RETURN(s3, io::S3OptionsFromEnv(std::move(s3)));
    STRATA_ASSIGN_OR_RETURN(auto store, io::S3ObjectStore::Open(std::move(s3)));
    if (!options.cache_dir.empty()) {
      STRATA_RETURN_IF_ERROR(io::FetchedFiles::Global().SetRoot(options.cache_dir));
    }
    STRATA_ASSIGN_OR_RETURN(std::string fetch_dir, io::FetchedFiles::Global().Directory());
    spdlog::info("data files of the object store are copied to {} and mapped there", fetch_dir);
    STRATA_ASSIGN_OR_RETURN(
        server->ctx_.catalog,
        table::Catalog::Open(std::shared_ptr<io::ObjectStore>(store), shard_options,
                             options.compaction, options.recovery));
  } else {
    // Also with the floor off (0): its free space is still reported (describe, /metrics).
    shard_options.free_space =
        io::FreeSpaceFloor::ForDirectory(options.data_dir, options.min_free_bytes);
    STRATA_ASSIGN_OR_RETURN(server->ctx_.catalog,
                            table::Catalog::Open(options.data_dir, shard_options,
                                                 options.compaction, options.recovery));
  }

  RegisterRoutes(server->svr_, server->ctx_);
  STRATA_RETURN_IF_ERROR(server->svr_.Start(lo).status());
  return server;
}

HttpServer::~HttpServer() { Stop(); }

std::string HttpServer::url() const {
  return "http://" + ctx_.options.host + ":" + std::to_string(port_);
}

void HttpServer::Stop() { Stop(std::chrono::milliseconds::max()); }

bool HttpServer::Stop(std::chrono::milliseconds timeout) {
  ctx_.shutting_down.store(true);
  svr_.Shutdown();
  // Compare in milliseconds: converting milliseconds::max() (Stop()) to the clock's
  // nanoseconds would overflow.
  const auto now = std::chrono::steady_clock::now();
  const auto deadline = timeout >= std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::chrono::steady_clock::time_point::max() - now)
                            ? std::chrono::steady_clock::time_point::max()
                            : now + timeout;
  if (!svr_.Join(deadline)) return false;
  stopped_.store(true);
  return true;
}

}  // namespace strata::server
