// The storage data plane of batchai serve (docs/serve-clients.md "The storage data plane"): Azure Files
// and Blob requests on ACCOUNT.file|blob.core.localhost, signed with SharedKey as the storage SDK
// signs them (the signer below is the test's own, written from the Storage docs), and the
// refusals: forged or stale signatures, bearer tokens, '..', oversize ranges, ranges past a
// file's declared length, oversize declared lengths.
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sched.h>
#include <sys/mount.h>

#include <algorithm>
#include <ctime>
#include <map>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "raw_tls.hpp"
#include "serve_fixture.hpp"
#include "storage/shared_key.hpp"
#include "shared_key_signer.hpp"

namespace batchai::serve {
namespace {

constexpr const char* kSt = "?api-version=2022-09-01";
constexpr const char* kAccount = "store1";

class StorageServeTest : public ServeTest {
 protected:
  void SetUp() override {
    ServeTest::SetUp();
    expect("PUT", rg("rg") + kRg, 201, R"({"location":"eastus"})");
    account_url_ = rg("rg") + "/providers/Microsoft.Storage/storageAccounts/" + kAccount;
    follow(call("PUT", account_url_ + kSt, R"({"sku":{"name":"Standard_LRS"},"kind":"StorageV2","location":"eastus"})"));
    key_ = expect("POST", account_url_ + "/listKeys" + kSt, 200)["keys"][0]["value"];
  }

  // One request to ACCOUNT.SERVICE.core.localhost, signed with `key` (the account's by default).
  httplib::Result send(const std::string& service, const std::string& method, const std::string& target,
                       const std::string& body = "", httplib::Headers extra = {}, std::optional<std::string> key = {},
                       std::string account = kAccount) {
    const std::string host = account + "." + service + ".core.localhost:" + std::to_string(server_->port());
    httplib::Headers h = std::move(extra);
    if (!h.count("x-ms-date")) h.emplace("x-ms-date", rfc1123(std::time(nullptr)));
    h.emplace("x-ms-version", "2021-06-08");
    if (!h.count("Authorization")) h.emplace("Authorization", "SharedKey " + account + ":" + sign(method, target, body, h, key.value_or(key_), account));
    h.emplace("Host", host);
    auto c = client();
    httplib::Request req;
    req.method = method;
    req.path = target;
    req.headers = h;
    req.body = body;
    if (method == "PUT" || method == "POST") req.set_header("Content-Type", "application/octet-stream");
    return c->send(req);
  }

  std::string sign(const std::string& method, const std::string& target, const std::string& body,
                   const httplib::Headers& h, const std::string& key, const std::string& account) {
    return shared_key_signature(method, target, body.size(), h, key, account);
  }

  static std::string error_code(const httplib::Result& r) {
    auto it = r->headers.find("x-ms-error-code");
    return it == r->headers.end() ? "" : it->second;
  }

