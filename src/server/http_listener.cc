#include "server/http_listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

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

namespace {

bool PollFd(int fd, short events, std::chrono::milliseconds timeout) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int r = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, timeout.count())));
    if (r < 0 && errno == EINTR) continue;
    return r > 0;
  }
}

// A complete response with a JSON error body, sent best-effort on a socket about to close.
void SendCanned(int fd, int status, const char* reason, const std::string& code,
                const std::string& message) {
  const std::string body = "{\"error\":\"" + code + "\",\"message\":\"" + message + "\"}";
  const std::string head =
      "HTTP/1.1 " + std::to_string(status) + " " + reason +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\nRetry-After: 1\r\n\r\n";
  const std::string all = head + body;
  (void)::send(fd, all.data(), all.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

std::string AddressOf(const sockaddr_storage& a, int* port) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (a.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    *port = ntohs(in->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof(text));
    *port = ntohs(in->sin6_port);
  }
  return text;
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

HttpListener::HttpListener() = default;

HttpListener::~HttpListener() {
  Shutdown();
  Join(Clock::time_point::max());
  // Bound but never started (the server failed to open its data after Bind).
  if (listen_fd_ >= 0 && !loop_.joinable()) {
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
}

Result<int> HttpListener::Bind(const ListenerOptions& options) {
  if (listen_fd_ >= 0) return Status::Invalid("listener already bound");
  options_ = options;
  // Every connection is a descriptor: raise the soft limit to the hard one if needed, and cap
  // the connections below what remains (64 kept for data files, WAL and the like).
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    const rlim_t want = static_cast<rlim_t>(options_.max_connections) + 256;
    if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < want) {
      rlimit raised = lim;
      raised.rlim_cur = lim.rlim_max == RLIM_INFINITY ? want : std::min(want, lim.rlim_max);
      if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
    }
    if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < want) {
      const size_t cap = lim.rlim_cur > 320 ? static_cast<size_t>(lim.rlim_cur - 256) : 64;
      spdlog::warn("open-file limit {} is low for --max-connections {}: at most {} connections",
                   static_cast<uint64_t>(lim.rlim_cur), options_.max_connections, cap);
      options_.max_connections = std::min(options_.max_connections, cap);
    }
  }
  const std::string where = "port " + std::to_string(options.port) + " on " + options.host;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(options.port);
  if (const int rc = ::getaddrinfo(options.host.c_str(), service.c_str(), &hints, &found);
      rc != 0 || found == nullptr) {
    return Status::IOError("cannot listen on " + where + ": cannot resolve --host '" +
                           options.host + "' (" + ::gai_strerror(rc) + ")");
  }
  // SO_REUSEADDR only (a restart may bind while old connections sit in TIME_WAIT). Never
  // SO_REUSEPORT: with it a second server on a taken port binds too and the kernel splits the
  // connections between the two (cpp-httplib's own listen sets it).
  int fd = -1;
  int err = 0;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
      // Keep the most telling error: "in use" over a family the host does not have.
      if (err != EADDRINUSE) err = errno;
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    if (err == EADDRINUSE) {
      return Status::IOError(where +
                             " is already in use (another strata serve or another program "
                             "listens there): stop it or choose another --port");
    }
    if (err == EADDRNOTAVAIL) {
      return Status::IOError("cannot listen on " + where + ": --host '" + options.host +
                             "' is not an address of this machine");
    }
    if (err == EACCES) {
      return Status::IOError("cannot listen on " + where +
                             ": permission denied (ports below 1024 need privileges)");
    }
    return Status::IOError("cannot listen on " + where + ": " + std::strerror(err));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  int port = 0;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  AddressOf(bound, &port);
  listen_fd_ = fd;
  bound_port_ = port;
  return port;
}

Result<int> HttpListener::Start(const ListenerOptions& options) {
  if (listen_fd_ < 0) {
    STRATA_RETURN_IF_ERROR(Bind(options).status());
  }
  const std::string where = options_.host + ":" + std::to_string(bound_port_);
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) return Status::IOError("epoll/eventfd: " + where);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = listen_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  ev.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  // The Keep-Alive header cpp-httplib writes advertises these.
  set_keep_alive_timeout(std::max<time_t>(1, options_.idle_timeout.count() / 1000));
  set_keep_alive_max_count(options_.max_requests_per_connection);
  pool_ = std::make_unique<httplib::ThreadPool>(std::max<size_t>(1, options_.workers));
  loop_ = std::thread([this] { Loop(); });
  return bound_port_;
}

void HttpListener::Wake() {
  const uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof(one));
}

void HttpListener::Shutdown() {
  stopping_.store(true);
  Wake();
}

bool HttpListener::Join(Clock::time_point deadline) {
  if (!loop_.joinable()) return true;
  while (in_flight_.load() > 0) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  loop_.join();
  if (pool_) pool_->shutdown();
  // Connections handed back after the loop ended.
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& c : returned_) {
    ::close(c->fd);
    open_.fetch_sub(1);
  }
  returned_.clear();
  for (int fd : {epoll_fd_, wake_fd_}) {
    if (fd >= 0) ::close(fd);
  }
  epoll_fd_ = wake_fd_ = -1;
  return true;
}

void HttpListener::Close(Conn* c) {
  ::close(c->fd);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = per_ip_.find(c->ip);
  if (it != per_ip_.end() && --it->second == 0) per_ip_.erase(it);
  open_.fetch_sub(1);
}

