// TCP relay behind `node exec -L` (see port_forward.hpp): an accept thread and two blocking
// pump threads per connection, one per direction, so neither side can stall the other.
#include "batchai/common/port_forward.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "batchai/common/errors.hpp"
#include "batchai/common/log.hpp"

namespace batchai {
namespace {

int parse_port(const std::string& text, const std::string& whole, bool allow_zero) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos)
    throw InvalidArgument("Invalid port forwarding address '" + whole + "': expected lport:rhost:rport");
  const int port = std::stoi(text);
  if (port > 65535 || (port == 0 && !allow_zero))
    throw InvalidArgument("Invalid port forwarding address '" + whole + "': port " + text + " is out of range");
  return port;
}

// A connected socket to host:port, or -1 with `why` set.
int connect_to(const std::string& host, int port, std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    why = ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

}  // namespace

ForwardSpec parse_forward_spec(const std::string& text) {
  const auto first = text.find(':');
  const auto last = text.rfind(':');
  if (first == std::string::npos || first == last)
    throw InvalidArgument("Invalid port forwarding address '" + text + "': expected lport:rhost:rport");
  ForwardSpec spec;
  spec.local_port = parse_port(text.substr(0, first), text, true);
  spec.remote_host = text.substr(first + 1, last - first - 1);
  spec.remote_port = parse_port(text.substr(last + 1), text, false);
  if (spec.remote_host.empty())
    throw InvalidArgument("Invalid port forwarding address '" + text + "': expected lport:rhost:rport");
  return spec;
}

PortForwarder::PortForwarder(ForwardSpec spec) : spec_(std::move(spec)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw Error(std::string("Cannot open a socket for port forwarding: ") + std::strerror(errno));
  const int yes = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<std::uint16_t>(spec_.local_port));
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 64) != 0) {
    const std::string why = std::strerror(errno);
    ::close(listen_fd_);
    throw Error("Cannot listen on port " + std::to_string(spec_.local_port) + " for forwarding to " +
                spec_.remote_host + ":" + std::to_string(spec_.remote_port) + ": " + why);
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  local_port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

PortForwarder::~PortForwarder() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  acceptor_.join();
  ::close(listen_fd_);
  std::unique_lock<std::mutex> lock(mutex_);
  for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);  // wakes every pump
  pumps_done_.wait(lock, [this] { return pumps_ == 0; });
}

void PortForwarder::accept_loop() {
  while (!stopping_) {
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // shut down (or broken): stop accepting
    }
    std::string why;
    const int upstream = connect_to(spec_.remote_host, spec_.remote_port, why);
    if (upstream < 0) {
      log::warning("Connection to remote host failed. Please check provided credentials. Error: " + spec_.remote_host +
                   ":" + std::to_string(spec_.remote_port) + ": " + why);
      ::close(client);
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) {
      ::close(client);
      ::close(upstream);
      return;
    }
    open_fds_.insert(client);
    open_fds_.insert(upstream);
    auto left = std::make_shared<std::atomic<int>>(2);
    pumps_ += 2;
    std::thread([this, client, upstream, left] { pump(client, upstream, left); }).detach();
    std::thread([this, client, upstream, left] { pump(upstream, client, left); }).detach();
  }
}

void PortForwarder::pump(int from, int to, std::shared_ptr<std::atomic<int>> pumps_left) {
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(from, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    ssize_t done = 0;
    while (done < n) {
      const ssize_t w = ::send(to, buffer + done, static_cast<std::size_t>(n - done), MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      done += w;
    }
    if (done < n) break;
  }
  ::shutdown(to, SHUT_WR);  // pass the EOF on; the other direction may still be talking
  std::lock_guard<std::mutex> lock(mutex_);
  if (--*pumps_left == 0) {
    for (int fd : {from, to}) {
      open_fds_.erase(fd);
      ::close(fd);
    }
  }
  if (--pumps_ == 0) pumps_done_.notify_all();
}

}  // namespace batchai
