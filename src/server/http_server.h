// A running Strata REST server: the catalog plus the HTTP listener (http_listener.h: an epoll
// loop and a worker pool running cpp-httplib's request processing). RunServer (server.h) wraps it
// with signal handling; tests start it in-process on port 0. Thread-safety: Start/Stop from one
// controlling thread; requests are served concurrently on the worker pool (ServerOptions::threads).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "common/status.h"
#include "server/data_dir_lock.h"
#include "server/http_listener.h"
#include "server/server_context.h"
#include "server/server_options.h"

namespace strata::server {

class HttpServer {
 public:
  /// Locks the local data directory (options.lock_data_dir; data_dir_lock.h), binds
  /// options.host:port (port 0 = any free port; a taken port is an error, never shared),
  /// then opens the catalog under options.data_dir (or options.store_url) and starts serving:
  /// a server that cannot have the directory or the port touches no table.
  /// Ignores SIGPIPE process-wide (a client that disconnects mid-response must not kill the
  /// server).
  /// Errors: AlreadyExists naming the holder's pid when another server holds the data
  /// directory; IOError naming the port when it is in use or cannot be bound; IOError when
  /// the data directory cannot be used.
  static Result<std::unique_ptr<HttpServer>> Start(const ServerOptions& options);

  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// The bound TCP port.
  int port() const { return port_; }
  /// "http://HOST:PORT".
  std::string url() const;
  /// Requests served by a worker that lingered for them on a keep-alive connection.
  int64_t lingered_requests() const { return svr_.lingered_requests(); }
  /// True until Stop() or a fatal listener error.
  bool running() const { return !stopped_.load(); }

  /// Stops accepting connections, lets in-flight requests finish, joins the threads.
  /// Idempotent.
  void Stop();

  /// Stop() bounded by `timeout`: closes the listening socket at once (new connections are
  /// refused) and every idle or half-received connection, then waits for the requests in
  /// flight (their connections close after the response). Returns true when everything
  /// finished (threads joined); false when requests were still running at the deadline (the
  /// server is then left running them and must not be destroyed before they end: the caller
  /// exits the process).
  bool Stop(std::chrono::milliseconds timeout);

 private:
  HttpServer() = default;

  // Declared first, so released last: after the catalog closed its writers.
  std::unique_ptr<DataDirLock> dir_lock_;
  ServerContext ctx_;
  HttpListener svr_;
  int port_ = 0;
  std::atomic<bool> stopped_{false};
};

}  // namespace strata::server
