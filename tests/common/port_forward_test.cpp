// The `-L` relay: address parsing, bytes both ways over several connections at once, EOF passed
// on, an unreachable target, and a destructor that returns while connections are still open.
#include "batchai/common/port_forward.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "batchai/common/errors.hpp"
#include "loopback.hpp"

namespace batchai {
namespace {

using test::connect_loopback;
using test::listen_loopback;

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

// Serves `connections` clients one thread each: reads to EOF, answers "echo:" + what it read.
class EchoServer {
 public:
  explicit EchoServer(int connections) : fd_(listen_loopback(&port_)) {
    for (int i = 0; i < connections; ++i)
      threads_.emplace_back([this] {
        const int c = ::accept(fd_, nullptr, nullptr);
        const std::string got = read_all(c);
        const std::string answer = "echo:" + got;
        (void)!::write(c, answer.data(), answer.size());
        ::close(c);
      });
  }
  ~EchoServer() {
    for (auto& t : threads_) t.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int port_ = 0;
  int fd_;
  std::vector<std::thread> threads_;
};

TEST(PortForward, ParsesLocalRemoteHostAndPort) {
  ForwardSpec f = parse_forward_spec("9000:localhost:9001");
  EXPECT_EQ(f.local_port, 9000);
  EXPECT_EQ(f.remote_host, "localhost");
  EXPECT_EQ(f.remote_port, 9001);
  EXPECT_EQ(parse_forward_spec("0:10.0.0.4:22").local_port, 0);
  for (const char* bad : {"9000", "9000:localhost", "x:localhost:1", "1:localhost:0", "1::2", "70000:h:1", "1:h:-2"})
    EXPECT_THROW(parse_forward_spec(bad), InvalidArgument) << bad;
}

TEST(PortForward, RelaysBothWaysWithEofOnSeveralConnections) {
  EchoServer server(3);
  PortForwarder forward({0, "127.0.0.1", server.port()});
  ASSERT_GT(forward.local_port(), 0);
  std::vector<std::thread> clients;
  std::vector<std::string> answers(3);
  for (int i = 0; i < 3; ++i)
    clients.emplace_back([&, i] {
      const int c = connect_loopback(forward.local_port());
      ASSERT_GE(c, 0);
      const std::string text = "client " + std::to_string(i) + std::string(100000, 'x');  // more than one read
      ASSERT_EQ(::write(c, text.data(), text.size()), static_cast<ssize_t>(text.size()));
      ::shutdown(c, SHUT_WR);  // the server answers after EOF: the relay must pass EOF on
      answers[static_cast<std::size_t>(i)] = read_all(c);
      ::close(c);
    });
  for (auto& t : clients) t.join();
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(answers[static_cast<std::size_t>(i)], "echo:client " + std::to_string(i) + std::string(100000, 'x'));
}

TEST(PortForward, UnreachableTargetClosesTheClient) {
  int port = 0;
  ::close(listen_loopback(&port));  // a port nobody listens on now
  PortForwarder forward({0, "127.0.0.1", port});
  const int c = connect_loopback(forward.local_port());
  ASSERT_GE(c, 0);
  EXPECT_EQ(read_all(c), "");  // closed, not hung
  ::close(c);
}

TEST(PortForward, StopsWithConnectionsStillOpenAndFreesThePort) {
  int port = 0;
  const int server = listen_loopback(&port);
  int local = 0;
  {
    PortForwarder forward({0, "127.0.0.1", port});
    local = forward.local_port();
    const int c = connect_loopback(local);
    ASSERT_GE(c, 0);
    const int accepted = ::accept(server, nullptr, nullptr);  // the relayed connection, left idle
    ASSERT_GE(accepted, 0);
    ::close(accepted);
    ::close(c);
  }  // must not hang
  EXPECT_LT(connect_loopback(local), 0);  // nobody listens any more
  EXPECT_THROW(PortForwarder({port, "127.0.0.1", port}), Error) << "the port is taken by `server`";
  ::close(server);
}

}  // namespace
}  // namespace batchai
