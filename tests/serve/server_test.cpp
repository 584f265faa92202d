// batchai serve over HTTPS (docs/serve.md): an in-process server on a free port with a temporary
// BATCHAI_HOME, driven with httplib::SSLClient trusting the certificate it made; the executable
// (BATCHAI_EXE) shares the store with it (the fixture: serve_fixture.hpp).
#include <sys/stat.h>

#include <csignal>

#include <algorithm>
#include <ctime>
#include <atomic>
#include <chrono>
#include <sstream>
#include <thread>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "job_files/job_file_links.hpp"
#include "serve_fixture.hpp"
#include "arm/token.hpp"

namespace batchai::serve {
namespace {

namespace fs = std::filesystem;

TEST_F(ServeTest, DiscoveryAndTokenEndpoints) {
  auto c = client();
  const std::string base = "https://localhost:" + std::to_string(server_->port());
  auto meta = c->Get("//metadata/endpoints?api-version=2015-01-01");  // az doubles the slash
  ASSERT_TRUE(meta);
  ASSERT_EQ(meta->status, 200);
  Json m = Json::parse(meta->body);
  EXPECT_EQ(m["authentication"]["loginEndpoint"], base + "/adfs");
  EXPECT_EQ(m["authentication"]["audiences"][0], base + "/");
  auto oid = c->Get("/adfs/.well-known/openid-configuration");
  ASSERT_TRUE(oid);
  EXPECT_EQ(Json::parse(oid->body)["token_endpoint"], base + "/adfs/oauth2/token");
  const std::string t = token();
  EXPECT_EQ(std::count(t.begin(), t.end(), '.'), 2);
  const Identity& id = server_->identity();
  auto bad = c->Post("/adfs/oauth2/token", "client_id=" + id.client_id + "&grant_type=client_credentials&client_secret=nope",
                     "application/x-www-form-urlencoded");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 401);
  EXPECT_EQ(Json::parse(bad->body)["error"], "invalid_client");
  auto grant = c->Post("/adfs/oauth2/token", "grant_type=password&username=a&password=b", "application/x-www-form-urlencoded");
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->status, 400);
  auto malformed = c->Post("/adfs/oauth2/token", "grant_type=%zz", "application/x-www-form-urlencoded");
  ASSERT_TRUE(malformed);
  EXPECT_EQ(malformed->status, 400);
  Json subs = expect("GET", "/subscriptions?api-version=2019-11-01", 200);
  EXPECT_EQ(subs["value"][0]["subscriptionId"], subscription_id());
  EXPECT_EQ(subs["value"][0]["tenantId"], id.tenant_id);
  expect("GET", sub() + "?api-version=2019-11-01", 200);
  EXPECT_EQ(expect("GET", "/tenants?api-version=2019-11-01", 200)["value"][0]["tenantId"], id.tenant_id);
}

