// A tiny HTTP/1.1 server on 127.0.0.1 for fault tests of the S3 client: each request (headers
// plus a Content-Length body) is answered with the next scripted raw response, then the
// connection is closed; with the script empty, "200 OK" with an empty body. Records the request
// lines ("PUT /bucket/key HTTP/1.1") and heads it saw.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace strata::testing {

class ScriptedHttpServer {
 public:
  ScriptedHttpServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 64);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedHttpServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  /// Queues a raw response ("HTTP/1.1 500 ...\r\n...\r\n\r\nbody").
  void Push(std::string raw) {
    std::lock_guard<std::mutex> lock(mu_);
    script_.push_back(std::move(raw));
  }
  /// A complete response with `status`, a correct Content-Length and `body`.
  static std::string Response(int status, const std::string& body) {
    return "HTTP/1.1 " + std::to_string(status) +
           " X\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
  }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  /// The whole request heads (request line and headers), in order.
  std::vector<std::string> heads() {
    std::lock_guard<std::mutex> lock(mu_);
    return heads_;
  }

 private:
  void Serve() {
    while (true) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;  // shut down
      std::string in;
      char buf[65536];
      size_t header_end = std::string::npos;
      size_t need = 0;
      while (true) {
        if (header_end == std::string::npos) {
          header_end = in.find("\r\n\r\n");
          if (header_end != std::string::npos) {
            const size_t cl = FindHeader(in.substr(0, header_end), "content-length:");
            need = header_end + 4 + cl;
          }
        }
        if (header_end != std::string::npos && in.size() >= need) break;
        const ssize_t n = ::recv(c, buf, sizeof(buf), 0);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
      }
      std::string reply;
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(in.substr(0, in.find("\r\n")));
        heads_.push_back(in.substr(0, header_end == std::string::npos ? in.size() : header_end));
        if (script_.empty()) {
          reply = Response(200, "");
        } else {
          reply = std::move(script_.front());
          script_.pop_front();
        }
      }
      size_t sent = 0;
      while (sent < reply.size()) {
        const ssize_t n = ::send(c, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<size_t>(n);
      }
      ::close(c);
    }
  }

  static size_t FindHeader(const std::string& head, const std::string& lower_name) {
    std::string lower = head;
    for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const size_t p = lower.find("\r\n" + lower_name);
    if (p == std::string::npos) return 0;
    return std::stoul(head.substr(p + 2 + lower_name.size()));
  }

  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::deque<std::string> script_;
  std::vector<std::string> requests_;
  std::vector<std::string> heads_;
};

}  // namespace strata::testing
