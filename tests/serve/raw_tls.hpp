// A TLS connection to the server under test driven byte by byte, for what an HTTP client will
// not send: half a request, a trickled head, an endless body, a hang-up mid-answer. Test-only:
// the server's certificate is not checked.
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include "batchai/common/json_util.hpp"

namespace batchai::serve {

class RawTls {
 public:
  explicit RawTls(int port) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{20, 0};  // no read in this test waits longer
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (ctx_ == nullptr || fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return;
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    connected_ = SSL_connect(ssl_) == 1;
  }
  ~RawTls() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (fd_ >= 0) ::close(fd_);
    if (ctx_ != nullptr) SSL_CTX_free(ctx_);
  }
  RawTls(const RawTls&) = delete;
  RawTls& operator=(const RawTls&) = delete;

  bool connected() const { return connected_; }
  // Whether the server has sent data (or closed) within `ms` milliseconds. TLS 1.3 session
  // tickets arrive unasked after the handshake: they make the socket readable but are no answer.
  bool readable(int ms) {
    if (ssl_ == nullptr) return true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (;;) {
      if (SSL_pending(ssl_) > 0) return true;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count()))) <= 0) return false;
      const int flags = ::fcntl(fd_, F_GETFL);
      ::fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
      char c = 0;
      const int n = SSL_peek(ssl_, &c, 1);
      const int why = n > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl_, n);
      ::fcntl(fd_, F_SETFL, flags);
      if (why != SSL_ERROR_WANT_READ) return true;  // data, or the connection's end
      if (left.count() <= 0) return false;
    }
  }
  bool send(const std::string& text) {
    return SSL_write(ssl_, text.data(), static_cast<int>(text.size())) == static_cast<int>(text.size());
  }
  // Up to `max` bytes; "" when the server closed the connection (or nothing came in 20 s).
  std::string receive(std::size_t max = 65536) {
    std::string buf(max, '\0');
    const int n = SSL_read(ssl_, buf.data(), static_cast<int>(max));
    buf.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return buf;
  }
  // One answer: its headers and Content-Length bytes of body ("" when the server closed first).
  std::string receive_answer() {
    std::string all;
    for (std::string part = receive(); !part.empty(); part = receive()) {
      all += part;
      const auto end = all.find("\r\n\r\n");
      if (end == std::string::npos) continue;
      const auto length = all.find("Content-Length: ");
      const std::size_t body = length < end ? std::strtoul(all.c_str() + length + 16, nullptr, 10) : 0;
      if (all.size() >= end + 4 + body) break;
    }
    return all;
  }
  // Hangs up at once with a reset, unread answers left behind.
  void reset() {
    linger l{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    ::close(fd_);
    fd_ = -1;
  }

 private:
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool connected_ = false;
};

inline int status_of(const std::string& answer) {
  return answer.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(answer.c_str() + 9) : 0;
}
inline Json body_of(const std::string& answer) {
  const auto at = answer.find("\r\n\r\n");
  return at == std::string::npos ? Json(nullptr) : Json::parse(answer.substr(at + 4), nullptr, false);
}

// A plain TCP connection to the server (no TLS), with reads bounded by 20 s; -1 on failure.
inline int connect_tcp(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{20, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace batchai::serve