TEST_F(ServeTest, ArmRequestsNeedAValidUnexpiredToken) {
  auto c = client();
  auto none = c->Get("/subscriptions?api-version=2019-11-01");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(Json::parse(none->body)["error"]["code"], "AuthenticationFailed");
  auto check = [&](const std::string& header, const std::string& code) {
    auto r = c->Get((sub() + "/resourcegroups" + kRg).c_str(), {{"Authorization", header}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << header.substr(0, 40);
    EXPECT_EQ(Json::parse(r->body)["error"]["code"], code) << header.substr(0, 40);
  };
  check("Basic abc", "AuthenticationFailed");
  check("Bearer abc.def.ghi", "InvalidAuthenticationToken");
  Identity forged = server_->identity();
  forged.token_key = std::string(32, 'f');
  check("Bearer " + issue_token(forged, "x", std::time(nullptr)), "InvalidAuthenticationToken");
  check("Bearer " + issue_token(server_->identity(), "x", std::time(nullptr) - 2 * kTokenLifetimeSeconds),
        "ExpiredAuthenticationToken");
  check("Bearer " + std::string(kMaxTokenBytes + 1, 'a'), "InvalidAuthenticationToken");
}

// Tags: set by PUT and PATCH (the SDK's workspaces.update), checked by ARM's rules; a refused
// PATCH changes nothing.
TEST_F(ServeTest, WorkspaceAndGroupTagsFollowArmRules) {
  expect("PUT", rg("rg") + kRg, 201, R"({"location":"eastus"})");
  follow(call("PUT", ws("rg", "ws") + kAi, R"({"location":"eastus","tags":{"owner":"me"}})"));
  EXPECT_EQ(expect("GET", ws("rg", "ws") + kAi, 200)["tags"], Json({{"owner", "me"}}));
  EXPECT_EQ(expect("PATCH", ws("rg", "ws") + kAi, 200, R"({"tags":{"team":"ml"}})")["tags"], Json({{"team", "ml"}}));
  EXPECT_EQ(expect("PATCH", ws("rg", "nope") + kAi, 404, R"({"tags":{}})")["error"]["code"], "WorkspaceNotFound");
  std::string many = "{";
  for (int i = 0; i < 51; ++i) many += (i ? "," : "") + std::string("\"t") + std::to_string(i) + "\":\"v\"";
  many += "}";
  const std::pair<std::string, std::string> refused[] = {
      {R"({"tags":["a"]})", "InvalidTagFormat"},
      {R"({"tags":{"a<b":"c"}})", "InvalidTagNameCharacters"},
      {R"({"tags":{"":"c"}})", "InvalidTagNameCharacters"},
      {R"({"tags":{"a":7}})", "InvalidTagValueLength"},
      {R"({"tags":{"a":")" + std::string(257, 'v') + R"("}})", "InvalidTagValueLength"},
      {R"({"tags":)" + many + "}", "InvalidTagCount"}};
  for (const auto& [body, code] : refused) {
    EXPECT_EQ(expect("PATCH", ws("rg", "ws") + kAi, 400, body)["error"]["code"], code) << body.substr(0, 60);
    EXPECT_EQ(expect("PATCH", rg("rg") + kRg, 400, body)["error"]["code"], code) << body.substr(0, 60);
  }
  EXPECT_EQ(expect("GET", ws("rg", "ws") + kAi, 200)["tags"], Json({{"team", "ml"}}));
  EXPECT_EQ(expect("PUT", rg("other") + kRg, 400, R"({"location":"eastus","tags":{"a":1}})")["error"]["code"],
            "InvalidTagValueLength");
  expect("HEAD", rg("other") + kRg, 404);  // nothing half-created
}

TEST_F(ServeTest, ApiVersionIsRequiredAndChecked) {
  Json missing = expect("GET", sub() + "/resourcegroups", 400);
  EXPECT_EQ(missing["error"]["code"], "MissingApiVersionParameter");
  Json bad = expect("GET", sub() + "/resourcegroups?api-version=2099-01-01", 400);
  EXPECT_EQ(bad["error"]["code"], "InvalidApiVersionParameter");
  EXPECT_NE(bad["error"]["message"].get<std::string>().find("2021-04-01"), std::string::npos);
  Json batch = expect("GET", rg("g") + "/providers/Microsoft.BatchAI/workspaces?api-version=2017-09-01-preview", 400);
  EXPECT_EQ(batch["error"]["code"], "InvalidApiVersionParameter");
  Json hostile = expect("GET", sub() + "/resourcegroups?api-version=%3Cscript%3E", 400);
  EXPECT_EQ(hostile["error"]["message"].get<std::string>().find("<script>"), std::string::npos);
}

TEST_F(ServeTest, ResourceGroupLifecycleWithDeleteAsOperation) {
  Json created = expect("PUT", rg("rg1") + kRg, 201, R"({"location":"eastus","tags":{"a":"b"}})");
  EXPECT_EQ(created["name"], "rg1");
  EXPECT_EQ(created["location"], "eastus");
  EXPECT_EQ(created["properties"]["provisioningState"], "Succeeded");
  EXPECT_FALSE(created.contains("resourceGroup"));
  expect("PUT", rg("rg1") + kRg, 200, R"({"location":"eastus"})");
  EXPECT_EQ(expect("GET", rg("rg1") + kRg, 200)["tags"], Json({{"a", "b"}}));  // a PUT without tags keeps them
  EXPECT_EQ(expect("PUT", rg("rg1") + kRg, 200, R"({"location":"eastus","tags":{"c":"d"}})")["tags"], Json({{"c", "d"}}));
  EXPECT_EQ(expect("PATCH", rg("rg1") + kRg, 200, R"({"tags":{"team":"ml"}})")["tags"], Json({{"team", "ml"}}));
  EXPECT_EQ(expect("PATCH", rg("rg1") + kRg, 200, "{}")["tags"], Json({{"team", "ml"}}));
  EXPECT_EQ(expect("GET", rg("rg1") + kRg, 200)["id"], "/subscriptions/" + subscription_id() + "/resourceGroups/rg1");
  expect("HEAD", rg("rg1") + kRg, 204);
  // resourcegroups in any case (az group commands send it lower-case)
  Json list = expect("GET", sub() + "/resourcegroups" + kRg, 200);
  ASSERT_EQ(list["value"].size(), 1u);
  follow(call("DELETE", rg("rg1") + kRg));
  Json gone = expect("GET", rg("rg1") + kRg, 404);
  EXPECT_FALSE(gone["error"]["code"].get<std::string>().empty());
  expect("HEAD", rg("rg1") + kRg, 404);
  EXPECT_EQ(expect("DELETE", rg("rg1") + kRg, 404)["error"]["code"], "ResourceGroupNotFound");
  EXPECT_EQ(expect("PUT", rg("rg2") + kRg, 400, "{}")["error"]["code"], "LocationRequired");
}

TEST_F(ServeTest, WorkspaceExperimentClusterAsOperations) {
  expect("PUT", rg("rg") + kRg, 201, R"({"location":"eastus"})");
  follow(call("PUT", ws("rg", "ws1") + kAi, R"({"location":"eastus"})"));
  Json w = expect("GET", ws("rg", "ws1") + kAi, 200);
  EXPECT_EQ(w["name"], "ws1");
  EXPECT_EQ(w["type"], "Microsoft.BatchAI/workspaces");
  EXPECT_EQ(w["properties"]["provisioningState"], "succeeded");
  EXPECT_EQ(expect("GET", rg("rg") + "/providers/Microsoft.BatchAI/workspaces" + kAi, 200)["value"].size(), 1u);
  EXPECT_EQ(expect("GET", sub() + "/providers/Microsoft.BatchAI/workspaces" + kAi, 200)["value"].size(), 1u);

  follow(call("PUT", ws("rg", "ws1") + "/experiments/exp1" + kAi));
  EXPECT_EQ(expect("GET", ws("rg", "ws1") + "/experiments/exp1" + kAi, 200)["name"], "exp1");
  EXPECT_EQ(expect("GET", ws("rg", "ws1") + "/experiments" + kAi, 200)["value"].size(), 1u);

  const std::string cluster = R"({"properties": {"vmSize": "Standard_NC6",
      "scaleSettings": {"manual": {"targetNodeCount": 1, "nodeDeallocationOption": "requeue"}},
      "virtualMachineConfiguration": {"imageReference": {"publisher": "Canonical", "offer": "UbuntuServer", "sku": "16.04-LTS"}},
      "userAccountSettings": {"adminUserName": "demoUser", "adminUserPassword": "Passw0rd!"}}})";
  EXPECT_EQ(expect("GET", ws("rg", "ws1") + "/clusters/nc6" + kAi, 404)["error"]["message"].get<std::string>().empty(), false);
  follow(call("PUT", ws("rg", "ws1") + "/clusters/nc6" + kAi, cluster));
  Json c = expect("GET", ws("rg", "ws1") + "/clusters/nc6" + kAi, 200);
  EXPECT_EQ(c["properties"]["vmSize"], "STANDARD_NC6");
  EXPECT_EQ(c["properties"]["scaleSettings"]["manual"]["targetNodeCount"], 1);
  EXPECT_TRUE(c["properties"]["userAccountSettings"]["adminUserPassword"].is_null());
  EXPECT_TRUE(c["properties"]["nodeStateCounts"].is_object());
  EXPECT_EQ(expect("GET", ws("rg", "ws1") + "/clusters" + kAi, 200)["value"].size(), 1u);
  EXPECT_EQ(expect("PUT", ws("rg", "ws1") + "/clusters/nc6" + kAi, 409, cluster)["error"]["code"].is_string(), true);
  Json resized = expect("PATCH", ws("rg", "ws1") + "/clusters/nc6" + kAi, 200,
                        R"({"properties":{"scaleSettings":{"manual":{"targetNodeCount":0,"nodeDeallocationOption":"requeue"}}}})");
  EXPECT_EQ(resized["properties"]["scaleSettings"]["manual"]["targetNodeCount"], 0);
  Json bad = expect("PATCH", ws("rg", "ws1") + "/clusters/nc6" + kAi, 400,
                    R"({"properties":{"scaleSettings":{"manual":{"targetNodeCount":1e20}}}})");
  EXPECT_EQ(bad["error"]["code"], "BadRequest");
  // A body's error speaks of the document, never of a file: the body is never written to one.
  Json wrong = expect("PUT", ws("rg", "ws1") + "/clusters/bad" + kAi, 400,
                     R"({"properties":{"vmSize":5,"userAccountSettings":{"adminUserName":"u","adminUserPassword":"p"}}})");
  EXPECT_EQ(wrong["error"]["message"], "The cluster configuration has a value of the wrong type: type must be string, but is number.");
  EXPECT_FALSE(fs::exists(home_ / "serve" / "requests"));
  follow(call("DELETE", ws("rg", "ws1") + "/clusters/nc6" + kAi));
  expect("GET", ws("rg", "ws1") + "/clusters/nc6" + kAi, 404);
  expect("DELETE", ws("rg", "ws1") + "/clusters/nc6" + kAi, 204);
  EXPECT_EQ(expect("GET", sub() + "/providers/Microsoft.BatchAI/locations/eastus/usages" + kAi, 200)["value"].size() > 0, true);
  EXPECT_EQ(expect("GET", "/providers/Microsoft.BatchAI/operations" + std::string(kAi), 200)["value"].size() > 0, true);
}

