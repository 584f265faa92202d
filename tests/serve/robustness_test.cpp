// batchai serve under load and abuse (issue 16 item 4, docs/serve.md "Errors" and
// "Concurrency"): 50 parallel clients lose nothing; malformed, oversize, slow and vanishing
// clients get ARM errors or lose their connection, never the server; SIGTERM and SIGINT end
// `batchai serve` with exit 0 and free its port.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <set>
#include <thread>

#include "batchai/common/ids.hpp"
#include "serve_fixture.hpp"

namespace batchai::serve {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A TLS connection driven byte by byte, for what httplib's client will not send: half a request,
// unknown methods, a hang-up mid-answer. Test-only: the server's certificate is not checked.
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

int status_of(const std::string& answer) {
  return answer.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(answer.c_str() + 9) : 0;
}
Json body_of(const std::string& answer) {
  const auto at = answer.find("\r\n\r\n");
  return at == std::string::npos ? Json(nullptr) : Json::parse(answer.substr(at + 4), nullptr, false);
}

class RobustnessTest : public ServeTest {
 protected:
  // The server still answers an authenticated GET.
  void expect_alive() {
    auto r = call("GET", sub() + "/resourcegroups" + kRg);
    ASSERT_TRUE(r) << "the server no longer answers";
    EXPECT_EQ(r->status, 200);
  }
  std::string cluster_body(int nodes) const {
    return R"({"properties":{"vmSize":"Standard_D1","scaleSettings":{"manual":{"targetNodeCount":)" +
           std::to_string(nodes) + R"(}},"userAccountSettings":{"adminUserName":"u","adminUserPassword":"p"}}})";
  }
};

// 50 clients each make an experiment and a job in it and read both back while 50 more list:
// every create is accepted, every resource is there exactly once, every job runs.
TEST_F(RobustnessTest, FiftyParallelClientsLoseNothing) {
  constexpr int kClients = 50;
  expect("PUT", rg("rg") + kRg, 201, R"({"location":"eastus"})");
  follow(call("PUT", ws("rg", "ws") + kAi, R"({"location":"eastus"})"));
  follow(call("PUT", ws("rg", "ws") + "/clusters/c" + kAi, cluster_body(2)));
  const std::string cluster_id = expect("GET", ws("rg", "ws") + "/clusters/c" + kAi, 200)["id"];
  auth();  // one token, fetched before the threads start
  std::atomic<int> created{0}, read_back{0}, listed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      const std::string exp = ws("rg", "ws") + "/experiments/e" + std::to_string(i);
      const std::string job = exp + "/jobs/j";
      auto e = call("PUT", exp + kAi);
      auto j = call("PUT", job + kAi,
                    R"({"properties":{"cluster":{"id":")" + cluster_id +
                        R"("},"nodeCount":1,"stdOutErrPathPrefix":"$AZ_BATCHAI_JOB_MOUNT_ROOT","customToolkitSettings":{"commandLine":"true"}}})");
      const auto accepted = [](const httplib::Result& r) {
        return r && (r->status == 200 || r->status == 201 || r->status == 202);
      };
      if (accepted(e) && accepted(j)) ++created;
      auto ge = call("GET", exp + kAi);
      auto gj = call("GET", job + kAi);
      if (ge && ge->status == 200 && gj && gj->status == 200) ++read_back;
    });
    threads.emplace_back([&, i] {
      auto r = call("GET", ws("rg", "ws") + (i % 2 ? "/experiments" : "/clusters") + kAi);
      if (r && r->status == 200 && Json::parse(r->body, nullptr, false).contains("value")) ++listed;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(created, kClients);
  EXPECT_EQ(read_back, kClients);
  EXPECT_EQ(listed, kClients);

  Json experiments = expect("GET", ws("rg", "ws") + "/experiments" + kAi, 200)["value"];
  std::set<std::string> names;
  for (const auto& e : experiments) names.insert(e["name"].get<std::string>());
  EXPECT_EQ(experiments.size(), static_cast<std::size_t>(kClients));
  EXPECT_EQ(names.size(), static_cast<std::size_t>(kClients));
  // Every job is listed once and ends succeeded (on 2 nodes: they queue, none is lost).
  int succeeded = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(180);
  for (int i = 0; i < kClients; ++i) {
    const std::string jobs = ws("rg", "ws") + "/experiments/e" + std::to_string(i) + "/jobs";
    Json list = expect("GET", jobs + kAi, 200)["value"];
    ASSERT_EQ(list.size(), 1u) << "e" << i;
    std::string state;
    while (Clock::now() < deadline) {
      state = expect("GET", jobs + "/j" + kAi, 200)["properties"]["executionState"];
      if (state == "succeeded" || state == "failed") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    succeeded += state == "succeeded";
    EXPECT_EQ(state, "succeeded") << "e" << i;
  }
  EXPECT_EQ(succeeded, kClients);
  expect_alive();
}

// Each bad request gets ARM's error body with its status and code, and the server goes on.
TEST_F(RobustnessTest, BadRequestsGetArmErrors) {
  const auto code = [](const Json& body) -> std::string {
    return body.is_object() && body.contains("error") && body["error"].is_object() ? body["error"].value("code", "") : "";
  };
  EXPECT_EQ(code(expect("PUT", rg("rg") + kRg, 400, "{\"location\": ")), "InvalidRequestContent");
  EXPECT_EQ(code(expect("PUT", rg("rg") + kRg, 400, "[{\"location\":\"eastus\"}]")), "InvalidRequestContent");
  EXPECT_EQ(code(expect("PUT", rg("rg") + kRg, 400, std::string(100000, '[') + std::string(100000, ']'))),
            "InvalidRequestContent");
  std::string nested;
  for (int i = 0; i < 5000; ++i) nested += "{\"a\":";
  nested += "1" + std::string(5000, '}');
  EXPECT_EQ(code(expect("PUT", rg("rg") + kRg, 400, nested)), "InvalidRequestContent");
  EXPECT_EQ(code(expect("GET", sub() + "/resourcegroups?api-version=1999-01-01", 400)), "InvalidApiVersionParameter");
  EXPECT_EQ(code(expect("GET", ws("rg", "ws") + "?api-version=" + std::string(5000, 'x'), 400)),
            "InvalidApiVersionParameter");
  EXPECT_EQ(code(expect("GET", sub() + "/resourcegroups", 400)), "MissingApiVersionParameter");
  EXPECT_EQ(code(expect("GET", "/etc/passwd", 404)), "NotFound");
  EXPECT_EQ(code(expect("GET", "/../../etc/passwd" + std::string(kRg), 404)), "NotFound");
  EXPECT_EQ(code(expect("DELETE", sub() + "/resourcegroups" + kRg, 405)), "MethodNotAllowed");
  EXPECT_EQ(code(expect("PUT", rg("rg") + kRg, 413, std::string(4 * 1024 * 1024 + 1, ' '))), "RequestEntityTooLarge");
  // A very long URI, a header longer than any a client sends, a flood of headers.
  auto c = client();
  auto uri = c->Get((sub() + "/resourcegroups/" + std::string(20000, 'a') + kRg).c_str(), auth());
  ASSERT_TRUE(uri);
  EXPECT_EQ(uri->status, 414);
  EXPECT_EQ(code(Json::parse(uri->body, nullptr, false)), "RequestUriTooLong") << uri->body;
  httplib::Headers long_header = auth();
  long_header.emplace("X-Long", std::string(20000, 'h'));
  auto header = client()->Get((sub() + "/resourcegroups" + kRg).c_str(), long_header);
  ASSERT_TRUE(header);
  EXPECT_EQ(header->status, 400);
  EXPECT_EQ(code(Json::parse(header->body, nullptr, false)), "BadRequest");
  httplib::Headers flood = auth();
  for (int i = 0; i < 2000; ++i) flood.emplace("X-Flood-" + std::to_string(i), std::string(100, 'f'));
  auto flooded = client()->Get((sub() + "/resourcegroups" + kRg).c_str(), flood);
  ASSERT_TRUE(flooded);  // answered (the headers stay under the 4 MiB body bound), not dropped
  expect_alive();
}

// Methods httplib does not route reach the same ARM error as the ones a resource lacks.
TEST_F(RobustnessTest, UnknownMethodsGetMethodNotAllowed) {
  for (const std::string method : {"TRACE", "CONNECT", "BREW"}) {
    RawTls raw(server_->port());
    ASSERT_TRUE(raw.connected());
    ASSERT_TRUE(raw.send(method + " " + sub() + "/resourcegroups" + kRg +
                         " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"));
    const std::string answer = raw.receive_answer();
    EXPECT_EQ(status_of(answer), 405) << method << ": " << answer.substr(0, 200);
    EXPECT_EQ(body_of(answer)["error"]["code"], "MethodNotAllowed") << method;
  }
  expect_alive();
}

// Half a request, then silence: the others are answered meanwhile, and the silent client gets
// 400 and loses its connection after the read timeout (here 2 s; 30 s by default).
TEST_F(RobustnessTest, SlowClientIsDroppedWhileOthersAreServed) {
  stop_server();
  start_server([](ServerConfig& c) { c.read_timeout_seconds = 2; });
  token_.clear();
  std::vector<std::unique_ptr<RawTls>> slow;
  for (int i = 0; i < 3; ++i) {
    slow.push_back(std::make_unique<RawTls>(server_->port()));
    ASSERT_TRUE(slow.back()->connected());
    ASSERT_TRUE(slow.back()->send("PUT " + rg("slow") + kRg + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n"));
  }
  const auto start = Clock::now();
  for (int i = 0; i < 5; ++i) expect_alive();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2)) << "the others waited for the slow clients";
  // httplib cannot tell a timed-out request from a malformed one: ARM's 400 at the timeout, then
  // the hang-up once the connection's keep-alive (5 s) has passed.
  for (auto& s : slow) {
    const std::string answer = s->receive_answer();
    EXPECT_EQ(status_of(answer), 400) << answer;
    EXPECT_EQ(body_of(answer)["error"]["code"], "BadRequest") << answer;
  }
  const auto answered = Clock::now() - start;
  EXPECT_GE(answered, std::chrono::milliseconds(1500));
  EXPECT_LT(answered, std::chrono::seconds(5));
  for (auto& s : slow) EXPECT_EQ(s->receive(), "");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(12));
  // A client silent mid-line is dropped as well, and so is one silent before its TLS handshake.
  RawTls mid(server_->port());
  ASSERT_TRUE(mid.connected());
  ASSERT_TRUE(mid.send("GET " + sub() + "/resourcegroups" + kRg + " HTTP/1.1\r\nHost: local"));
  EXPECT_EQ(status_of(mid.receive_answer()), 400);
  const int tcp = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{20, 0};
  ::setsockopt(tcp, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ASSERT_EQ(::connect(tcp, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const auto before = Clock::now();
  char byte = 0;
  EXPECT_LE(::recv(tcp, &byte, 1, 0), 0);
  EXPECT_LT(Clock::now() - before, std::chrono::seconds(10));
  ::close(tcp);
  expect_alive();
  expect("GET", rg("slow") + kRg, 404);  // no half request was acted on
}

// Clients that hang up with answers unread (a reset mid-answer) cost the server nothing.
TEST_F(RobustnessTest, ClientsHangingUpMidAnswer) {
  const std::string bearer = auth().begin()->second;
  const std::string request = "GET /providers/Microsoft.BatchAI/operations" + std::string(kAi) +
                              " HTTP/1.1\r\nHost: localhost\r\nAuthorization: " + bearer + "\r\n\r\n";
  for (int i = 0; i < 20; ++i) {
    RawTls raw(server_->port());
    ASSERT_TRUE(raw.connected());
    std::string pipelined;
    for (int k = 0; k < 5; ++k) pipelined += request;
    ASSERT_TRUE(raw.send(pipelined));
    if (i % 2) raw.receive(100);  // half the time, read the start of the first answer
    raw.reset();
  }
  expect_alive();
}

// `batchai serve` as users run it ends on SIGTERM and on SIGINT (Ctrl-C): exit 0 within
// seconds, its port free again.
TEST(ServeSignals, SigtermAndSigintExitZeroAndFreeThePort) {
  const fs::path home = make_temp_dir("batchai-serve-signal");
  // The serve plugin is part of every build: its absence is a failure, never a skip.
  ASSERT_TRUE(exe_has_serve_command(home)) << "batchai serve did not start (is libbatchai_serve.so built?)";
  for (int signal : {SIGTERM, SIGINT}) {
    ServeChild child(home);
    ASSERT_TRUE(child.ok()) << child.why();
    httplib::SSLClient client("localhost", child.port());
    client.set_ca_cert_path((home / "serve" / "cert.pem").c_str());
    client.enable_server_certificate_verification(true);
    auto r = client.Get("//metadata/endpoints?api-version=2015-01-01");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    const auto start = Clock::now();
    auto exit = child.stop(signal, std::chrono::seconds(10));
    ASSERT_TRUE(exit.has_value()) << "signal " << signal << ": still running after 10 s";
    EXPECT_EQ(exit->exit_code, 0) << "signal " << signal << ": " << child.why();
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
    // The port is free: a new listener (as a restarted server binds it) gets it.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(child.port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << "signal " << signal;
    EXPECT_EQ(::listen(fd, 1), 0);
    ::close(fd);
  }
  fs::remove_all(home);
}

}  // namespace
}  // namespace batchai::serve
