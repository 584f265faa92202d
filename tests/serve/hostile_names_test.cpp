// Hostile names end to end (issue 24 rows 7, 8, 9, 11, 12): names that are not UTF-8 on the
// storage data plane (refused with 400) and made by a job (listings survive, for REST and the
// CLI), overlong UTF-8 in ARM resource names, Azure's length limits on blob and file names,
// bearer tokens that must not pass, and locations that are no Azure region.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <ctime>
#include <fstream>
#include <map>

#include "batchai/common/utf8.hpp"
#include "http/encoding.hpp"
#include "serve_fixture.hpp"
#include "storage/shared_key.hpp"
#include "shared_key_signer.hpp"
#include "arm/token.hpp"

namespace batchai::serve {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSt = "?api-version=2022-09-01";
constexpr const char* kAccount = "store1";

std::string error_code(const httplib::Result& r) { return r ? r->get_header_value("x-ms-error-code") : ""; }

class HostileNamesTest : public ServeTest {
 protected:
  void SetUp() override {
    ServeTest::SetUp();
    expect("PUT", rg("rg") + kRg, 201, R"({"location":"eastus"})");
    const std::string account = rg("rg") + "/providers/Microsoft.Storage/storageAccounts/" + kAccount;
    follow(call("PUT", account + kSt, R"({"sku":{"name":"Standard_LRS"},"kind":"StorageV2","location":"eastus"})"));
    key_ = expect("POST", account + "/listKeys" + kSt, 200)["keys"][0]["value"];
    ASSERT_EQ(send("file", "PUT", "/logs?restype=share")->status, 201);
    ASSERT_EQ(send("blob", "PUT", "/models?restype=container")->status, 201);
  }

  // One SharedKey-signed request (the Storage docs' string to sign; GET/HEAD/DELETE carry no
  // body, PUT an octet stream), the target sent as given (percent escapes included).
  httplib::Result send(const std::string& service, const std::string& method, const std::string& target,
                       const std::string& body = "", httplib::Headers h = {}) {
    h.emplace("x-ms-date", rfc1123(std::time(nullptr)));
    h.emplace("x-ms-version", "2021-06-08");
    if (service == "blob" && method == "PUT" && target.find('?') == std::string::npos)
      h.emplace("x-ms-blob-type", "BlockBlob");
    if (service == "file" && method == "PUT" && target.find('?') == std::string::npos) {
      h.emplace("x-ms-type", "file");
      h.emplace("x-ms-content-length", "0");
    }
    const bool put = method == "PUT";
    h.emplace("Authorization", "SharedKey " + std::string(kAccount) + ":" +
                                   shared_key_signature(method, target, body.size(), h, key_, kAccount));
    h.emplace("Host", std::string(kAccount) + "." + service + ".core.localhost:" + std::to_string(server_->port()));
    httplib::Request req;
    req.method = method;
    req.path = target;
    req.headers = h;
    req.body = body;
    if (put) req.set_header("Content-Type", "application/octet-stream");
    return client()->send(req);
  }

  fs::path share_dir() const { return home_ / "storage" / kAccount / "shares" / "logs"; }
  fs::path container_dir() const { return home_ / "storage" / kAccount / "blobs" / "models"; }

