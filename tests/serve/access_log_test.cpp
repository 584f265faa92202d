// The server's access log (access_log.hpp, docs/serve.md "Access log"): one line per answer with
// the server's own time on it; no query, no link signature, no forged line; bounded by rotation.
#include "http/access_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "batchai/common/errors.hpp"
#include "serve_fixture.hpp"
#include "support/temp_dir.hpp"

namespace batchai::serve {
namespace {

namespace fs = std::filesystem;
using std::chrono::microseconds;

std::vector<std::string> lines_of(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(AccessLogFormat, OneLineWithEveryHostileByteEscaped) {
  const auto at = std::chrono::system_clock::time_point{} + std::chrono::seconds(1790000000);
  static const char hostile[] = "/a b\n1970 x GET / 200\\\x01\xff";
  const std::string line =
      AccessLog::format({"127.0.0.1", "GET", std::string_view(hostile, sizeof hostile - 1), 404, 17, microseconds(2500)}, at);
  EXPECT_EQ(line, "2026-09-21T14:13:20.000Z 127.0.0.1 GET /a\\x20b\\x0a1970\\x20x\\x20GET\\x20/\\x20200\\x5c\\x01\\xff "
                  "404 17 2.500ms");
  EXPECT_EQ(AccessLog::format({"::1", "", "", 431, 0, microseconds(10), false}, at),
            "2026-09-21T14:13:20.000Z ::1 - - 431 0 0.010ms incomplete");
  // A file link works for whoever holds it: its signed part is not written down.
  const std::string secret[] = {"/batchai-files/"};
  const std::string link =
      AccessLog::format({"h", "GET", "/batchai-files/eyJqb2IiOi.SIGNATURE", 200, 1, {}}, at, secret);
  EXPECT_EQ(link.find("SIGNATURE"), std::string::npos);
  EXPECT_NE(link.find("/batchai-files/(signed link)"), std::string::npos);
  const std::string long_path = "/" + std::string(5000, 'p');
  EXPECT_LT(AccessLog::format({"h", "GET", long_path, 414, 0, {}}, at).size(), 700u);
}

TEST(AccessLogFile, RotatesPastItsBoundKeepingOneOldFile) {
  const test::TempDir tmp("batchai-access-log");
  const fs::path& dir = tmp.path();
  const fs::path path = dir / "access.log";
  {
    AccessLog log(path, 1000);
    for (int i = 0; i < 100; ++i) log.record({"127.0.0.1", "GET", "/line/" + std::to_string(i), 200, 1, {}});
  }
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_LE(fs::file_size(path), 1000u);
  EXPECT_LE(fs::file_size(dir / "access.log.1"), 1000u);
  EXPECT_FALSE(fs::exists(dir / "access.log.2"));
  const auto lines = lines_of(path);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("/line/99 "), std::string::npos);  // the newest kept
}

TEST(AccessLogFile, ALinkInItsPlaceIsNotFollowed) {
  const test::TempDir tmp("batchai-access-log");
  const fs::path& dir = tmp.path();
  fs::create_symlink(dir / "elsewhere", dir / "access.log");
  EXPECT_THROW(AccessLog(dir / "access.log", 1000), batchai::Error);
  EXPECT_FALSE(fs::exists(dir / "elsewhere"));
}

TEST(AccessLogFile, AFifoWithoutAReaderIsRefusedAtOnce) {
  const test::TempDir tmp("batchai-access-log");
  const fs::path& dir = tmp.path();
  const fs::path fifo = dir / "access.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(AccessLog(fifo, 1 << 20), batchai::Error);  // a blocking open would wait forever
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

// The slow peer of the log is its file: a FIFO whose reader takes nothing stands for a stalled
// disk or a hung mount. record() must not wait for it, the queue must stay bounded, shutting
// the log down must not hang, and the lines lost are counted in the file once it moves again.
TEST(AccessLogFile, AStalledFileNeverHoldsUpTheCaller) {
  const test::TempDir tmp("batchai-access-log");
  const fs::path& dir = tmp.path();
  const fs::path fifo = dir / "access.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  std::string seen;
  auto drain = [&] {
    char buf[65536];
    for (ssize_t n; (n = ::read(reader, buf, sizeof buf)) > 0;) seen.append(buf, static_cast<std::size_t>(n));
  };
  auto log = std::make_unique<AccessLog>(fifo, std::uint64_t{1} << 30, 16 * 1024);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20000; ++i) log->record({"127.0.0.1", "GET", "/stalled/" + std::to_string(i), 200, 1, {}});
  // ~1.2 MB against a 64 KiB pipe and a 16 KiB queue: most lines cannot go anywhere.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_GT(log->dropped(), 10000u);
  // The file moves again: the writer reports what it lost before the next lines.
  for (int i = 0; i < 300 && seen.find("lines dropped") == std::string::npos; ++i) {
    drain();
    if (i == 10) log->record({"127.0.0.1", "GET", "/after", 200, 1, {}});
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(seen.find("lines dropped: the log could not keep up"), std::string::npos);
  // Stalled again, with lines queued, when the log is shut down: it waits its bound, no more.
  for (int round = 0; round < 100; ++round) {  // offered in steps, so the writer fills the pipe
    for (int i = 0; i < 300; ++i) log->record({"127.0.0.1", "GET", "/at-exit/" + std::to_string(i), 200, 1, {}});
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto t1 = std::chrono::steady_clock::now();
  log.reset();
  const auto took = std::chrono::steady_clock::now() - t1;
  EXPECT_GE(took, AccessLog::kDrainWait - std::chrono::milliseconds(100)) << "the file was not stalled";
  EXPECT_LT(took, AccessLog::kDrainWait + std::chrono::seconds(1));
  ::close(reader);  // the writer left behind now fails with EPIPE and ends (SIGPIPE is blocked there)
}

TEST_F(ServeTest, EveryAnswerIsInTheAccessLogWithTheServersTime) {
  stop_server();
  const fs::path log = home_ / "access.log";
  start_server([&](ServerConfig& c) { c.access_log = log; });
  expect("GET", sub() + "/resourcegroups?api-version=2021-04-01&secretish=QUERYVALUE", 200);
  auto c = client();
  auto refused = c->Get(sub() + "/resourcegroups?api-version=2021-04-01");  // no bearer token
  ASSERT_TRUE(refused);
  ASSERT_EQ(refused->status, 401);
  // A file link's signed part works for whoever holds it: the server names its prefix to the log.
  auto link = c->Get("/batchai-files/eyJqb2IiOi.LINKSIGNATURE");
  ASSERT_TRUE(link);
  std::vector<std::string> lines;
  for (int i = 0; i < 100; ++i) {  // the line follows the answer's last byte
    lines = lines_of(log);
    if (lines.size() >= 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(lines.size(), 4u);  // the token, the list, the refusal, the link
  const std::string path = sub() + "/resourcegroups";
  int ok = 0, unauthorized = 0, links = 0;
  for (const auto& line : lines) {
    EXPECT_EQ(line.find("QUERYVALUE"), std::string::npos) << line;
    EXPECT_EQ(line.find("LINKSIGNATURE"), std::string::npos) << line;
    if (line.find(" GET /batchai-files/(signed link) ") != std::string::npos) {
      ++links;
      continue;
    }
    EXPECT_EQ(line.find("api-version"), std::string::npos) << line;
    std::istringstream in(line);
    std::string when, peer, method, logged_path, took;
    int status = 0;
    unsigned long long bytes = 0;
    ASSERT_TRUE(in >> when >> peer >> method >> logged_path >> status >> bytes >> took) << line;
    EXPECT_EQ(peer, "127.0.0.1");
    ASSERT_GT(took.size(), 2u);
    EXPECT_EQ(took.substr(took.size() - 2), "ms");
    EXPECT_GE(std::stod(took), 0.0);
    if (logged_path == path && status == 200 && bytes > 0) ++ok;
    if (logged_path == path && status == 401) ++unauthorized;
  }
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(unauthorized, 1);
  EXPECT_EQ(links, 1);
}

}  // namespace
}  // namespace batchai::serve