TEST_F(ServeTest, StorageAccountsAndKeys) {
  const std::string st = "?api-version=2022-09-01";
  expect("PUT", rg("rg") + kRg, 201, R"({"location":"eastus"})");
  const std::string acct = rg("rg") + "/providers/Microsoft.Storage/storageAccounts/batchaistore1";
  follow(call("PUT", acct + st, R"({"sku":{"name":"Standard_LRS"},"kind":"StorageV2","location":"eastus"})"));
  Json a = expect("GET", acct + st, 200);
  EXPECT_EQ(a["name"], "batchaistore1");
  EXPECT_TRUE(a["properties"]["primaryEndpoints"].is_object());
  EXPECT_EQ(expect("GET", sub() + "/providers/Microsoft.Storage/storageAccounts" + st, 200)["value"].size(), 1u);
  EXPECT_EQ(expect("GET", rg("rg") + "/providers/Microsoft.Storage/storageAccounts" + st, 200)["value"].size(), 1u);
  Json keys = expect("POST", acct + "/listKeys" + st + "&$expand=kerb", 200);
  EXPECT_EQ(keys["keys"][0]["keyName"], "key1");
  expect("DELETE", acct + st, 200);
  expect("DELETE", acct + st, 204);
}

TEST_F(ServeTest, CliAndServerShareTheStore) {
  expect("PUT", rg("rg") + kRg, 201, R"({"location":"eastus"})");
  follow(call("PUT", ws("rg", "fromapi") + kAi, R"({"location":"eastus"})"));
  auto shown = cli({"workspace", "show", "-g", "rg", "-n", "fromapi"});
  ASSERT_EQ(shown.first, 0) << shown.second;
  EXPECT_EQ(Json::parse(shown.second)["name"], "fromapi");
  auto made = cli({"workspace", "create", "-g", "rg", "-n", "fromcli", "-l", "eastus"});
  ASSERT_EQ(made.first, 0) << made.second;
  EXPECT_EQ(expect("GET", ws("rg", "fromcli") + kAi, 200)["name"], "fromcli");
  follow(call("DELETE", ws("rg", "fromapi") + kAi));
  EXPECT_EQ(cli({"workspace", "show", "-g", "rg", "-n", "fromapi"}).first, 3);
}

