// The transport's hard limits (docs/serve.md "Limits"; issue 24 rows 1–4): silent and slow
// peers hold no thread and are dropped at the head deadline, however they trickle; header floods
// get 431 at 64 KiB; bodies are refused before they are read (no token) or at their limit, in
// every transfer encoding; a flood of idle connections or trickled bodies gives way to a client
// with work.
#include <sys/resource.h>

#include <chrono>
#include <csignal>
#include <thread>
#include <vector>

#include "raw_tls.hpp"
#include "serve_fixture.hpp"

namespace batchai::serve {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

class LimitsTest : public ServeTest {
 protected:
  void SetUp() override {
    ServeTest::SetUp();
    std::signal(SIGPIPE, SIG_IGN);  // writes to a connection the server closed fail, never kill
  }

  void restart(const std::function<void(HttpLimits&)>& adjust) {
    stop_server();
    start_server([&](ServerConfig& c) { adjust(c.limits); });
    token_.clear();
  }

  // One authorised GET: its status and how long it took.
  std::pair<int, Clock::duration> timed_get() {
    const auto start = Clock::now();
    auto r = call("GET", sub() + "/resourcegroups" + kRg);
    return {r ? r->status : 0, Clock::now() - start};
  }

  void expect_served_fast(int times = 5) {
    for (int i = 0; i < times; ++i) {
      auto [status, took] = timed_get();
      EXPECT_EQ(status, 200);
      EXPECT_LT(took, milliseconds(1000)) << "an authorised GET waited for the idle connections";
    }
  }

