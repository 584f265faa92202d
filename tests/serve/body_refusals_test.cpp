// What the transport refuses from a request's head (issue 53): a body on a route that takes none,
// whatever the credentials (F410); a token request past its small bound; a Transfer-Encoding
// other than a final chunked (F412); and the dashboard's headers on the transport's own 414
// and 431 under /ui/ (F413). Each is answered without the server reading the body.
#include <chrono>
#include <csignal>
#include <string>
#include <vector>

#include "raw_tls.hpp"
#include "serve_fixture.hpp"

namespace batchai::serve {
namespace {

class BodyRefusalsTest : public ServeTest {
 protected:
  void SetUp() override {
    ServeTest::SetUp();
    std::signal(SIGPIPE, SIG_IGN);
  }

  static std::string head(const std::string& method, const std::string& target, const std::string& more) {
    return method + " " + target + " HTTP/1.1\r\nHost: localhost\r\n" + more + "\r\n";
  }

  // Sends `request` (a head, maybe more) and reads one answer; "" when none came in 5 s.
  std::string exchange(const std::string& request) {
    RawTls raw(server_->port());
    EXPECT_TRUE(raw.connected());
    if (!raw.connected() || !raw.send(request) || !raw.readable(5000)) return "";
    return raw.receive_answer();
  }

  static bool has_header(const std::string& answer, const std::string& line) {
    const auto end = answer.find("\r\n\r\n");
    return answer.find("\r\n" + line + "\r\n") < end;
  }
};

// F410: routes that take no body (the dashboard, job file links, the discovery routes, a method
// no route serves) refuse one from its head, before a byte of it is sent, with or without
// credentials, declared or chunked; the connection is closed after the answer.
TEST_F(BodyRefusalsTest, RoutesWithoutBodyRefuseOneFromTheHead) {
  const std::vector<std::pair<std::string, std::string>> routes = {
      {"POST", "/ui/"},
      {"GET", "/ui/api/overview"},
      {"PUT", "/batchai-files/x/y?sig=z"},
      {"GET", "/metadata/endpoints?api-version=2019-05-01"},
      {"POST", "/adfs/.well-known/openid-configuration"},
      {"TRACE", "/"},
  };
  for (const auto& [method, target] : routes) {
    for (const std::string framing : {"Content-Length: 4194304\r\n", "Transfer-Encoding: chunked\r\n"}) {
      const std::string answer = exchange(head(method, target, framing));
      EXPECT_EQ(status_of(answer), 413) << method << " " << target << " " << framing << answer.substr(0, 300);
      EXPECT_TRUE(has_header(answer, "Connection: close")) << method << " " << target;
      EXPECT_EQ(body_of(answer)["error"]["code"], "RequestEntityTooLarge");
    }
  }
  // The same without a body is served as before.
  EXPECT_EQ(status_of(exchange(head("GET", "/metadata/endpoints?api-version=2019-05-01", ""))), 200);
}

// F410: the token endpoint reads its form before any credential: at most 16 KiB of it, a larger
// declared length refused from the head, a chunked one at the bound (20 KiB here, which the route
// itself would answer as a malformed form).
TEST_F(BodyRefusalsTest, TokenRequestBodyHasASmallBound) {
  const std::string form = "Content-Type: application/x-www-form-urlencoded\r\n";
  std::string answer = exchange(head("POST", "/adfs/oauth2/token", form + "Content-Length: 16385\r\n"));
  EXPECT_EQ(status_of(answer), 413) << answer.substr(0, 300);
  std::string chunked;
  for (int i = 0; i < 5; ++i) chunked += "1000\r\n" + std::string(0x1000, 'a') + "\r\n";  // 5 x 4 KiB
  answer = exchange(head("POST", "/adfs/oauth2/token", form + "Transfer-Encoding: chunked\r\n") + chunked + "0\r\n\r\n");
  EXPECT_EQ(status_of(answer), 413) << answer.substr(0, 300);
  EXPECT_FALSE(token().empty());  // a real token request still fits
}

// F412 (RFC 9112 §6.3): a Transfer-Encoding other than one final chunked is answered 400 and the
// connection closed; what follows it is never parsed as another request.
TEST_F(BodyRefusalsTest, TransferEncodingOtherThanChunkedIsRefused) {
  const std::string next = head("GET", "/metadata/endpoints?api-version=2019-05-01", "");
  for (const std::string coding : {"gzip", "identity", "chunked, identity", "xchunked", "chunked, chunked",
                                   "gzip, chunked", ""}) {
    RawTls raw(server_->port());
    ASSERT_TRUE(raw.connected());
    ASSERT_TRUE(raw.send(head("GET", "/metadata/endpoints?api-version=2019-05-01",
                              "Transfer-Encoding: " + coding + "\r\n") + next));
    const std::string answer = raw.receive_answer();
    EXPECT_EQ(status_of(answer), 400) << "Transfer-Encoding: " << coding << "\n" << answer.substr(0, 300);
    EXPECT_TRUE(has_header(answer, "Connection: close")) << coding;
    EXPECT_EQ(raw.receive(), "") << "the bytes after the head were answered as a request (" << coding << ")";
  }
  // A plain chunked body (here an empty one) is still framed as before.
  const std::string empty_form = exchange(head("POST", "/adfs/oauth2/token", "Transfer-Encoding: chunked\r\n") + "0\r\n\r\n");
  EXPECT_EQ(body_of(empty_form)["error"], "unsupported_grant_type") << empty_form;  // the token route's own answer
}

// F413: the transport's 414 and 431 under /ui/ carry the headers of every /ui/ answer.
TEST_F(BodyRefusalsTest, TransportRefusalsUnderUiCarryTheDashboardHeaders) {
  const std::string long_target = exchange(head("GET", "/ui/" + std::string(9000, 'a'), ""));
  std::string flood;
  for (int i = 0; i < 800; ++i) flood += "X-Flood-" + std::to_string(i) + ": " + std::string(80, 'f') + "\r\n";
  const std::string big_head = exchange(head("GET", "/ui/", flood));
  EXPECT_EQ(status_of(long_target), 414) << long_target.substr(0, 300);
  EXPECT_EQ(status_of(big_head), 431) << big_head.substr(0, 300);
  for (const std::string* answer : {&long_target, &big_head}) {
    EXPECT_NE(answer->find("Content-Security-Policy: default-src 'none'"), std::string::npos) << *answer;
    EXPECT_TRUE(has_header(*answer, "X-Frame-Options: DENY")) << *answer;
    EXPECT_TRUE(has_header(*answer, "X-Content-Type-Options: nosniff")) << *answer;
  }
}

}  // namespace
}  // namespace batchai::serve
