// The HTTP front end: accepts connections and keeps every connection that is idle or still
// sending its request head in one epoll loop, and hands a connection to a bounded worker pool
// only once a whole request head has arrived. cpp-httplib (0.11) then parses and routes that
// request (Server::process_request over our own Stream) on the worker; after the response the
// connection returns to the loop, so an idle keep-alive connection never holds a worker.
//
// Why (issue "Query path near the engine's limit"): cpp-httplib's own listener gives each
// connection a worker for its whole life, so 8 idle keep-alive clients stalled an 8-worker
// server and 16 clients that sent half a request line made `/healthz` time out. Here:
//   - a request head must be complete within `header_timeout` of its first byte (of the
//     connection's accept for the first request), else the connection is closed: a client
//     that trickles a request line ties up one epoll entry, not a worker;
//   - idle keep-alive connections are closed after `idle_timeout`;
//   - at most `max_connections` connections in all and `max_connections_per_ip` per client
//     address; beyond, a new connection gets `503` and is closed;
//   - a head larger than `max_header_bytes` gets `431` and the connection is closed;
//   - bodies and responses are read and written by the worker with `io_timeout` per
//     operation (poll) and, after `transfer_grace`, at least `min_transfer_rate` bytes per
//     second on average, so a client trickling a body or not reading its response releases
//     its worker after seconds, not never;
//   - a request whose head arrived is answered even while stopping (Connection: close), and
//     so is one whose client half-closed after sending it;
//   - out of descriptors, accepting pauses (100 ms at a time) instead of spinning.
// Pipelined requests are served in order (bytes read past a head stay with the connection).
// Thread-safety: Start/Shutdown/Join from one controlling thread; the loop thread owns the
// connection table; workers own the connection they serve and hand it back through a queue
// guarded by `mu_`.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <httplib.h>

#include "common/status.h"

namespace strata::server {

struct ListenerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0 = any free port
  size_t workers = 8;
  std::chrono::milliseconds header_timeout{10000};
  std::chrono::milliseconds idle_timeout{60000};
  std::chrono::milliseconds io_timeout{30000};
  std::chrono::milliseconds write_timeout{60000};
  // Below FD_SETSIZE (1024): cpp-httplib 0.11 answers 500 on a socket number above it.
  size_t max_connections = 768;
  size_t max_connections_per_ip = 256;
  size_t max_header_bytes = 64 * 1024;
  size_t max_requests_per_connection = 10000;
  /// After `transfer_grace`, a request's body and its response must move at least this many
  /// bytes per second on average or the worker drops the connection (0 = no minimum): a
  /// client trickling a body or not reading a response cannot hold a worker for long.
  size_t min_transfer_rate = 16 * 1024;
  std::chrono::milliseconds transfer_grace{10000};
  /// After a response on a keep-alive connection, the worker waits this long for the next
  /// request on it (blocked in ppoll, no spinning) before handing the connection back to the
  /// loop, but only while another worker is idle (no request waits for this one): a client
  /// sending requests back to back skips the loop's wake-up, the epoll re-arm and the queue
  /// hand-off, and stays on a warm core (issue 20's 1-connection figure). 0 = never.
  std::chrono::microseconds linger{1000};
  /// The first part of `linger` polls without sleeping (ppoll with a zero timeout in a loop),
  /// while fewer requests are in flight than the machine has cores: a request arriving within
  /// it is read without a sleep and wake-up of the worker, which on a quiet machine cost more
  /// than the request (request_cost_bench, 1 connection, key lookups: 9,426 -> 16,058 q/s at
  /// 50 us). Capped by `linger`; 0 = always sleep.
  std::chrono::microseconds spin{50};
};

class HttpListener : public httplib::Server {
 public:
  HttpListener();
  ~HttpListener() override;

  /// Binds and listens on host:port (no SO_REUSEPORT: a port another process listens on is
  /// an error, never a shared port); connections wait in the backlog until Start. Returns the
  /// bound port. Errors: IOError naming the host and port ("port 8080 on 127.0.0.1 is already
  /// in use ..." when taken, EADDRINUSE) when it cannot be resolved, bound or listened on.
  Result<int> Bind(const ListenerOptions& options);
  /// Bind (unless already bound) and starts the loop thread and the worker pool; returns the
  /// bound port. Errors: those of Bind.
  Result<int> Start(const ListenerOptions& options);
  /// Closes the listening socket (new connections are refused), closes idle and half-received
  /// connections, and lets requests in flight finish; connections then close after their
  /// current response.
  void Shutdown();
  /// Requests being served (their head arrived) right now.
  int64_t in_flight() const { return in_flight_.load(); }
  /// After Shutdown: joins the loop and the pool; returns false (joining nothing) when
  /// requests are still in flight at `deadline`.
  bool Join(std::chrono::steady_clock::time_point deadline);

  /// Connections open now, and refused for the caps since Start.
  int64_t open_connections() const { return open_.load(); }
  int64_t refused_connections() const { return refused_.load(); }
  /// Requests served by a worker that lingered for them (options.linger), since Start.
  int64_t lingered_requests() const { return lingered_.load(); }

 private:
  struct Conn;
  class ConnStream;
  void Loop();
  void Accept();
  void OnReadable(Conn* c);
  void Dispatch(Conn* c);
  void Serve(Conn* c);
  bool ServeOne(Conn& c);
  bool Linger(Conn& c, bool* keep);
  void Close(Conn* c);
  void Wake();

  ListenerOptions options_;
  int listen_fd_ = -1;
  int bound_port_ = 0;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::thread loop_;
  std::unique_ptr<httplib::ThreadPool> pool_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> in_flight_{0};
  std::atomic<int64_t> open_{0};
  std::atomic<int64_t> refused_{0};
  std::atomic<int64_t> lingered_{0};
  // Loop thread only: every open connection not being served, by fd.
  std::map<int, std::unique_ptr<Conn>> conns_;
  std::map<std::string, size_t> per_ip_;  // guarded by mu_ (the loop and closing workers)
  std::mutex mu_;
  std::deque<std::unique_ptr<Conn>> returned_;  // guarded by mu_: served, back to the loop
  // Loop thread only: accepts paused (out of descriptors) until then; logged once.
  std::chrono::steady_clock::time_point accept_paused_until_{};
  bool accept_paused_logged_ = false;
};

}  // namespace strata::server