  std::string account_url_;
  std::string key_;
};

// Sends once (the argument is a request), then checks the status.
#define EXPECT_STATUS(r, s)                            \
  do {                                                 \
    auto&& status_result_ = (r);                       \
    ASSERT_TRUE(status_result_);                       \
    EXPECT_EQ(status_result_->status, s) << status_result_->body; \
  } while (0)

TEST_F(StorageServeTest, AccountsNameTheServedEndpoints) {
  Json a = expect("GET", account_url_ + kSt, 200);
  const std::string port = std::to_string(server_->port());
  EXPECT_EQ(a["properties"]["primaryEndpoints"]["file"], "https://store1.file.core.localhost:" + port + "/");
  EXPECT_EQ(a["properties"]["primaryEndpoints"]["blob"], "https://store1.blob.core.localhost:" + port + "/");
}

TEST_F(StorageServeTest, FilesShareDirectoryAndRangedFile) {
  EXPECT_STATUS(send("file", "PUT", "/logs?restype=share"), 201);
  auto again = send("file", "PUT", "/logs?restype=share");
  EXPECT_STATUS(again, 409);
  EXPECT_EQ(error_code(again), "ShareAlreadyExists");
  EXPECT_STATUS(send("file", "GET", "/logs?restype=share"), 200);
  EXPECT_STATUS(send("file", "PUT", "/logs/dir?restype=directory"), 201);
  EXPECT_EQ(error_code(send("file", "PUT", "/logs/dir?restype=directory")), "ResourceAlreadyExists");
  // 5 MiB + 3 in two ranges (4 MiB, then the rest), as the SDK uploads.
  std::string data(5 * 1024 * 1024 + 3, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + i / 4096);
  EXPECT_STATUS(send("file", "PUT", "/logs/dir/big.bin", "",
                     {{"x-ms-type", "file"}, {"x-ms-content-length", std::to_string(data.size())}}),
                201);
  const std::size_t cut = 4 * 1024 * 1024;
  auto first = send("file", "PUT", "/logs/dir/big.bin?comp=range", data.substr(0, cut),
                    {{"x-ms-range", "bytes=0-" + std::to_string(cut - 1)}, {"x-ms-write", "update"}});
  EXPECT_STATUS(first, 201);
  EXPECT_FALSE(first->get_header_value("Content-MD5").empty());
  EXPECT_STATUS(send("file", "PUT", "/logs/dir/big.bin?comp=range", data.substr(cut),
                     {{"x-ms-range", "bytes=" + std::to_string(cut) + "-" + std::to_string(data.size() - 1)},
                      {"x-ms-write", "update"}}),
                201);
  auto whole = send("file", "GET", "/logs/dir/big.bin");
  EXPECT_STATUS(whole, 200);
  EXPECT_TRUE(whole->body == data);
  auto part = send("file", "GET", "/logs/dir/big.bin", "", {{"x-ms-range", "bytes=10-19"}});
  EXPECT_STATUS(part, 206);
  EXPECT_EQ(part->body, data.substr(10, 10));
  EXPECT_EQ(part->get_header_value("Content-Range"), "bytes 10-19/" + std::to_string(data.size()));
  auto head = send("file", "HEAD", "/logs/dir/big.bin");
  EXPECT_STATUS(head, 200);
  EXPECT_EQ(head->get_header_value("Content-Length"), std::to_string(data.size()));
  EXPECT_EQ(send("file", "GET", "/logs/dir/big.bin", "", {{"x-ms-range", "bytes=99999999-"}})->status, 416);
  // A plain HTTP Range (what a download URL gets) is answered the same way, once.
  auto plain = send("file", "GET", "/logs/dir/big.bin", "", {{"Range", "bytes=5-9"}});
  EXPECT_STATUS(plain, 206);
  EXPECT_EQ(plain->body, data.substr(5, 5));
  EXPECT_EQ(plain->get_header_value("Content-Range"), "bytes 5-9/" + std::to_string(data.size()));
  EXPECT_EQ(send("file", "GET", "/logs/dir/big.bin", "", {{"Range", "bytes=0-1,4-5"}})->status, 416);
  // A suffix range: the last N bytes (all of them when N is larger), 416 for none.
  const std::string n = std::to_string(data.size());
  auto tail = send("file", "GET", "/logs/dir/big.bin", "", {{"Range", "bytes=-3"}});
  EXPECT_STATUS(tail, 206);
  EXPECT_EQ(tail->body, data.substr(data.size() - 3));
  EXPECT_EQ(tail->get_header_value("Content-Range"), "bytes " + std::to_string(data.size() - 3) + "-" +
                                                         std::to_string(data.size() - 1) + "/" + n);
  auto all = send("file", "GET", "/logs/dir/big.bin", "", {{"x-ms-range", "bytes=-99999999"}});
  EXPECT_STATUS(all, 206);
  EXPECT_TRUE(all->body == data);
  EXPECT_EQ(send("file", "GET", "/logs/dir/big.bin", "", {{"Range", "bytes=-0"}})->status, 416);
  auto list = send("file", "GET", "/logs/dir?restype=directory&comp=list");
  EXPECT_STATUS(list, 200);
  EXPECT_NE(list->body.find("<File><Name>big.bin</Name><Properties><Content-Length>" + std::to_string(data.size())),
            std::string::npos)
      << list->body;
  auto root = send("file", "GET", "/logs?restype=directory&comp=list");
  EXPECT_NE(root->body.find("<Directory><Name>dir</Name>"), std::string::npos) << root->body;
  auto shares = send("file", "GET", "/?comp=list");
  EXPECT_NE(shares->body.find("<Share><Name>logs</Name>"), std::string::npos) << shares->body;
  // The control plane sees the same bytes (the share is the folder jobs mount).
  auto cli_list = cli({"storage", "file", "list", "--account-name", kAccount, "-s", "logs", "-p", "dir", "--query",
                       "[0].properties.contentLength", "-o", "tsv"});
  EXPECT_EQ(cli_list.second, std::to_string(data.size()) + "\n");
  EXPECT_STATUS(send("file", "DELETE", "/logs/dir/big.bin"), 202);
  auto gone = send("file", "GET", "/logs/dir/big.bin");
  EXPECT_STATUS(gone, 404);
  EXPECT_EQ(error_code(gone), "ResourceNotFound");
  EXPECT_NE(gone->body.find("<Error><Code>ResourceNotFound</Code>"), std::string::npos);
  EXPECT_STATUS(send("file", "DELETE", "/logs/dir?restype=directory"), 202);
  EXPECT_STATUS(send("file", "DELETE", "/logs?restype=share"), 202);
  EXPECT_EQ(error_code(send("file", "GET", "/logs?restype=share")), "ShareNotFound");
  EXPECT_EQ(error_code(send("file", "PUT", "/nope/x.txt", "", {{"x-ms-type", "file"}, {"x-ms-content-length", "1"}})),
            "ShareNotFound");
}

TEST_F(StorageServeTest, FileRefusals) {
  EXPECT_STATUS(send("file", "PUT", "/logs?restype=share"), 201);
  EXPECT_STATUS(send("file", "PUT", "/logs/a.txt", "", {{"x-ms-type", "file"}, {"x-ms-content-length", "10"}}), 201);
  // '..' (sent encoded, as a client would have to) is refused by the share's confinement.
  EXPECT_STATUS(send("file", "PUT", "/logs/%2E%2E/x.txt", "", {{"x-ms-type", "file"}, {"x-ms-content-length", "1"}}),
                400);
  EXPECT_STATUS(send("file", "GET", "/logs/dir/%2E%2E/%2E%2E/%2E%2E/state.db"), 400);
  // A declared length over 4 TiB, or not a number.
  EXPECT_STATUS(send("file", "PUT", "/logs/b.txt", "", {{"x-ms-type", "file"}, {"x-ms-content-length", "4398046511105"}}),
                400);
  EXPECT_STATUS(send("file", "PUT", "/logs/b.txt", "", {{"x-ms-type", "file"}, {"x-ms-content-length", "-1"}}), 400);
  // A range past the declared length (10 bytes).
  auto past = send("file", "PUT", "/logs/a.txt?comp=range", std::string(5, 'x'),
                   {{"x-ms-range", "bytes=8-12"}, {"x-ms-write", "update"}});
  EXPECT_STATUS(past, 416);
  EXPECT_EQ(error_code(past), "InvalidRange");
  // A range over 4 MiB, and a body that is not the range's length.
  EXPECT_STATUS(send("file", "PUT", "/logs/a.txt?comp=range", "x",
                     {{"x-ms-range", "bytes=0-4194304"}, {"x-ms-write", "update"}}),
                413);
  EXPECT_STATUS(send("file", "PUT", "/logs/a.txt?comp=range", "xy", {{"x-ms-range", "bytes=0-0"}, {"x-ms-write", "update"}}),
                400);
  EXPECT_STATUS(send("file", "PUT", "/logs/a.txt?comp=range", "x", {{"x-ms-range", "bytes=3-1"}, {"x-ms-write", "update"}}),
                400);
  EXPECT_STATUS(send("file", "PUT", "/logs/a.txt?comp=range", "xy", {{"x-ms-range", "bytes=0-1"}, {"x-ms-write", "update"}}),
                201);
  EXPECT_EQ(send("file", "GET", "/logs/a.txt", "", {{"x-ms-range", "bytes=0-2"}})->body, std::string("xy\0", 3));
}

TEST_F(StorageServeTest, SharedKeyIsVerified) {
  // A forged signature (another key), an unknown account, a stale date, a bearer token, none.
  const std::string forged = b64(std::string(64, 'k'));
  auto r = send("file", "PUT", "/logs?restype=share", "", {}, forged);
  EXPECT_STATUS(r, 403);
  EXPECT_EQ(error_code(r), "AuthenticationFailed");
  EXPECT_EQ(send("file", "GET", "/?comp=list", "", {}, {}, "nosuchacct")->status, 403);
  EXPECT_EQ(send("file", "GET", "/?comp=list", "", {{"x-ms-date", rfc1123(std::time(nullptr) - 3600)}})->status, 403);
  EXPECT_EQ(send("blob", "GET", "/?comp=list", "", {{"Authorization", "Bearer " + token()}})->status, 403);
  EXPECT_EQ(send("blob", "GET", "/?comp=list", "", {{"Authorization", "SharedKey other:abc"}})->status, 403);
  // A signature over another path does not carry over.
  httplib::Headers h{{"x-ms-date", rfc1123(std::time(nullptr))}, {"x-ms-version", "2021-06-08"}};
  EXPECT_EQ(send("file", "GET", "/?comp=list", "",
                 {{"Authorization", "SharedKey store1:" + sign("GET", "/other?comp=list", "", h, key_, kAccount)}})
                ->status,
            403);
  EXPECT_STATUS(send("file", "GET", "/?comp=list"), 200);
  // The second key works as well.
  const std::string key2 = expect("POST", account_url_ + "/listKeys" + kSt, 200)["keys"][1]["value"];
  EXPECT_STATUS(send("file", "GET", "/?comp=list", "", {}, key2), 200);
}

TEST_F(StorageServeTest, BlobContainerAndBlockBlob) {
  EXPECT_STATUS(send("blob", "PUT", "/models?restype=container"), 201);
  EXPECT_EQ(error_code(send("blob", "PUT", "/models?restype=container")), "ContainerAlreadyExists");
  EXPECT_STATUS(send("blob", "HEAD", "/models?restype=container"), 200);
  const std::string body = "weights\n";
  EXPECT_STATUS(send("blob", "PUT", "/models/a/b.h5", body, {{"x-ms-blob-type", "BlockBlob"}}), 201);
  auto exists = send("blob", "PUT", "/models/a/b.h5", body, {{"x-ms-blob-type", "BlockBlob"}, {"If-None-Match", "*"}});
  EXPECT_STATUS(exists, 409);
  EXPECT_EQ(error_code(exists), "BlobAlreadyExists");
  EXPECT_STATUS(send("blob", "PUT", "/models/c.bin", body), 400);  // no blob type
  EXPECT_STATUS(send("blob", "PUT", "/models/%2E%2E/c.bin", body, {{"x-ms-blob-type", "BlockBlob"}}), 400);
  auto got = send("blob", "GET", "/models/a/b.h5");
  EXPECT_STATUS(got, 200);
  EXPECT_EQ(got->body, body);
  EXPECT_EQ(got->get_header_value("x-ms-blob-type"), "BlockBlob");
  auto list = send("blob", "GET", "/models?restype=container&comp=list");
  EXPECT_NE(list->body.find("<Blob><Name>a/b.h5</Name>"), std::string::npos) << list->body;
  EXPECT_NE(list->body.find("<Content-Length>8</Content-Length>"), std::string::npos) << list->body;
  auto containers = send("blob", "GET", "/?comp=list");
  EXPECT_NE(containers->body.find("<Container><Name>models</Name>"), std::string::npos) << containers->body;
  EXPECT_STATUS(send("blob", "DELETE", "/models/a/b.h5"), 202);
  EXPECT_EQ(error_code(send("blob", "GET", "/models/a/b.h5")), "BlobNotFound");
  EXPECT_STATUS(send("blob", "DELETE", "/models?restype=container"), 202);
  EXPECT_EQ(error_code(send("blob", "GET", "/models?restype=container")), "ContainerNotFound");
}

// A Put Blob may carry up to 64 MiB (azure-storage-blob sends blobs that size whole); every
// other request stays at 4 MiB.
TEST_F(StorageServeTest, PutBlobUpTo64MiBOthersAt4MiB) {
  EXPECT_STATUS(send("blob", "PUT", "/data?restype=container"), 201);
  std::string big(6 * 1024 * 1024 + 7, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 2654435761u) >> 13);
  EXPECT_STATUS(send("blob", "PUT", "/data/big.bin", big, {{"x-ms-blob-type", "BlockBlob"}}), 201);
  auto got = send("blob", "GET", "/data/big.bin");
  EXPECT_STATUS(got, 200);
  EXPECT_TRUE(got->body == big) << got->body.size();
  // Signed with a wrong key: 403, nothing stored.
  auto forged = send("blob", "PUT", "/data/forged.bin", big, {{"x-ms-blob-type", "BlockBlob"}},
                     std::string("d3Jvbmcga2V5IHdyb25nIGtleQ=="));
  EXPECT_STATUS(forged, 403);
  EXPECT_EQ(error_code(send("blob", "GET", "/data/forged.bin")), "BlobNotFound");
  // The same size as a Put Range, a file share request or an ARM request: refused.
  EXPECT_STATUS(send("file", "PUT", "/logs?restype=share", big), 413);
  auto arm = client()->Put("/subscriptions", auth(), big, "application/json");
  ASSERT_TRUE(arm);
  EXPECT_EQ(arm->status, 413);
  EXPECT_NE(arm->body.find("RequestEntityTooLarge"), std::string::npos) << arm->body;
  // Without a token the body is not even read: 401.
  auto anonymous = client()->Put("/subscriptions", big, "application/json");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
}

// A Put Blob sent chunked, as a streaming client sends it: counted while it is read (spooled to
// disk, hashed on the way), stored whole under the bound, refused with 413 past it, nothing
// stored then.
TEST_F(StorageServeTest, ChunkedPutBlobIsBoundedAndStreamed) {
  std::signal(SIGPIPE, SIG_IGN);
  EXPECT_STATUS(send("blob", "PUT", "/data?restype=container"), 201);
  const auto put_chunked = [&](const std::string& target, std::size_t total) {
    httplib::Headers h{{"x-ms-date", rfc1123(std::time(nullptr))}, {"x-ms-version", "2021-06-08"},
                       {"x-ms-blob-type", "BlockBlob"}};
    const std::string signature = sign("PUT", target, "", h, key_, kAccount);
    RawTls raw(server_->port());
    std::string head = "PUT " + target + " HTTP/1.1\r\nHost: " + std::string(kAccount) + ".blob.core.localhost:" +
                       std::to_string(server_->port()) + "\r\nContent-Type: application/octet-stream\r\n" +
                       "Transfer-Encoding: chunked\r\nAuthorization: SharedKey " + kAccount + ":" + signature + "\r\n";
    for (const auto& [name, value] : h) head += name + ": " + value + "\r\n";
    if (!raw.connected() || !raw.send(head + "\r\n")) return std::string();
    std::string piece(1 << 20, '\0');
    for (std::size_t sent = 0; sent < total && !raw.readable(0); sent += piece.size()) {
      for (std::size_t i = 0; i < piece.size(); ++i) piece[i] = static_cast<char>((sent + i) * 31 >> 7);
      char size[16];
      std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
      if (!raw.send(size + piece + "\r\n")) break;
    }
    raw.send("0\r\n\r\n");
    return raw.receive_answer();
  };
  const std::string stored = put_chunked("/data/streamed.bin", 5u << 20);
  EXPECT_EQ(status_of(stored), 201) << stored.substr(0, 400);
  auto got = send("blob", "GET", "/data/streamed.bin");
  EXPECT_STATUS(got, 200);
  ASSERT_EQ(got->body.size(), 5u << 20);
  bool same = true;
  for (std::size_t i = 0; i < got->body.size(); ++i) same = same && got->body[i] == static_cast<char>(i * 31 >> 7);
  EXPECT_TRUE(same);
  unsigned char md5[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(got->body.data(), got->body.size(), md5, &len, EVP_md5(), nullptr);
  EXPECT_NE(stored.find("Content-MD5: " + b64(std::string(reinterpret_cast<char*>(md5), len))), std::string::npos);

  const std::string refused = put_chunked("/data/huge.bin", 80u << 20);
  EXPECT_EQ(status_of(refused), 413) << refused.substr(0, 400);
  EXPECT_NE(refused.find("RequestBodyTooLarge"), std::string::npos);
  EXPECT_EQ(error_code(send("blob", "GET", "/data/huge.bin")), "BlobNotFound");
  // Nothing of it is left behind where uploads are spooled.
  EXPECT_TRUE(std::filesystem::is_empty(home_ / "serve" / "uploads"));
}

// F414 (issue 53): a Put Blob on a full disk is answered 507 InsufficientStorage in Storage's
// error XML, not dropped (the SDK would retry a reset). The spool is a 1 MiB tmpfs mounted for
// this test in a mount namespace of its own; skipped where mounting is not permitted.
TEST_F(StorageServeTest, PutBlobOnAFullDiskIsAnsweredNotDropped) {
  std::signal(SIGPIPE, SIG_IGN);
  EXPECT_STATUS(send("blob", "PUT", "/data?restype=container"), 201);
  stop_server();  // its threads start again inside the new mount namespace
  const std::filesystem::path uploads = home_ / "serve" / "uploads";
  if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", uploads.c_str(), "tmpfs", 0, "size=1m,mode=0700") != 0)
    GTEST_SKIP() << "cannot mount a small file system here (" << std::strerror(errno)
                 << "): run as root (CAP_SYS_ADMIN) to test a full disk";
  start_server();
  auto full = send("blob", "PUT", "/data/full.bin", std::string(3u << 20, 'x'), {{"x-ms-blob-type", "BlockBlob"}});
  ASSERT_TRUE(full) << "the connection was dropped: " << httplib::to_string(full.error());
  EXPECT_EQ(full->status, 507) << full->body;
  EXPECT_EQ(error_code(full), "InsufficientStorage");
  EXPECT_NE(full->body.find("<Code>InsufficientStorage</Code>"), std::string::npos) << full->body;
  EXPECT_EQ(error_code(send("blob", "GET", "/data/full.bin")), "BlobNotFound");
  // The failed spool is gone with its connection: a blob that fits is stored as before.
  EXPECT_STATUS(send("blob", "PUT", "/data/small.bin", std::string(256u << 10, 'y'), {{"x-ms-blob-type", "BlockBlob"}}),
                201);
  stop_server();
  ::umount2(uploads.c_str(), MNT_DETACH);
}

}  // namespace
}  // namespace batchai::serve