namespace cp = control_plane;

class ServeJobTest : public ServeTest {
 protected:
  // A workspace "ws" with experiment "e" and a 1-node cluster "c"; returns the job path for
  // `name` after creating it with `command` and waiting for it to end (its final state in `state`).
  std::string run_job(const std::string& name, const std::string& command, std::string& state);
};

std::string ServeJobTest::run_job(const std::string& name, const std::string& command, std::string& state) {
  expect("PUT", rg("rg") + kRg, 201, R"({"location":"eastus"})");
  follow(call("PUT", ws("rg", "ws") + kAi, R"({"location":"eastus"})"));
  follow(call("PUT", ws("rg", "ws") + "/experiments/e" + kAi));
  follow(call("PUT", ws("rg", "ws") + "/clusters/c" + kAi,
                  R"({"properties":{"vmSize":"Standard_D1","scaleSettings":{"manual":{"targetNodeCount":1}},
                      "userAccountSettings":{"adminUserName":"u","adminUserPassword":"p"}}})"));
  const std::string cluster_id = expect("GET", ws("rg", "ws") + "/clusters/c" + kAi, 200)["id"];
  const std::string job = ws("rg", "ws") + "/experiments/e/jobs/" + name;
  follow(call("PUT", job + kAi,
                  R"({"properties":{"cluster":{"id":")" + cluster_id +
                      R"("},"nodeCount":1,"stdOutErrPathPrefix":"$AZ_BATCHAI_JOB_MOUNT_ROOT","customToolkitSettings":{"commandLine":")" +
                      command + R"("}}})"));
  state.clear();
  for (int i = 0; i < 200 && state != "succeeded" && state != "failed"; ++i) {
    state = expect("GET", job + kAi, 200)["properties"]["executionState"];
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return job;
}

