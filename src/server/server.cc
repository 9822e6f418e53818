#include "server/server.h"

#include <pthread.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string_view>

#include <spdlog/spdlog.h>

#include "server/api_keys.h"
#include "server/http_server.h"
#include "server/request_log.h"

namespace strata::server {

Status RunServer(const ServerOptions& flags) {
  // Logs go to stderr (stdout carries the "listening" line); SPDLOG_LEVEL overrides
  // --log-level.
  STRATA_ASSIGN_OR_RETURN(LogFormat log_format, ParseLogFormat(flags.log_format));
  STRATA_RETURN_IF_ERROR(ConfigureLogging(log_format, flags.log_level));

  // --api-key united with STRATA_API_KEYS (ApiKeys drops empty entries and duplicates).
  ServerOptions options = flags;
  if (const char* env = std::getenv(kApiKeysEnv)) {
    std::string_view rest(env);
    while (true) {
      const size_t comma = rest.find(',');
      options.api_keys.emplace_back(rest.substr(0, comma));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  const ApiKeys keys = ApiKeys::FromFlagsAndEnv(options.api_keys, nullptr);

  // Block SIGINT/SIGTERM before any thread starts, so only the sigtimedwait below sees them.
  sigset_t stop_signals, old_mask;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &old_mask);

  Result<std::unique_ptr<HttpServer>> started = HttpServer::Start(options);
  if (!started.ok()) {
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    return started.status();
  }
  std::unique_ptr<HttpServer> server = std::move(*started);
  std::printf("strata listening on %s\n", server->url().c_str());
  std::fflush(stdout);
  if (options.store_url.empty()) {
    spdlog::info("serving data directory {} on {}", options.data_dir, server->url());
  } else {
    spdlog::info("serving {} on {}", options.store_url, server->url());
  }
  if (keys.enabled()) {
    spdlog::info(
        "API keys required on every route but GET /healthz, /readyz, /console/ ({} key{} "
        "configured)",
        keys.size(), keys.size() == 1 ? "" : "s");
  }

  const timespec tick{0, 200 * 1000 * 1000};
  while (server->running()) {
    const int sig = sigtimedwait(&stop_signals, nullptr, &tick);
    if (sig == SIGINT || sig == SIGTERM) {
      spdlog::info("received signal {}, stopping", sig);
      break;
    }
  }
  const bool listener_failed = !server->running();
  // Graceful: refuse new connections, let in-flight requests finish (bounded).
  const auto t0 = std::chrono::steady_clock::now();
  if (!server->Stop(std::chrono::seconds(options.shutdown_timeout_s))) {
    // Handlers still use the tables, so the writers cannot be closed under them. Writes
    // acknowledged on durable tables are already in the WAL (replayed on restart).
    spdlog::error(
        "requests still running after --shutdown-timeout-s={} s; exiting without "
        "closing the table writers",
        options.shutdown_timeout_s);
    spdlog::default_logger()->flush();
    std::fflush(stdout);
    std::_Exit(1);
  }
  const double drain_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // Closes the catalog: every table closes its shard writer, which makes the WAL appends of
  // non-durable puts durable (ShardWriter::close) and stops the flusher and indexer.
  server.reset();
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  spdlog::info("stopped: in-flight requests drained in {:.0f} ms, WALs durable, writers closed",
               drain_ms);
  if (listener_failed) return Status::IOError("the HTTP listener stopped unexpectedly");
  return Status::OK();
}

}  // namespace strata::server
