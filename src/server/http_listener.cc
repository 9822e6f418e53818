#include "server/http_listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <spdlog/spdlog.h>

#include "server/http_listener_internal.h"

namespace strata::server {

using http_listener_internal::AddressOf;

namespace {

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

}  // namespace

namespace http_listener_internal {

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

}  // namespace http_listener_internal

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
