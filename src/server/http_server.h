// A running Strata REST server: the catalog plus a cpp-httplib server listening on a background
// thread. RunServer (server.h) wraps it with signal handling; tests start it in-process on
// port 0.
// Thread-safety: Start/Stop from one controlling thread; requests are served concurrently on
// the worker pool (ServerOptions::threads).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include <httplib.h>

#include "common/status.h"
#include "server/server_context.h"
#include "server/server_options.h"

namespace strata::server {

class HttpServer {
 public:
  /// Opens the catalog under options.data_dir (replaying WALs), binds options.host:port
  /// (port 0 = any free port) and starts serving. Ignores SIGPIPE process-wide (a client that
  /// disconnects mid-response must not kill the server).
  /// Errors: IOError when the data directory cannot be used or the address cannot be bound.
  static Result<std::unique_ptr<HttpServer>> Start(const ServerOptions& options);

  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// The bound TCP port.
  int port() const { return port_; }
  /// "http://HOST:PORT".
  std::string url() const;
  /// True until Stop() or a fatal listener error.
  bool running() const { return !listener_done_.load(); }

  /// Stops accepting connections, lets in-flight requests finish, joins the threads.
  /// Idempotent.
  void Stop();

 private:
  HttpServer() = default;

  ServerContext ctx_;
  httplib::Server svr_;
  int port_ = 0;
  std::thread listener_;
  std::atomic<bool> listener_done_{false};
};

}  // namespace strata::server
