// The fixture the serve tests share: an in-process server on a free port with a temporary
// BATCHAI_HOME, driven with httplib::SSLClient trusting the certificate it made, and the
// executable (BATCHAI_EXE) on the same store; plus `batchai serve --port 0` as a child process.
#pragma once
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "batchai/common/json_util.hpp"
#include "batchai/common/process.hpp"
#include "batchai/serve/server.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace batchai::serve {

inline constexpr const char* kRg = "?api-version=2021-04-01";
inline constexpr const char* kAi = "?api-version=2018-05-01";

// Job supervisors are `<self> _supervise ...`: in a test process <self> is the test binary, so
// the launcher starts the real executable in its place.
class ExeLauncher : public ProcessLauncher {
 public:
  ExeLauncher();
  pid_t spawn(const ProcessSpec& spec) override;
  std::optional<ProcessExit> wait(pid_t pid, std::optional<std::chrono::milliseconds> timeout) override;
  bool signal_group(pid_t pgid, int signal) override;
  pid_t spawn_detached(const ProcessSpec& spec) override;

 private:
  ProcessSpec fix(ProcessSpec spec) const;
  std::unique_ptr<ProcessLauncher> inner_;
  std::string self_;
};

using test::make_temp_dir;
using test::read_file;

class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Starts the server; `adjust` may change the configuration first (timeouts, ...).
  void start_server(const std::function<void(ServerConfig&)>& adjust = {});
  void stop_server();

  std::unique_ptr<httplib::SSLClient> client();
  std::string token();
  httplib::Headers auth();
  httplib::Result call(const std::string& method, const std::string& path, const std::string& body = "");
  // Calls and expects `status`; returns the body as JSON (null when empty).
  Json expect(const std::string& method, const std::string& path, int status, const std::string& body = "");
  // The async operation of a 202: polled (as azure-core does) until it reports Succeeded.
  void follow(const httplib::Result& r);

  std::string sub() const;
  std::string rg(const std::string& name) const;
  std::string ws(const std::string& group, const std::string& name) const;

  // Runs the executable on the same home; returns exit code and stdout.
  std::pair<int, std::string> cli(std::vector<std::string> args);

  std::filesystem::path home_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::string token_;
};

// `batchai serve --port 0` on `home`, as users run it: started, its printed lines read, the port
// parsed. ok() is false (and why() says why) when it printed no port within 10 s.
class ServeChild {
 public:
  explicit ServeChild(const std::filesystem::path& home);
  ~ServeChild();  // SIGKILL if still running
  ServeChild(const ServeChild&) = delete;
  ServeChild& operator=(const ServeChild&) = delete;

  bool ok() const { return port_ > 0; }
  std::string why() const;
  int port() const { return port_; }
  const std::string& out() const { return out_; }
  // Sends `signal` to the server's process group and waits up to `timeout` for its exit.
  std::optional<ProcessExit> stop(int signal, std::chrono::milliseconds timeout);

 private:
  std::filesystem::path home_;
  std::unique_ptr<ProcessLauncher> launcher_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int port_ = 0;
  std::string out_;
};

// True when this batchai has the serve command (its plugin built).
bool exe_has_serve_command(const std::filesystem::path& scratch);

}  // namespace batchai::serve