TEST_F(ServeJobTest, JobCreateRunsAndIsListedAndTerminable) {
  std::string state;
  const std::string job = run_job("j1", "echo hello", state);
  Json j = expect("GET", job + kAi, 200);
  EXPECT_EQ(j["properties"]["toolType"], "custom");
  EXPECT_EQ(expect("GET", ws("rg", "ws") + "/experiments/e/jobs" + kAi, 200)["value"].size(), 1u);
  // The CLI sees it too.
  EXPECT_EQ(cli({"job", "show", "-g", "rg", "-w", "ws", "-e", "e", "-n", "j1"}).first, 0);
  EXPECT_EQ(state, "succeeded");
  Json files = expect("POST", job + "/listOutputFiles" + kAi + "&outputdirectoryid=stdouterr&linkexpiryinminutes=60", 200);
  bool stdout_listed = false;
  for (const auto& f : files["value"]) stdout_listed |= f["name"] == "stdout.txt";
  EXPECT_TRUE(stdout_listed) << files.dump();
  EXPECT_EQ(expect("POST", job + "/listOutputFiles" + kAi, 400)["error"]["code"], "MissingRequiredQueryParameter");
  follow(call("POST", job + "/terminate" + kAi));
  follow(call("DELETE", job + kAi));
  expect("GET", job + kAi, 404);
}

// GET …/jobs is joined from cached wire text (wire_cache.hpp): a listed job is what its GET
// answers, and after a state change the list shows the new state, not the cached one.
TEST_F(ServeJobTest, ListedJobFollowsItsStateAndMatchesItsGet) {
  std::string state;
  const std::string done = run_job("j1", "true", state);
  const std::string list = ws("rg", "ws") + "/experiments/e/jobs" + kAi;
  EXPECT_EQ(expect("GET", list, 200)["value"][0], expect("GET", done + kAi, 200));
  const std::string cluster_id = expect("GET", ws("rg", "ws") + "/clusters/c" + kAi, 200)["id"];
  const std::string job = ws("rg", "ws") + "/experiments/e/jobs/j2";
  follow(call("PUT", job + kAi,
              R"({"properties":{"cluster":{"id":")" + cluster_id +
                  R"("},"nodeCount":1,"stdOutErrPathPrefix":"$AZ_BATCHAI_JOB_MOUNT_ROOT","customToolkitSettings":{"commandLine":"sleep 60"}}})"));
  const Json before = expect("GET", list, 200)["value"];  // j2 queued or running, now cached
  ASSERT_EQ(before.size(), 2u);
  EXPECT_NE(before[1]["properties"]["executionState"], "failed");
  follow(call("POST", job + "/terminate" + kAi));
  const Json after = expect("GET", list, 200)["value"];
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[1]["properties"]["executionState"], "failed");
  EXPECT_EQ(after[1], expect("GET", job + kAi, 200));
  EXPECT_EQ(after[0], before[0]);
}

