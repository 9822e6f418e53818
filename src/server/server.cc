#include "server/server.h"

#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <ctime>

#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "server/http_server.h"

namespace strata::server {

Status RunServer(const ServerOptions& options) {
  // Logs go to stderr (stdout carries the "listening" line); SPDLOG_LEVEL=debug shows requests.
  auto logger = spdlog::stderr_color_mt("strata");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::info);
  spdlog::cfg::load_env_levels();

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
  spdlog::info("serving data directory {} on {}", options.data_dir, server->url());

  const timespec tick{0, 200 * 1000 * 1000};
  while (server->running()) {
    const int sig = sigtimedwait(&stop_signals, nullptr, &tick);
    if (sig == SIGINT || sig == SIGTERM) {
      spdlog::info("received signal {}, stopping", sig);
      break;
    }
  }
  const bool listener_failed = !server->running();
  server->Stop();
  server.reset();  // closes the catalog (tables flush their state on destruction)
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  spdlog::info("stopped");
  if (listener_failed) return Status::IOError("the HTTP listener stopped unexpectedly");
  return Status::OK();
}

}  // namespace strata::server