  std::string key_;
};

// ---- row 7: names that are not UTF-8 ----

TEST_F(HostileNamesTest, DataPlaneRefusesNamesThatAreNotUtf8) {
  for (const std::string name : {"bad%FF", "bad%C0%AF", "d%ED%A0%80x", "bad%F4%90%80%80"}) {
    auto blob = send("blob", "PUT", "/models/" + name, "x");
    ASSERT_TRUE(blob);
    EXPECT_EQ(blob->status, 400) << name << blob->body;
    EXPECT_EQ(error_code(blob), "InvalidResourceName") << name;
    auto file = send("file", "PUT", "/logs/" + name);
    ASSERT_TRUE(file);
    EXPECT_EQ(file->status, 400) << name << file->body;
    EXPECT_EQ(error_code(file), "InvalidResourceName") << name;
    EXPECT_EQ(send("file", "PUT", "/logs/" + name + "?restype=directory")->status, 400) << name;
    EXPECT_EQ(send("blob", "GET", "/models/" + name)->status, 400) << name;
    EXPECT_EQ(send("file", "GET", "/logs/" + name)->status, 400) << name;
  }
  // Nothing was stored, and the bodies of the refusals are well-formed UTF-8.
  EXPECT_TRUE(fs::is_empty(share_dir()));
  EXPECT_TRUE(fs::is_empty(container_dir()));
  auto r = send("blob", "GET", "/models/bad%FF");
  EXPECT_TRUE(is_valid_utf8(r->body)) << r->body;
}

TEST_F(HostileNamesTest, ListingsSurviveNamesThatJobsMade) {
  // What a job writing into a mounted share or container can leave there.
  std::ofstream(share_dir() / "bad\xff") << "1";
  std::ofstream(share_dir() / "ctl\x01name") << "2";
  std::ofstream(share_dir() / "fine.txt") << "3";
  std::ofstream(container_dir() / "blob\xfe\xff") << "4";
  fs::create_directories(container_dir() / "dir\xc0\xaf");
  std::ofstream(container_dir() / "dir\xc0\xaf" / "in") << "5";

  auto files = send("file", "GET", "/logs?restype=directory&comp=list");
  ASSERT_EQ(files->status, 200) << files->body;
  EXPECT_TRUE(is_valid_utf8(files->body));
  EXPECT_NE(files->body.find("<Name>bad\xEF\xBF\xBD</Name>"), std::string::npos) << files->body;
  // A control character cannot be XML text: listed as Azure lists it, percent-encoded.
  EXPECT_NE(files->body.find("<Name Encoded=\"true\">ctl%01name</Name>"), std::string::npos) << files->body;
  EXPECT_NE(files->body.find("<Name>fine.txt</Name>"), std::string::npos) << files->body;
  EXPECT_EQ(files->body.find('\x01'), std::string::npos);
  auto blobs = send("blob", "GET", "/models?restype=container&comp=list");
  ASSERT_EQ(blobs->status, 200) << blobs->body;
  EXPECT_TRUE(is_valid_utf8(blobs->body));
  EXPECT_NE(blobs->body.find("<Name>blob\xEF\xBF\xBD\xEF\xBF\xBD</Name>"), std::string::npos) << blobs->body;
  EXPECT_NE(blobs->body.find("<Name>dir\xEF\xBF\xBD\xEF\xBF\xBD/in</Name>"), std::string::npos) << blobs->body;

  // The CLI lists them too, as JSON and as TSV.
  auto [rc, out] = cli({"storage", "file", "list", "--account-name", kAccount, "--account-key", key_, "-s", "logs",
                        "--query", "[].name", "-o", "tsv"});
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "bad\xEF\xBF\xBD\nctl\x01name\nfine.txt\n");
  auto [brc, bout] = cli({"storage", "blob", "list", "--account-name", kAccount, "--account-key", key_, "-c", "models",
                          "-o", "json"});
  EXPECT_EQ(brc, 0) << bout;
  EXPECT_NE(bout.find("blob\\ufffd\\ufffd"), std::string::npos) << bout;
}