void HttpListener::Accept() {
  for (;;) {
    sockaddr_storage a{};
    socklen_t len = sizeof(a);
    const int fd =
        ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: the listening socket stays readable, so stop watching it for
        // a while instead of spinning (pending clients wait in the backlog); log once per
        // episode.
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
        accept_paused_until_ = Clock::now() + std::chrono::milliseconds(100);
        if (!accept_paused_logged_) {
          spdlog::warn(
              "accept failed: {} ({} connections open); pausing accepts 100 ms at a "
              "time until descriptors free up",
              std::strerror(errno), open_.load());
          accept_paused_logged_ = true;
        }
      } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
        spdlog::warn("accept failed: {}", std::strerror(errno));
      }
      return;
    }
    accept_paused_logged_ = false;
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    c->ip = AddressOf(a, &c->port);
    bool refuse = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const size_t from_ip = per_ip_.count(c->ip) ? per_ip_[c->ip] : 0;
      refuse = static_cast<size_t>(open_.load()) >= options_.max_connections ||
               from_ip >= options_.max_connections_per_ip;
      if (!refuse) {
        ++per_ip_[c->ip];
        open_.fetch_add(1);
      }
    }
    if (refuse) {
      refused_.fetch_add(1);
      SendCanned(fd, 503, "Service Unavailable", "too_many_connections",
                 "connection limit reached (--max-connections " +
                     std::to_string(options_.max_connections) + ", --max-connections-per-ip " +
                     std::to_string(options_.max_connections_per_ip) + "); retry later");
      ::close(fd);
      continue;
    }
    const int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    c->reading_head = true;
    c->deadline = Clock::now() + options_.header_timeout;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    conns_[fd] = std::move(c);
  }
}

void HttpListener::OnReadable(Conn* c) {
  char tmp[16384];
  for (;;) {
    const ssize_t r = ::recv(c->fd, tmp, sizeof(tmp), 0);
    if (r > 0) {
      c->buf.append(tmp, static_cast<size_t>(r));
      if (c->Pending() > options_.max_header_bytes) break;
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (r == 0 && c->HasHead()) {
      // Half-closed after a whole request: answer it, then close.
      c->peer_closed = true;
      Dispatch(c);
      return;
    }
    // Closed by the peer (or an error): nothing to answer.
    const int fd = c->fd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    Close(c);
    conns_.erase(fd);
    return;
  }
  if (c->HasHead()) {
    Dispatch(c);
    return;
  }
  if (c->Pending() > options_.max_header_bytes) {
    SendCanned(c->fd, 431, "Request Header Fields Too Large", "header_too_large",
               "request head exceeds " + std::to_string(options_.max_header_bytes) + " bytes");
    const int fd = c->fd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    Close(c);
    conns_.erase(fd);
    return;
  }
  if (!c->reading_head && c->Pending() > 0) {
    c->reading_head = true;
    c->deadline = Clock::now() + options_.header_timeout;
  }
}

void HttpListener::Dispatch(Conn* c) {
  const int fd = c->fd;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  auto it = conns_.find(fd);
  Conn* raw = it->second.release();
  conns_.erase(it);
  in_flight_.fetch_add(1);
  pool_->enqueue([this, raw] { Serve(raw); });
}

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

void HttpListener::Loop() {
  std::vector<epoll_event> events(128);
  auto last_sweep = Clock::now();
  for (;;) {
    const int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), 200);
    if (stopping_.load()) break;
    for (int i = 0; i < n; ++i) {
      const int fd = events[static_cast<size_t>(i)].data.fd;
      if (fd == listen_fd_) {
        Accept();
      } else if (fd == wake_fd_) {
        uint64_t v;
        while (::read(wake_fd_, &v, sizeof(v)) > 0) {
        }
      } else if (auto it = conns_.find(fd); it != conns_.end()) {
        OnReadable(it->second.get());
      }
    }
    // Connections served and kept: wait for their next request (or serve a pipelined one).
    std::deque<std::unique_ptr<Conn>> back;
    {
      std::lock_guard<std::mutex> lock(mu_);
      back.swap(returned_);
    }
    const auto now = Clock::now();
    if (accept_paused_until_ != Clock::time_point{} && now >= accept_paused_until_) {
      accept_paused_until_ = {};
      epoll_event lev{};
      lev.events = EPOLLIN;
      lev.data.fd = listen_fd_;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &lev);
    }
    for (auto& c : back) {
      const int fd = c->fd;
      c->reading_head = c->Pending() > 0;
      c->deadline = now + (c->reading_head ? options_.header_timeout : options_.idle_timeout);
      Conn* raw = c.get();
      conns_[fd] = std::move(c);
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.fd = fd;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
      if (raw->HasHead()) Dispatch(raw);
    }
    if (now - last_sweep >= std::chrono::milliseconds(200)) {
      last_sweep = now;
      std::vector<int> expired;
      for (const auto& [fd, c] : conns_) {
        if (c->deadline <= now) expired.push_back(fd);
      }
      for (int fd : expired) {
        Conn* c = conns_[fd].get();
        if (c->reading_head && c->Pending() > 0) {
          SendCanned(fd, 408, "Request Timeout", "request_timeout",
                     "request head not received within " +
                         std::to_string(options_.header_timeout.count()) + " ms");
        }
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
        Close(c);
        conns_.erase(fd);
      }
    }
  }
  // Stopping: refuse new connections, close every connection not being served.
  ::close(listen_fd_);
  listen_fd_ = -1;
  for (auto& [fd, c] : conns_) Close(c.get());
  conns_.clear();
}

}  // namespace strata::server
