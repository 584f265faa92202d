// The ARM route table (arm_route_table.hpp) against docs/serve.md "Routes" (the two cannot
// drift), its matching (404 for an unknown path, 405 for an unknown method, HEAD through GET,
// case-insensitive literals), and ARM paging end to end through the in-process server.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "arm/arm_route_table.hpp"
#include "batchai/common/ids.hpp"
#include "serve_fixture.hpp"

namespace batchai::serve {
namespace {

using Outcome = RouteMatch::Outcome;

// (method, pattern) of each row of the docs' route table, in order.
std::vector<std::pair<std::string, std::string>> documented_routes() {
  std::ifstream in(std::string(BATCHAI_SOURCE_DIR) + "/docs/serve.md");
  std::vector<std::pair<std::string, std::string>> rows;
  std::string line;
  bool inside = false;
  const std::regex row(R"(^\| `([A-Z]+)` \| `([^`]+)` \|)");
  while (std::getline(in, line)) {
    if (line.find("<!-- arm-routes: begin -->") != std::string::npos) inside = true;
    if (line.find("<!-- arm-routes: end -->") != std::string::npos) break;
    std::smatch m;
    if (inside && std::regex_search(line, m, row)) rows.emplace_back(m[1], m[2]);
  }
  return rows;
}

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

RouteMatch match(const std::string& method, const std::string& path) {
  const auto segs = split(path);
  std::vector<std::string> low;
  for (const auto& s : segs) low.push_back(to_lower(s));
  return match_route(arm_route_table(), method, low, segs);
}

TEST(RouteTable, DocsListEveryRouteInTableOrder) {
  std::vector<std::pair<std::string, std::string>> table;
  for (const ArmRoute& r : arm_route_table()) table.emplace_back(std::string(r.method), std::string(r.pattern));
  const auto docs = documented_routes();
  ASSERT_FALSE(docs.empty()) << "docs/serve.md has no route table between the arm-routes markers";
  EXPECT_EQ(docs, table);
}

TEST(RouteTable, EachRowIsReachedByItsOwnPattern) {
  for (const ArmRoute& r : arm_route_table()) {
    std::string path = std::regex_replace(std::string(r.pattern), std::regex(R"(\{[A-Za-z]+\})"), "x1");
    path = std::regex_replace(path, std::regex("/providers/x1/"), "/providers/Microsoft.BatchAI/");
    const RouteMatch m = match(std::string(r.method), path);
    ASSERT_EQ(m.outcome, Outcome::kFound) << r.method << " " << path;
    EXPECT_EQ(m.route, &r) << r.method << " " << r.pattern << " is shadowed by " << m.route->pattern;
  }
}

TEST(RouteTable, UnknownPathsAndMethods) {
  const std::string jobs = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/w/experiments/e/jobs";
  EXPECT_EQ(match("GET", "/not/an/api/path").outcome, Outcome::kNoPath);
  EXPECT_EQ(match("GET", jobs + "/j/bogus").outcome, Outcome::kNoPath);
  EXPECT_EQ(match("GET", jobs + "/j/terminate").outcome, Outcome::kNoMethod);  // POST only
  EXPECT_EQ(match("PATCH", "/subscriptions/s/resourcegroups").outcome, Outcome::kNoMethod);
  EXPECT_EQ(match("TRACE", jobs).outcome, Outcome::kNoMethod);
  EXPECT_EQ(match("POST", jobs).outcome, Outcome::kNoMethod);
}

TEST(RouteTable, CapturesAsSentAndMatchesLiteralsInAnyCase) {
  const RouteMatch m = match("GET", "/SUBSCRIPTIONS/s/RESOURCEGROUPS/MyRg/PROVIDERS/microsoft.batchai/Workspaces/WS1/"
                                    "experiments/Exp/JOBS/Job1");
  ASSERT_EQ(m.outcome, Outcome::kFound);
  EXPECT_EQ(m.args["resourceGroupName"], "MyRg");
  EXPECT_EQ(m.args["workspaceName"], "WS1");
  EXPECT_EQ(m.args["experimentName"], "Exp");
  EXPECT_EQ(m.args["jobName"], "Job1");
  EXPECT_THROW((void)m.args["clusterName"], std::logic_error);
}

TEST(RouteTable, HeadUsesItsOwnRowOrGet) {
  const RouteMatch group = match("HEAD", "/subscriptions/s/resourcegroups/rg");
  ASSERT_EQ(group.outcome, Outcome::kFound);
  EXPECT_EQ(group.route->method, "HEAD");
  const RouteMatch ws = match("HEAD", "/subscriptions/s/resourcegroups/rg/providers/Microsoft.BatchAI/workspaces/w");
  ASSERT_EQ(ws.outcome, Outcome::kFound);
  EXPECT_EQ(ws.route->method, "GET");
}

// --- through the server ----------------------------------------------------------------------

TEST_F(ServeTest, ListsPageWithNextLinks) {
  expect("PUT", rg("rg") + kRg, 201, R"({"location":"eastus"})");
  follow(call("PUT", ws("rg", "ws") + kAi, R"({"location":"eastus"})"));
  std::vector<std::string> made;
  for (int i = 0; i < 7; ++i) {
    made.push_back("e" + std::to_string(i));
    follow(call("PUT", ws("rg", "ws") + "/experiments/" + made.back() + kAi));
  }
  const std::string base = "https://localhost:" + std::to_string(server_->port());
  std::string next = ws("rg", "ws") + "/experiments" + kAi + "&maxresults=3";
  std::vector<std::string> seen;
  std::vector<std::size_t> sizes;
  while (!next.empty()) {
    Json page = expect("GET", next, 200);
    sizes.push_back(page["value"].size());
    for (const auto& e : page["value"]) seen.push_back(e["name"]);
    next.clear();
    if (page.contains("nextLink")) {
      const std::string link = page["nextLink"];
      ASSERT_EQ(link.rfind(base + "/", 0), 0u) << link;  // absolute, on this server
      EXPECT_NE(link.find("api-version=2018-05-01"), std::string::npos) << link;
      next = link.substr(base.size());
    }
  }
  EXPECT_EQ(sizes, (std::vector<std::size_t>{3, 3, 1}));
  EXPECT_EQ(seen, made);
  // Without maxresults: one page, no nextLink (the default is 1,000).
  Json all = expect("GET", ws("rg", "ws") + "/experiments" + kAi, 200);
  EXPECT_EQ(all["value"].size(), 7u);
  EXPECT_FALSE(all.contains("nextLink"));
  // Resource groups page too.
  expect("PUT", rg("rg2") + kRg, 201, R"({"location":"eastus"})");
  Json groups = expect("GET", sub() + "/resourcegroups" + kRg + "&maxresults=1", 200);
  EXPECT_EQ(groups["value"].size(), 1u);
  EXPECT_TRUE(groups.contains("nextLink"));
}

TEST_F(ServeTest, HostilePagingInputIsRefused) {
  expect("PUT", rg("rg") + kRg, 201, R"({"location":"eastus"})");
  follow(call("PUT", ws("rg", "ws") + kAi, R"({"location":"eastus"})"));
  const std::string list = ws("rg", "ws") + "/experiments" + kAi;
  for (const char* q : {"&maxresults=0", "&maxresults=1001", "&maxresults=", "&maxresults=2%2B1", "&maxresults=00000001"})
    EXPECT_EQ(expect("GET", list + q, 400)["error"]["code"], "InvalidMaxResults") << q;
  for (const char* q : {"&$skiptoken=", "&$skiptoken=%00", "&$skiptoken=abc%3D", "&$skiptoken=a%2Fb", "&$skiptoken=AA"})
    EXPECT_EQ(expect("GET", list + q, 400)["error"]["code"], "InvalidSkipToken") << q;
  // A well-formed token is only a position: past every name, an empty page.
  Json after = expect("GET", list + "&$skiptoken=enp6", 200);  // "zzz"
  EXPECT_TRUE(after["value"].empty());
}

}  // namespace
}  // namespace batchai::serve