// A job that writes a name that is not UTF-8 into its output directory.
TEST_F(HostileNamesTest, JobOutputListingsSurviveANameThatIsNotUtf8) {
  follow(call("PUT", ws("rg", "ws") + kAi, R"({"location":"eastus"})"));
  follow(call("PUT", ws("rg", "ws") + "/experiments/e" + kAi));
  follow(call("PUT", ws("rg", "ws") + "/clusters/c" + kAi,
              R"({"properties":{"vmSize":"Standard_D1","scaleSettings":{"manual":{"targetNodeCount":1}},
                  "userAccountSettings":{"adminUserName":"u","adminUserPassword":"p"}}})"));
  const std::string cluster_id = expect("GET", ws("rg", "ws") + "/clusters/c" + kAi, 200)["id"];
  const std::string job = ws("rg", "ws") + "/experiments/e/jobs/j1";
  follow(call("PUT", job + kAi,
              R"({"properties":{"cluster":{"id":")" + cluster_id +
                  R"("},"nodeCount":1,"stdOutErrPathPrefix":"$AZ_BATCHAI_JOB_MOUNT_ROOT","customToolkitSettings":{"commandLine":"touch \"$AZ_BATCHAI_STDOUTERR_DIR/bad$(printf '\\377')\""}}})"));
  std::string state;
  for (int i = 0; i < 200 && state != "succeeded" && state != "failed"; ++i) {
    state = expect("GET", job + kAi, 200)["properties"]["executionState"];
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(state, "succeeded");
  Json files = expect("POST", job + "/listOutputFiles" + kAi + "&outputdirectoryid=stdouterr", 200);
  bool bad_listed = false, stdout_linked = false;
  for (const auto& f : files["value"]) {
    // The name is listed made valid, with no link (it names no file a link could fetch).
    if (f["name"] == "bad\xEF\xBF\xBD") bad_listed = !f.value("downloadUrl", Json()).is_string();
    if (f["name"] == "stdout.txt")
      stdout_linked = f.value("downloadUrl", Json("")).get<std::string>().find("/batchai-files/") != std::string::npos;
  }
  EXPECT_TRUE(bad_listed) << files.dump();
  EXPECT_TRUE(stdout_linked) << files.dump();
  // A directory path that is not UTF-8 is refused, not a 500.
  EXPECT_EQ(expect("POST", job + "/listOutputFiles" + kAi + "&outputdirectoryid=stdouterr&directory=x%FF", 400)["error"]
                ["code"],
            "InvalidResourceName");
  auto [rc, out] = cli({"job", "file", "list", "-g", "rg", "-w", "ws", "-e", "e", "-j", "j1", "--query",
                        "[?name=='stdout.txt'] | length(@)", "-o", "tsv"});
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "1\n");
  auto [trc, table] = cli({"job", "file", "list", "-g", "rg", "-w", "ws", "-e", "e", "-j", "j1", "-o", "json"});
  EXPECT_EQ(trc, 0) << table;
  EXPECT_NE(table.find("bad\\ufffd"), std::string::npos) << table;
}

// ---- row 9: Azure's length limits ----

TEST_F(HostileNamesTest, NameLengthsFollowAzureLimits) {
  const std::string seg255(255, 'a'), seg256(256, 'b'), seg300(300, 'c');
  // Files: 255 characters a segment.
  EXPECT_EQ(send("file", "PUT", "/logs/" + seg255)->status, 201);
  for (const std::string& path : {seg256, seg300}) {
    auto r = send("file", "PUT", "/logs/" + path);
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_EQ(error_code(r), "OutOfRangeInput");
    EXPECT_EQ(send("file", "PUT", "/logs/" + path + "?restype=directory")->status, 400);
  }
  // ... and 2,048 for the whole path (9 segments of 250 are 2,258).
  std::string deep;
  for (int i = 0; i < 9; ++i) deep += (deep.empty() ? "" : "/") + std::string(250, static_cast<char>('a' + i));
  EXPECT_EQ(error_code(send("file", "PUT", "/logs/" + deep)), "OutOfRangeInput");
  // Blobs: 1,024 characters, each '/'-segment within 255 bytes here (a folder's name):
  // 255 + 255 + 255 + 254 with 4 slashes and "z" is 1,024; one more character is refused.
  std::string blob1024;
  for (int i = 0; i < 4; ++i) blob1024 += std::string(i < 3 ? 255 : 254, static_cast<char>('a' + i)) + "/";
  blob1024 += "z";
  ASSERT_EQ(blob1024.size(), 1024u);
  EXPECT_EQ(error_code(send("blob", "PUT", "/models/" + blob1024 + "z", "x")), "OutOfRangeInput");
  auto ok = send("blob", "PUT", "/models/" + blob1024, "x");
  EXPECT_EQ(ok->status, 201) << ok->body;
  auto r = send("blob", "PUT", "/models/" + seg300, "x");
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(error_code(r), "OutOfRangeInput");
  EXPECT_EQ(send("blob", "GET", "/models/" + seg300)->status, 400);
  // Nothing but the 1,024-character blob's first folder was made.
  std::vector<std::string> top;
  for (const auto& e : fs::directory_iterator(container_dir())) top.push_back(e.path().filename().string());
  EXPECT_EQ(top, std::vector<std::string>{std::string(255, 'a')});
}

// ---- row 8: overlong UTF-8 in ARM resource names ----