// listOutputFiles answers links on the server that need no token (az's `job file stream` GETs
// them with a Range), and only links the server signed, unexpired, for files still there.
TEST_F(ServeJobTest, JobFileLinksServeTheFileAndRefuseForgeries) {
  std::string state;
  const std::string job = run_job("j1", "echo hello", state);
  ASSERT_EQ(state, "succeeded");
  Json files = expect("POST", job + "/listOutputFiles" + kAi + "&outputdirectoryid=stdouterr&linkexpiryinminutes=5", 200);
  std::string url;
  for (const auto& f : files["value"])
    if (f["name"] == "stdout.txt") url = f["downloadUrl"];
  const std::string base = "https://localhost:" + std::to_string(server_->port());
  ASSERT_EQ(url.rfind(base + "/batchai-files/", 0), 0u) << files.dump();
  const std::string path = url.substr(base.size());
  auto c = client();  // no Authorization header anywhere below
  auto get = [&](const std::string& p, httplib::Headers h = {}) {
    auto r = c->Get(p.c_str(), h);
    EXPECT_TRUE(r);
    return r ? std::make_pair(r->status, r->body) : std::make_pair(0, std::string());
  };
  EXPECT_EQ(get(path), std::make_pair(200, std::string("hello\n")));
  EXPECT_EQ(get(path, {{"Range", "bytes=2-"}}), std::make_pair(206, std::string("llo\n")));
  EXPECT_EQ(get(path, {{"Range", "bytes=6-"}}).first, 416);  // az's next poll once it has it all
  auto post = c->Post(path.c_str(), "", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 400);

  std::string tampered = path;
  tampered.back() = tampered.back() == 'A' ? 'B' : 'A';
  EXPECT_EQ(get(tampered).first, 403);
  EXPECT_EQ(get("/batchai-files/nodot").first, 403);
  EXPECT_EQ(get("/batchai-files/" + std::string(5000, 'a') + ".b").first, 403);  // over the link limit, under httplib's
  const cp::JobRef ref{{"rg", "ws"}, "e", "j1"};
  const std::int64_t later = std::time(nullptr) + 300;
  Identity forged = server_->identity();
  forged.token_key = std::string(32, 'f');
  EXPECT_EQ(get(job_file_url(forged, "", {ref, "stdouterr", ".", "stdout.txt", later})).first, 403);
  EXPECT_EQ(get(job_file_url(server_->identity(), "", {ref, "stdouterr", ".", "stdout.txt", later - 600})).first, 403);
  // Signed, but naming what is not there, or leading out of the folder: refused, never served.
  const Identity& id = server_->identity();
  EXPECT_EQ(get(job_file_url(id, "", {ref, "stdouterr", ".", "nothere.txt", later})).first, 404);
  EXPECT_EQ(get(job_file_url(id, "", {ref, "stdouterr", "..", "stdout.txt", later})).first, 400);
  EXPECT_EQ(get(job_file_url(id, "", {ref, "stdouterr", ".", "../../../../etc/passwd", later})).first, 400);
  EXPECT_EQ(get(job_file_url(id, "", {{{"rg", "ws"}, "e", "other"}, "stdouterr", ".", "stdout.txt", later})).first, 404);

  follow(call("DELETE", job + kAi));
  EXPECT_EQ(get(path).first, 404);  // the job is gone, and its link with it
}

// Each request thread works through a control plane of its own on the one store: parallel
// creates all land, none is lost or fails on a locked database.
TEST_F(ServeTest, ParallelCreatesAllLand) {
  expect("PUT", rg("rg") + kRg, 201, R"({"location":"eastus"})");
  follow(call("PUT", ws("rg", "ws") + kAi, R"({"location":"eastus"})"));
  auth();  // one token, fetched before the threads start
  std::vector<std::thread> threads;
  std::atomic<int> accepted{0};
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&, i] {
      auto r = call("PUT", ws("rg", "ws") + "/experiments/e" + std::to_string(i) + kAi);
      if (r && r->status == 202) ++accepted;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(accepted, 16);
  EXPECT_EQ(expect("GET", ws("rg", "ws") + "/experiments" + kAi, 200)["value"].size(), 16u);
}

TEST_F(ServeTest, RefusalsAreArmErrors) {
  Json missing = expect("GET", ws("nogroup", "nows") + kAi, 404);
  EXPECT_FALSE(missing["error"]["code"].get<std::string>().empty());
  EXPECT_FALSE(missing["error"]["message"].get<std::string>().empty());
  EXPECT_EQ(expect("GET", "/subscriptions/other/resourcegroups" + std::string(kRg), 404)["error"]["code"],
            "SubscriptionNotFound");
  EXPECT_EQ(expect("GET", "/not/an/api/path", 404)["error"]["code"], "NotFound");
  EXPECT_EQ(expect("PATCH", sub() + "/resourcegroups" + kRg, 405)["error"]["code"], "MethodNotAllowed");
}

