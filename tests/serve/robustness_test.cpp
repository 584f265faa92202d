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
#include "raw_tls.hpp"
#include "serve_fixture.hpp"

namespace batchai::serve {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

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
  // A header past the 64 KiB bound of the whole head, and a flood of headers past it: 431.
  httplib::Headers long_header = auth();
  long_header.emplace("X-Long", std::string(70000, 'h'));
  auto header = client()->Get((sub() + "/resourcegroups" + kRg).c_str(), long_header);
  ASSERT_TRUE(header);
  EXPECT_EQ(header->status, 431);
  EXPECT_EQ(code(Json::parse(header->body, nullptr, false)), "RequestHeaderFieldsTooLarge");
  httplib::Headers flood = auth();
  for (int i = 0; i < 2000; ++i) flood.emplace("X-Flood-" + std::to_string(i), std::string(100, 'f'));
  auto flooded = client()->Get((sub() + "/resourcegroups" + kRg).c_str(), flood);
  ASSERT_TRUE(flooded);
  EXPECT_EQ(flooded->status, 431);
  // Under the bound, many headers are fine.
  httplib::Headers many = auth();
  for (int i = 0; i < 200; ++i) many.emplace("X-Many-" + std::to_string(i), std::string(100, 'm'));
  auto fine = client()->Get((sub() + "/resourcegroups" + kRg).c_str(), many);
  ASSERT_TRUE(fine);
  EXPECT_EQ(fine->status, 200);
  expect_alive();
}

// Methods no route serves reach the same ARM error as the ones a resource lacks.
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

// Half a request, then silence: the others are answered meanwhile, and the silent clients lose
// their connections at the head deadline (here 2 s; 5 s by default), with nothing acted on.
TEST_F(RobustnessTest, SlowClientIsDroppedWhileOthersAreServed) {
  stop_server();
  start_server([](ServerConfig& c) { c.limits.head_deadline = std::chrono::seconds(2); });
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
  for (auto& s : slow) EXPECT_EQ(s->receive(), "");
  const auto dropped = Clock::now() - start;
  EXPECT_GE(dropped, std::chrono::milliseconds(1500));
  EXPECT_LT(dropped, std::chrono::seconds(5));
  // A client silent mid-line is dropped as well, and so is one silent before its TLS handshake.
  RawTls mid(server_->port());
  ASSERT_TRUE(mid.connected());
  ASSERT_TRUE(mid.send("GET " + sub() + "/resourcegroups" + kRg + " HTTP/1.1\r\nHost: local"));
  EXPECT_EQ(mid.receive(), "");
  const int tcp = connect_tcp(server_->port());
  ASSERT_GE(tcp, 0);
  const auto before = Clock::now();
  char byte = 0;
  EXPECT_LE(::recv(tcp, &byte, 1, 0), 0);
  EXPECT_LT(Clock::now() - before, std::chrono::seconds(5));
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
    // A client trickling its head, one silent on TCP: neither holds the exit up.
    RawTls trickling(child.port());
    ASSERT_TRUE(trickling.connected());
    ASSERT_TRUE(trickling.send("GET /metadata/endpoints HTTP/1.1\r\nHost: localhost\r\nX-A: 1\r\n"));
    const int silent = connect_tcp(child.port());
    const auto start = Clock::now();
    auto exit = child.stop(signal, std::chrono::seconds(10));
    ASSERT_TRUE(exit.has_value()) << "signal " << signal << ": still running after 10 s";
    EXPECT_EQ(exit->exit_code, 0) << "signal " << signal << ": " << child.why();
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
    if (silent >= 0) ::close(silent);
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