TEST_F(HostileNamesTest, OverlongUtf8InResourceNamesIsTheNameRule) {
  for (const std::string& path : {rg("rg%c0%af") + kRg, ws("rg", "ws%c0%af") + kAi}) {
    auto r = call("PUT", path, R"({"location":"eastus"})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << path << r->body;
    Json body = Json::parse(r->body);  // well-formed JSON
    EXPECT_NE(body["error"]["message"].get<std::string>().find("name"), std::string::npos) << r->body;
  }
  follow(call("PUT", ws("rg", "ws") + kAi, R"({"location":"eastus"})"));
  for (const std::string& path : {ws("rg", "ws") + "/experiments/e%c0%af" + kAi, ws("rg", "ws") + "/clusters/c%c0%af" + kAi}) {
    auto r = call("PUT", path, "{}");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << path << r->body;
  }
  // Looking one up answers a clean error too, never a 500.
  for (const std::string& path : {rg("rg%c0%af") + kRg, ws("rg", "w%ff") + kAi, ws("rg", "ws") + "/experiments/e%c0%af" + kAi}) {
    auto r = call("GET", path);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->status == 400 || r->status == 404) << path << r->status << r->body;
    EXPECT_TRUE(Json::accept(r->body)) << r->body;
  }
}

// ---- row 11: bearer tokens ----

TEST_F(HostileNamesTest, TokensThatMustNotPass) {
  const std::string path = sub() + "/resourcegroups" + kRg;
  auto status_with = [&](const std::string& token) {
    auto c = client();
    auto r = c->Get(path.c_str(), httplib::Headers{{"Authorization", "Bearer " + token}});
    return r ? r->status : 0;
  };
  const std::string good = token();
  ASSERT_EQ(status_with(good), 200);
  // The signature's last character with its unused bits flipped: the same bytes, other text.
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string flipped = good;
  flipped.back() = alphabet[alphabet.find(good.back()) ^ 1];
  EXPECT_EQ(status_with(flipped), 401);
  // nbf tomorrow, signed with the server's own key.
  const Identity& id = server_->identity();
  const std::int64_t now = std::time(nullptr);
  const Json claims = {{"aud", "https://localhost:" + std::to_string(server_->port()) + "/"},
                       {"nbf", now + 86400}, {"iat", now}, {"exp", now + 90000}, {"tid", id.tenant_id}};
  const std::string part = base64url_encode(R"({"alg":"HS256","typ":"JWT"})") + "." + base64url_encode(claims.dump());
  EXPECT_EQ(status_with(part + "." + base64url_encode(hmac_sha256(id.token_key, part))), 401);
  // A token the server issued for storage, used on ARM.
  auto c = client();
  auto t = c->Post("/adfs/oauth2/token",
                   "grant_type=client_credentials&client_id=" + id.client_id + "&client_secret=" + id.client_secret +
                       "&scope=https%3A%2F%2Fstorage.azure.com%2F.default",
                   "application/x-www-form-urlencoded");
  ASSERT_TRUE(t);
  ASSERT_EQ(t->status, 200) << t->body;
  EXPECT_EQ(status_with(Json::parse(t->body)["access_token"].get<std::string>()), 401);
}

// ---- row 12: locations ----

TEST_F(HostileNamesTest, LocationsMustBeAzureRegions) {
  auto r = call("PUT", rg("forged") + kRg, R"({"location":"east\nus\tforged"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(Json::parse(r->body)["error"]["code"], "LocationNotAvailableForResourceGroup");
  expect("GET", rg("forged") + kRg, 404);
  // ARM's matching: case and spaces do not matter, and the stored form has neither.
  EXPECT_EQ(expect("PUT", rg("spaced") + kRg, 201, R"({"location":"West US 2"})")["location"], "westus2");
  auto w = call("PUT", ws("rg", "badloc") + kAi, R"({"location":"mars"})");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->status, 400) << w->body;
  EXPECT_EQ(Json::parse(w->body)["error"]["code"], "LocationNotAvailableForResourceType");
  expect("GET", ws("rg", "badloc") + kAi, 404);
  auto a = call("PUT", rg("rg") + "/providers/Microsoft.Storage/storageAccounts/badloc1" + kSt,
                R"({"sku":{"name":"Standard_LRS"},"kind":"StorageV2","location":"east us\r\n"})");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, 400) << a->body;
  auto [rc, out] = cli({"group", "list", "-o", "tsv"});
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(out.find("forged"), std::string::npos) << out;
}

}  // namespace
}  // namespace batchai::serve