  std::string head(const std::string& method, const std::string& target, const std::string& more = "") {
    return method + " " + target + " HTTP/1.1\r\nHost: localhost\r\n" + more;
  }
};

// Row 1: 64 connections that never send a byte (not even a TLS ClientHello), 8 times the
// workers: every other client is served at once, and each is closed at the head deadline.
TEST_F(LimitsTest, SilentConnectionsHoldNoThreadAndAreDropped) {
  restart([](HttpLimits& l) { l.head_deadline = milliseconds(1500); });
  std::vector<int> silent;
  for (int i = 0; i < 64; ++i) silent.push_back(connect_tcp(server_->port()));
  const auto opened = Clock::now();
  expect_served_fast();
  for (int fd : silent) {
    ASSERT_GE(fd, 0);
    char byte = 0;
    EXPECT_EQ(::recv(fd, &byte, 1, 0), 0) << "the server did not close a silent connection";
  }
  const auto closed = Clock::now() - opened;
  EXPECT_GE(closed, milliseconds(1400));
  EXPECT_LT(closed, seconds(5));
  for (int fd : silent) ::close(fd);
  expect_served_fast(1);
}

// Row 2: slowloris. 16 clients trickle a header line every 200 ms: the deadline is one for the
// whole head, so they are dropped at it however steadily they trickle.
TEST_F(LimitsTest, TrickledHeadsAreDroppedAtOneDeadline) {
  restart([](HttpLimits& l) { l.head_deadline = milliseconds(1500); });
  std::vector<std::unique_ptr<RawTls>> slow;
  for (int i = 0; i < 16; ++i) {
    slow.push_back(std::make_unique<RawTls>(server_->port()));
    ASSERT_TRUE(slow.back()->connected());
    ASSERT_TRUE(slow.back()->send(head("GET", sub() + "/resourcegroups" + kRg)));
  }
  const auto start = Clock::now();
  std::atomic<bool> trickling{true};
  std::thread trickle([&] {
    while (trickling && Clock::now() - start < seconds(4)) {
      for (auto& s : slow) s->send("X-Trickle: 1\r\n");
      std::this_thread::sleep_for(milliseconds(200));
    }
  });
  expect_served_fast();
  std::this_thread::sleep_for(seconds(3));  // past the deadline, still trickling
  trickling = false;
  trickle.join();
  for (auto& s : slow) {
    const auto before = Clock::now();
    EXPECT_EQ(s->receive(), "") << "a trickling client got an answer";
    EXPECT_LT(Clock::now() - before, milliseconds(500)) << "a trickling client was still connected";
  }
}

// Row 3: a head of a million header lines is refused with 431 once it passes 64 KiB, long
// before the client has sent it all, and the server's memory does not grow with it.
TEST_F(LimitsTest, HeaderFloodGets431At64KiB) {
  RawTls raw(server_->port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.send(head("GET", sub() + "/resourcegroups" + kRg)));
  std::string batch;
  for (int i = 0; i < 1000; ++i) batch += "X-Flood-" + std::to_string(i) + ": " + std::string(80, 'f') + "\r\n";
  std::size_t sent = 0;
  while (sent < 100u * 1024 * 1024 && !raw.readable(0) && raw.send(batch)) sent += batch.size();
  ASSERT_TRUE(raw.readable(5000));
  const std::string answer = raw.receive_answer();
  EXPECT_EQ(status_of(answer), 431) << answer.substr(0, 300);
  EXPECT_EQ(body_of(answer)["error"]["code"], "RequestHeaderFieldsTooLarge");
  EXPECT_LT(sent, 16u * 1024 * 1024) << "the server read far past its header bound before answering";
  expect_served_fast(1);
}

// Row 4: a chunked body without a token is refused before a byte of it is read...
TEST_F(LimitsTest, BodyWithoutTokenIsRefusedBeforeItIsRead) {
  RawTls raw(server_->port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.send(head("PUT", rg("big") + kRg, "Transfer-Encoding: chunked\r\n\r\n")));
  ASSERT_TRUE(raw.readable(5000)) << "no answer before the body";
  const std::string answer = raw.receive_answer();
  EXPECT_EQ(status_of(answer), 401) << answer.substr(0, 300);
  EXPECT_EQ(body_of(answer)["error"]["code"], "AuthenticationFailed");
  // ... and so is one that declares more than any route takes, token or not.
  RawTls declared(server_->port());
  ASSERT_TRUE(declared.connected());
  ASSERT_TRUE(declared.send(head("PUT", rg("big") + kRg, "Authorization: " + auth().begin()->second +
                                                              "\r\nContent-Length: 268435456\r\n\r\n")));
  ASSERT_TRUE(declared.readable(5000));
  EXPECT_EQ(status_of(declared.receive_answer()), 413);
}

// ... and an endless chunked body with a token is counted while it is read and refused at the
// route's limit (4 MiB here), with nothing stored.
TEST_F(LimitsTest, EndlessChunkedBodyIsRefusedAtTheLimit) {
  RawTls raw(server_->port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.send(head("PUT", rg("big") + kRg, "Authorization: " + auth().begin()->second +
                                                        "\r\nTransfer-Encoding: chunked\r\n\r\n")));
  const std::string chunk = "100000\r\n" + std::string(0x100000, ' ') + "\r\n";  // 1 MiB
  std::size_t sent = 0;
  while (sent < 256u * 1024 * 1024 && !raw.readable(0) && raw.send(chunk)) sent += 0x100000;
  ASSERT_TRUE(raw.readable(5000));
  const std::string answer = raw.receive_answer();
  EXPECT_EQ(status_of(answer), 413) << answer.substr(0, 300);
  EXPECT_EQ(body_of(answer)["error"]["code"], "RequestEntityTooLarge");
  EXPECT_LT(sent, 32u * 1024 * 1024);
  expect("GET", rg("big") + kRg, 404);
}

// A flood of idle connections past the per-peer bound: the longest idle give way, so a client
// with a request is still served; the flood itself is what loses connections.
TEST_F(LimitsTest, IdleFloodGivesWayToClientsWithWork) {
  restart([](HttpLimits& l) {
    l.head_deadline = seconds(30);
    l.max_connections_per_peer = 16;
  });
  std::vector<int> idle;
  for (int i = 0; i < 40; ++i) {
    idle.push_back(connect_tcp(server_->port()));
    std::this_thread::sleep_for(milliseconds(2));  // an order of age
  }
  expect_served_fast();
  // The oldest were closed to make room; the newest 16 - 1 are still open (one gave way to us).
  int closed = 0;
  for (int fd : idle) {
    pollfd p{fd, POLLIN, 0};
    char byte = 0;
    if (::poll(&p, 1, 200) > 0 && ::recv(fd, &byte, 1, MSG_DONTWAIT) == 0) ++closed;
  }
  EXPECT_GE(closed, 24 + 1);
  char byte = 0;
  EXPECT_EQ(::recv(idle.front(), &byte, 1, MSG_DONTWAIT), 0) << "the oldest idle connection was kept";
  for (int fd : idle) ::close(fd);
}

// F411 (issue 53): a connection reading a body waits on its peer and gives way like an idle one,
// the most stalled first: token forms trickled to fill one address's budget do not lock out a
// client with work from that address.
TEST_F(LimitsTest, TricklingBodiesGiveWayToClientsWithWork) {
  restart([](HttpLimits& l) { l.max_connections_per_peer = 16; });
  auth();  // the token first
  std::vector<std::unique_ptr<RawTls>> slow;
  for (int i = 0; i < 16; ++i) {
    slow.push_back(std::make_unique<RawTls>(server_->port()));
    ASSERT_TRUE(slow.back()->connected());
    ASSERT_TRUE(slow.back()->send(head("POST", "/adfs/oauth2/token", "Content-Length: 16000\r\n\r\ng")));
  }
  std::this_thread::sleep_for(milliseconds(300));  // every one is reading its body
  expect_served_fast();
  int closed = 0;
  for (auto& s : slow)
    if (s->readable(100) && s->receive().empty()) ++closed;
  EXPECT_GE(closed, 1) << "no trickling body gave way";
}

// A keep-alive connection is closed after its idle time; one in use is not.
TEST_F(LimitsTest, KeepAliveConnectionsCloseWhenIdle) {
  restart([](HttpLimits& l) { l.keep_alive_idle = milliseconds(800); });
  RawTls raw(server_->port());
  ASSERT_TRUE(raw.connected());
  const std::string get = head("GET", "/metadata/endpoints?api-version=2015-01-01", "\r\n");
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(raw.send(get));
    EXPECT_EQ(status_of(raw.receive_answer()), 200);
    std::this_thread::sleep_for(milliseconds(300));
  }
  const auto start = Clock::now();
  EXPECT_EQ(raw.receive(), "");
  EXPECT_LT(Clock::now() - start, seconds(3));
}

}  // namespace
}  // namespace batchai::serve
