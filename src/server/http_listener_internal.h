// Internal to HttpListener (http_listener.h): the state of one connection and the helpers
// shared by the event loop (http_listener.cc: binding, accepting, reading request heads,
// timeouts) and the workers (http_listener_serve.cc: the Stream, serving and lingering).
// Not a public interface: include only from those files.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <string>

#include "server/http_listener.h"

namespace strata::server {

using Clock = std::chrono::steady_clock;

struct HttpListener::Conn {
  int fd = -1;
  std::string ip;
  int port = 0;
  std::string buf;  // received, not yet consumed from `pos`
  size_t pos = 0;
  bool reading_head = true;  // false: idle between requests
  Clock::time_point deadline;
  size_t served = 0;
  bool close_after = false;  // the response said `Connection: close`
  bool peer_closed = false;  // the client half-closed after sending (answer, then close)
  std::string local_ip;      // of the socket, looked up once (getsockname) when first asked
  int local_port = -1;       // -1: not looked up yet

  bool HasHead() const { return buf.find("\r\n\r\n", pos) != std::string::npos; }
  size_t Pending() const { return buf.size() - pos; }
};

namespace http_listener_internal {

// The numeric address of `a` (IPv4 or IPv6, else empty); sets *port for those.
std::string AddressOf(const sockaddr_storage& a, int* port);

}  // namespace http_listener_internal

}  // namespace strata::server
