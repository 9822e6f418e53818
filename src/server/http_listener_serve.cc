// The worker side of HttpListener: ConnStream (the httplib::Stream a request is read from and
// its response written to), serving one request, lingering for the next on a keep-alive
// connection and handing the connection back to the loop.
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "server/http_listener.h"
#include "server/http_listener_internal.h"

namespace strata::server {

using http_listener_internal::AddressOf;

namespace {

bool PollFd(int fd, short events, std::chrono::milliseconds timeout) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int r = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, timeout.count())));
    if (r < 0 && errno == EINTR) continue;
    return r > 0;
  }
}

}  // namespace

// The Stream cpp-httplib reads a request from and writes its response to: first the bytes
// the loop already received, then the socket (non-blocking, waited for with poll).
class HttpListener::ConnStream : public httplib::Stream {
 public:
  ConnStream(Conn& c, const ListenerOptions& o) : c_(c), o_(o), start_(Clock::now()) {}
  bool is_readable() const override {
    return c_.Pending() > 0 || PollFd(c_.fd, POLLIN, Wait(o_.io_timeout));
  }
  bool is_writable() const override { return PollFd(c_.fd, POLLOUT, Wait(o_.write_timeout)); }
  ssize_t read(char* ptr, size_t size) override {
    if (c_.Pending() > 0) {
      const size_t n = std::min(size, c_.Pending());
      std::memcpy(ptr, c_.buf.data() + c_.pos, n);
      c_.pos += n;
      if (c_.pos == c_.buf.size()) {
        c_.buf.clear();
        c_.pos = 0;
      }
      return static_cast<ssize_t>(n);
    }
    for (;;) {
      const ssize_t r = ::recv(c_.fd, ptr, size, 0);
      if (r >= 0) {
        moved_ += r;
        return r;
      }
      if (errno == EINTR) continue;
      if ((errno == EAGAIN || errno == EWOULDBLOCK) && PollFd(c_.fd, POLLIN, Wait(o_.io_timeout))) {
        continue;
      }
      return -1;
    }
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (!writing_) {
      // The response's rate is measured from its first byte: the handler's own time (a
      // long flush, a big query) does not count against the client.
      writing_ = true;
      start_ = Clock::now();
      moved_ = 0;
    }
    if (!head_written_) {
      // cpp-httplib writes a response's status line and headers in one call (an interim
      // `100 Continue` first, which is not the response). A handler that answers without
      // reading the body (401 before an upload) says `Connection: close`: the unread body
      // must not be parsed as the next request.
      const std::string_view v(ptr, size);
      if (v.rfind("HTTP/1.1 1", 0) != 0) {
        head_written_ = true;
        const std::string_view head = v.substr(0, v.find("\r\n\r\n"));
        if (head.find("\r\nConnection: close") != std::string_view::npos) {
          c_.close_after = true;
        }
        // Held back and sent with the body's first bytes (one sendmsg, one TCP segment for
        // a small response: the send path and the client's wake-up were 13% of the server's
        // CPU per query, paid twice). Flush() sends it when no body follows.
        pending_head_.assign(ptr, size);
        pending_sent_ = 0;
        return static_cast<ssize_t>(size);
      }
    }
    for (;;) {
      const size_t held = pending_head_.size() - pending_sent_;
      ssize_t r;
      if (held > 0) {
        iovec iov[2] = {{pending_head_.data() + pending_sent_, held},
                        {const_cast<char*>(ptr), size}};
        msghdr m{};
        m.msg_iov = iov;
        m.msg_iovlen = size > 0 ? 2 : 1;
        r = ::sendmsg(c_.fd, &m, MSG_NOSIGNAL);
      } else {
        r = ::send(c_.fd, ptr, size, MSG_NOSIGNAL);
      }
      if (r >= 0) {
        moved_ += r;
        if (held == 0) return r;
        // The held head goes first; only what went past it counts as written from `ptr`.
        const size_t head_part = std::min(held, static_cast<size_t>(r));
        pending_sent_ += head_part;
        if (pending_sent_ == pending_head_.size()) {
          pending_head_.clear();
          pending_sent_ = 0;
        }
        return r - static_cast<ssize_t>(head_part);
      }
      if (errno == EINTR) continue;
      if ((errno == EAGAIN || errno == EWOULDBLOCK) &&
          PollFd(c_.fd, POLLOUT, Wait(o_.write_timeout))) {
        continue;
      }
      return -1;
    }
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.ip;
    port = c_.port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    // cpp-httplib asks for every request; the socket's address never changes.
    if (c_.local_port < 0) {
      sockaddr_storage a{};
      socklen_t len = sizeof(a);
      int p = 0;
      if (::getsockname(c_.fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
        c_.local_ip = AddressOf(a, &p);
      }
      c_.local_port = p;
    }
    ip = c_.local_ip;
    port = c_.local_port;
  }
  /// Sends a held response head that no body followed (a 204, a HEAD request, an empty
  /// body); false when the socket failed.
  bool Flush() {
    while (pending_sent_ < pending_head_.size()) {
      if (write(pending_head_.data() + pending_sent_, 0) < 0) return false;
    }
    return true;
  }
  socket_t socket() const override { return c_.fd; }

 private:
  // How long the next poll may wait: `limit`, cut to the minimum-rate deadline (after a
  // grace period, a request's body, then its response, must move min_transfer_rate bytes
  // per second on average, or the worker gives the connection up).
  std::chrono::milliseconds Wait(std::chrono::milliseconds limit) const {
    if (o_.min_transfer_rate == 0) return limit;
    const auto due =
        start_ + o_.transfer_grace +
        std::chrono::milliseconds(1000 * moved_ / static_cast<int64_t>(o_.min_transfer_rate));
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(due - Clock::now());
    return std::max(std::chrono::milliseconds(0), std::min(limit, left));
  }

  Conn& c_;
  const ListenerOptions& o_;
  Clock::time_point start_;  // of the request (its body), then of its response
  int64_t moved_ = 0;        // bytes moved through the socket since start_
  bool writing_ = false;
  bool head_written_ = false;
  std::string pending_head_;  // a response head held back until the body's first write
  size_t pending_sent_ = 0;   // bytes of pending_head_ already sent
};

// Answers the request whose head is buffered; returns whether the connection stays open.
bool HttpListener::ServeOne(Conn& c) {
  // Also while stopping: a request whose head arrived is answered (Connection: close), so
  // a client never has to guess whether its write happened.
  ConnStream stream(c, options_);
  ++c.served;
  const bool last =
      c.served >= options_.max_requests_per_connection || stopping_.load() || c.peer_closed;
  bool closed = false;
  bool ok = process_request(stream, last, closed, {});
  ok = stream.Flush() && ok;
  return ok && !closed && !last && !c.close_after && !stopping_.load();
}

// Waits up to options_.linger for the next request head on `c` while another worker is idle,
// polling without sleeping for the first options_.spin of it.
// Returns true when a whole head is buffered; sets *keep = false when the peer closed first.
bool HttpListener::Linger(Conn& c, bool* keep) {
  if (options_.linger.count() <= 0) return false;
  const auto workers = static_cast<int64_t>(std::max<size_t>(1, options_.workers));
  const auto start = Clock::now();
  const auto end = start + options_.linger;
  const auto spin_end = start + std::min(options_.spin, options_.linger);
  static const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  for (;;) {
    // in_flight_ counts this connection: below `workers`, nothing queued and a worker idle.
    if (stopping_.load() || in_flight_.load() >= workers) return false;
    const auto now = Clock::now();
    if (now >= end) return false;
    // Slices, so that a request queued meanwhile ends the wait soon.
    const auto slice = std::min<Clock::duration>(end - now, std::chrono::microseconds(200));
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(slice).count();
    timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    // Spinning (look, do not sleep) only while a core is spare: with as many requests in
    // flight as cores, a spinning worker would take CPU from one serving a request.
    if (now < spin_end && in_flight_.load() < cores) ts = timespec{0, 0};
    pollfd p{c.fd, POLLIN | POLLRDHUP, 0};
    const int r = ::ppoll(&p, 1, &ts, nullptr);
    if (r < 0 && errno != EINTR) return false;
    if (r <= 0) continue;
    char tmp[16384];
    for (;;) {
      if (c.Pending() > options_.max_header_bytes) return false;  // the loop answers 431
      const ssize_t n = ::recv(c.fd, tmp, sizeof(tmp), 0);
      if (n > 0) {
        c.buf.append(tmp, static_cast<size_t>(n));
        // A whole head: the worker reads the rest of the body itself (no recv to EAGAIN).
        if (c.HasHead()) return true;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (c.HasHead()) {
        c.peer_closed = true;  // half-closed after a whole request: answer it, then close
        return true;
      }
      *keep = false;  // closed by the peer (or an error): nothing to answer
      return false;
    }
    if (c.HasHead()) return true;
    if (c.Pending() > 0) return false;  // a partial head: the loop applies the header deadline
  }
}

void HttpListener::Serve(Conn* raw) {
  std::unique_ptr<Conn> c(raw);
  bool keep = ServeOne(*c);
  // A pipelined request, or the next one arriving while this worker lingers.
  while (keep) {
    if (!c->HasHead()) {
      if (!Linger(*c, &keep)) break;
      lingered_.fetch_add(1);
    }
    keep = ServeOne(*c);
  }
  if (keep) {
    std::lock_guard<std::mutex> lock(mu_);
    returned_.push_back(std::move(c));
  } else {
    Close(c.get());
  }
  in_flight_.fetch_sub(1);
  if (keep) Wake();
}

}  // namespace strata::server
