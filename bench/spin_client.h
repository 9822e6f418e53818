// A one-connection HTTP/1.1 keep-alive client that never sleeps (bench-request).
//
// wrk blocks in epoll_wait between sending a request and reading its answer. On a VM whose
// vCPU halts while it waits, every answer then costs the client an inter-processor interrupt
// through the hypervisor before wrk even sees it (measured: 0.39x raw hnswlib on a quiet VM,
// 0.51x with both vCPUs kept awake by idle-priority busy loops; docs/BENCHMARKS.md). This
// client polls its non-blocking socket in a loop instead, so the round trip it measures is
// the server's and the loopback's, not the client's wake-up: the "client is not the
// bottleneck" measurement of issue 20. It holds one core while it runs.
//
// Shapes: POSTs `bodies` in turn to `path` on 127.0.0.1:`port` for `seconds`; every answer
// must be `HTTP/1.1 200` with a Content-Length (chunked answers are not read: the query route
// answers with a length); it reconnects when an answer says `Connection: close`. Returns nullopt
// with a message on stderr on any error (a refused connection, a non-200 answer, a closed
// connection). Not thread-safe; one call at a time.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace strata::bench {

struct SpinRun {
  double qps = 0;
  double mean_us = 0;
  int64_t requests = 0;
};

inline std::optional<SpinRun> RunSpinClient(int port, const std::string& path,
                                            const std::vector<std::string>& bodies,
                                            double seconds) {
  using Clock = std::chrono::steady_clock;
  auto open_connection = [port]() -> int {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      std::fprintf(stderr, "spin client: connect: %s\n", std::strerror(errno));
      close(fd);
      return -1;
    }
    return fd;
  };
  int fd = open_connection();
  if (fd < 0) return std::nullopt;
  std::vector<std::string> requests;
  for (const std::string& b : bodies) {
    requests.push_back("POST " + path +
                       " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                       "Content-Length: " +
                       std::to_string(b.size()) + "\r\n\r\n" + b);
  }
  std::string in;
  std::vector<char> buf(1 << 16);
  SpinRun run;
  double latency_sum_us = 0;
  const auto t0 = Clock::now();
  const auto end = t0 + std::chrono::duration<double>(seconds);
  auto fail = [&](const char* what) -> std::optional<SpinRun> {
    std::fprintf(stderr, "spin client: %s (%s)\n", what, std::strerror(errno));
    close(fd);
    return std::nullopt;
  };
  for (size_t i = 0; Clock::now() < end; i = (i + 1) % requests.size()) {
    const auto sent_at = Clock::now();
    const std::string& req = requests[i];
    for (size_t off = 0; off < req.size();) {
      const ssize_t n = send(fd, req.data() + off, req.size() - off, MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN && errno != EINTR) return fail("send failed");
      if (n > 0) off += static_cast<size_t>(n);
    }
    // Read until one whole answer (head + Content-Length bytes) is in `in`, never blocking.
    size_t head_end = std::string::npos, need = 0;
    for (;;) {
      const ssize_t n = recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
      if (n == 0) return fail("the server closed the connection");
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        return fail("recv failed");
      }
      in.append(buf.data(), static_cast<size_t>(n));
      if (head_end == std::string::npos) {
        head_end = in.find("\r\n\r\n");
        if (head_end == std::string::npos) continue;
        if (in.compare(0, 12, "HTTP/1.1 200") != 0) return fail(in.substr(0, 200).c_str());
        const size_t cl = in.find("Content-Length: ");
        if (cl == std::string::npos || cl > head_end) return fail("an answer without a length");
        need = head_end + 4 + std::strtoull(in.c_str() + cl + 16, nullptr, 10);
      }
      if (in.size() >= need) break;
    }
    // The server ends a connection after its per-connection request limit, saying so in the
    // answer's head; a real client then reconnects, and so does this one (inside the timing).
    const bool closing = in.substr(0, head_end).find("Connection: close") != std::string::npos;
    in.erase(0, need);
    if (closing) {
      close(fd);
      in.clear();
      fd = open_connection();
      if (fd < 0) return std::nullopt;
    }
    latency_sum_us += std::chrono::duration<double, std::micro>(Clock::now() - sent_at).count();
    ++run.requests;
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  close(fd);
  run.qps = static_cast<double>(run.requests) / elapsed;
  run.mean_us = run.requests ? latency_sum_us / static_cast<double>(run.requests) : 0;
  return run;
}

}  // namespace strata::bench