TEST_F(ServeTest, BodiesAreBounded) {
  Json not_object = expect("PUT", rg("rg") + kRg, 400, "[1,2]");
  EXPECT_FALSE(not_object["error"]["message"].get<std::string>().empty());
  Json malformed = expect("PUT", rg("rg") + kRg, 400, "{not json");
  EXPECT_FALSE(malformed["error"]["message"].get<std::string>().empty());
  Json deep = expect("PUT", rg("rg") + kRg, 400, std::string(10000, '[') + std::string(10000, ']'));
  EXPECT_FALSE(deep["error"]["message"].get<std::string>().empty());
  Json huge = expect("PUT", rg("rg") + kRg, 413, "{\"location\":\"" + std::string(5 * 1024 * 1024, 'a') + "\"}");
  EXPECT_EQ(huge["error"]["code"], "RequestEntityTooLarge");
}

TEST_F(ServeTest, CredentialsAndCertificateArePrivateAndReused) {
  struct stat st {};
  ASSERT_EQ(::stat((home_ / "serve" / "key.pem").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((home_ / "serve" / "credentials.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string cert = read_file(home_ / "serve" / "cert.pem");
  const std::string client = server_->identity().client_id;
  const std::string lines = server_->client_setup_lines();
  std::istringstream in(lines);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    EXPECT_TRUE(line.rfind("export ", 0) == 0 || line.rfind("az ", 0) == 0) << line;
  }
  EXPECT_EQ(n, 4);
  EXPECT_NE(lines.find("--endpoint-resource-manager https://localhost:" + std::to_string(server_->port()) + "/"),
            std::string::npos);
  EXPECT_NE(lines.find("-u " + client + " -p " + server_->identity().client_secret), std::string::npos);
  stop_server();
  start_server();
  EXPECT_EQ(read_file(home_ / "serve" / "cert.pem"), cert);
  EXPECT_EQ(server_->identity().client_id, client);
  token();  // the new server still serves
}

TEST_F(ServeTest, RefusesBadOptions) {
  ServerConfig config;
  config.settings = control_plane::Settings::from_environment();
  config.port = 70000;
  EXPECT_THROW(Server{config}, InvalidArgument);
  config.port = 0;
  config.host = "bad host;";
  EXPECT_THROW(Server{config}, InvalidArgument);
  config.host = "127.0.0.1";
  config.cert_file = home_ / "serve" / "cert.pem";
  EXPECT_THROW(Server{config}, InvalidArgument);  // --cert without --key
  config.key_file = home_ / "serve" / "credentials.json";
  EXPECT_THROW(Server{config}, InvalidArgument);  // not a key
  config.port = server_->port();
  config.cert_file.clear();
  config.key_file.clear();
  EXPECT_THROW(Server{config}, SystemError);  // port taken
}

// `batchai serve --port 0` as users run it: the plugin beside the executable, the four lines on
// stdout, a request answered, SIGTERM, exit 0. Skipped while the executable has no `serve`.
TEST(ServeCommand, ServesUntilSigtermThenExitsZero) {
  const fs::path home = make_temp_dir("batchai-serve-cmd");
  // The serve plugin is part of every build: its absence is a failure, never a skip.
  ASSERT_TRUE(exe_has_serve_command(home)) << "batchai serve did not start (is libbatchai_serve.so built?)";
  {
    ServeChild child(home);
    ASSERT_TRUE(child.ok()) << child.why();
    EXPECT_EQ(child.out().rfind("export REQUESTS_CA_BUNDLE=", 0), 0u) << child.out();
    httplib::SSLClient client("localhost", child.port());
    client.set_ca_cert_path((home / "serve" / "cert.pem").c_str());
    client.enable_server_certificate_verification(true);
    auto r = client.Get("//metadata/endpoints?api-version=2015-01-01");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    auto exit = child.stop(SIGTERM, std::chrono::seconds(20));
    ASSERT_TRUE(exit.has_value());
    EXPECT_EQ(exit->exit_code, 0) << child.why();
  }
  fs::remove_all(home);
}

}  // namespace
}  // namespace batchai::serve
