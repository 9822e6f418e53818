#include "server/http_server.h"

#include <algorithm>
#include <chrono>
#include <csignal>

#include <spdlog/spdlog.h>

#include "server/router.h"

namespace strata::server {

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const ServerOptions& options) {
  std::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<HttpServer> server(new HttpServer());
  server->ctx_.options = options;
  shard::ShardWriterOptions shard_options = options.shard;
  // Also with the floor off (0): its free space is still reported (describe, /metrics).
  shard_options.free_space =
      io::FreeSpaceFloor::ForDirectory(options.data_dir, options.min_free_bytes);
  STRATA_ASSIGN_OR_RETURN(
      server->ctx_.catalog,
      table::Catalog::Open(options.data_dir, shard_options, options.compaction, options.recovery));

  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  // Each keep-alive connection holds a worker while it is open, so keep a generous pool.
  const size_t threads =
      options.threads > 0 ? static_cast<size_t>(options.threads) : std::max<size_t>(8, 2 * hw);
  server->svr_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // A stalled client holds a worker for at most read_timeout_s per read; results over slow
  // links get 60 s per write.
  server->svr_.set_read_timeout(std::max(1, options.read_timeout_s));
  server->svr_.set_write_timeout(60);
  // An idle keep-alive connection holds a worker, and Stop() waits for it to time out
  // (cpp-httplib 0.11 checks for shutdown only between requests): keep the idle timeout short
  // and let a busy connection serve many requests.
  server->svr_.set_keep_alive_timeout(2);
  server->svr_.set_keep_alive_max_count(1000);
  // cpp-httplib sends the response head and body in separate writes; with Nagle on, the body
  // waits for the client's delayed ACK (~40 ms on Linux) on every keep-alive request.
  // Accepted sockets inherit TCP_NODELAY from the listening socket.
  server->svr_.set_tcp_nodelay(true);
  RegisterRoutes(server->svr_, server->ctx_);

  int port = options.port;
  if (port == 0) {
    port = server->svr_.bind_to_any_port(options.host);
    if (port < 0) port = 0;
  } else if (!server->svr_.bind_to_port(options.host, port)) {
    port = 0;
  }
  if (port <= 0) {
    return Status::IOError("cannot listen on " + options.host + ":" + std::to_string(options.port) +
                           " (address in use or not local?)");
  }
  server->port_ = port;
  HttpServer* self = server.get();
  server->listener_ = std::thread([self] {
    if (!self->svr_.listen_after_bind()) spdlog::debug("listener stopped");
    self->listener_done_.store(true);
  });
  return server;
}

HttpServer::~HttpServer() { Stop(); }

std::string HttpServer::url() const {
  return "http://" + ctx_.options.host + ":" + std::to_string(port_);
}

void HttpServer::Stop() { Stop(std::chrono::milliseconds::max()); }

bool HttpServer::Stop(std::chrono::milliseconds timeout) {
  ctx_.shutting_down.store(true);
  if (!listener_.joinable()) return true;
  const auto start = std::chrono::steady_clock::now();
  bool stop_sent = false;
  // The listener thread may not have entered its accept loop yet; stop() only acts once it
  // has, so retry until it did. Then the loop ends once every worker finished (the pool
  // drains its queue before joining).
  while (!listener_done_.load()) {
    if (!stop_sent && svr_.is_running()) {
      svr_.stop();
      stop_sent = true;
    }
    // Compare in milliseconds: converting milliseconds::max() (Stop()) to the clock's
    // nanoseconds would overflow.
    if (std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                              start) > timeout) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(stop_sent ? 5 : 1));
  }
  listener_.join();
  return true;
}

}  // namespace strata::server
