// Podman commands with a bound and captured output (podman.hpp).
#include "batchai/runtime/podman.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>

#include "batchai/common/errors.hpp"
#include "batchai/runtime/supervisor.hpp"

namespace fs = std::filesystem;

namespace batchai::runtime {
namespace {

constexpr std::size_t kMaxOutput = 64 * 1024;

std::string read_capped(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string s(kMaxOutput, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<std::size_t>(in.gcount()));
  return s;
}

// A private folder for one command's output, removed with it.
class OutputDir {
 public:
  OutputDir() {
    std::string base = (fs::temp_directory_path() / "batchai-podman-XXXXXX").string();
    if (::mkdtemp(base.data()) == nullptr) throw SystemError("cannot make a folder for podman's output in " + fs::temp_directory_path().string());
    path_ = base;
  }
  ~OutputDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

std::string podman_program() {
  const char* p = std::getenv("BATCHAI_PODMAN");
  return p != nullptr && *p != '\0' ? p : "podman";
}

bool podman_available() { return program_available(podman_program(), node_base_environment()); }

void require_podman(const std::string& what) {
  if (podman_available()) return;
  throw InvalidArgument(what + ", but Podman ('" + podman_program() +
                            "') is not installed on the node: install the podman package (Debian: apt-get install "
                            "podman runc uidmap), or remove containerSettings to run the job on the host.",
                        "ContainerRuntimeMissing");
}

std::vector<std::string> podman_base() {
  std::vector<std::string> argv = {podman_program()};
  if (program_available("runc", node_base_environment())) argv.insert(argv.end(), {"--runtime", "runc"});
  return argv;
}

PodmanResult run_podman(ProcessLauncher& launcher, const std::vector<std::string>& args,
                        std::chrono::milliseconds timeout, const std::map<std::string, std::string>& env,
                        const std::function<bool()>& cancelled) {
  return run_podman_on(launcher, PodmanRoute{{}, env}, args, timeout, cancelled);
}

namespace {

// One command started with its output going to a private folder.
struct Started {
  OutputDir dir;
  pid_t pid = -1;
};

void start(ProcessLauncher& launcher, const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
           Started& s) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.clear_env = true;
  spec.env = node_base_environment();
  for (const auto& [name, value] : env) spec.env[name] = value;
  spec.stdout_file = s.dir.path() / "out";
  spec.stderr_file = s.dir.path() / "err";
  s.pid = launcher.spawn(spec);
}

PodmanResult finish(ProcessLauncher& launcher, Started& s, std::optional<ProcessExit> exit) {
  PodmanResult result;
  if (!exit) {
    launcher.signal_group(s.pid, SIGKILL);
    exit = launcher.wait(s.pid, std::nullopt);
    result.timed_out = true;
  }
  result.exit_code = exit->exit_code;
  result.out = read_capped(s.dir.path() / "out");
  result.err = read_capped(s.dir.path() / "err");
  return result;
}

}  // namespace

PodmanResult run_captured(ProcessLauncher& launcher, const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout, const std::map<std::string, std::string>& env,
                          const std::function<bool()>& cancelled) {
  Started s;
  start(launcher, argv, env, s);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  constexpr auto kSlice = std::chrono::milliseconds(100);
  std::optional<ProcessExit> exit;
  bool stopped = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    exit = launcher.wait(s.pid, cancelled ? std::min(left, std::chrono::milliseconds(kSlice)) : left);
    if (exit) break;
    if (cancelled && cancelled()) {
      stopped = true;
      break;
    }
  }
  PodmanResult result = finish(launcher, s, exit);
  if (stopped) result.timed_out = false, result.cancelled = true;
  return result;
}

PodmanResult run_podman_on(ProcessLauncher& launcher, const PodmanRoute& route, const std::vector<std::string>& args,
                           std::chrono::milliseconds timeout, const std::function<bool()>& cancelled) {
  std::vector<std::string> argv = route.prefix;
  for (auto& a : podman_base()) argv.push_back(std::move(a));
  argv.insert(argv.end(), args.begin(), args.end());
  return run_captured(launcher, argv, timeout, route.env, cancelled);
}

std::vector<PodmanResult> run_podman_all(ProcessLauncher& launcher,
                                         const std::vector<std::pair<PodmanRoute, std::vector<std::string>>>& commands,
                                         std::chrono::milliseconds timeout) {
  std::vector<Started> started(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    std::vector<std::string> argv = commands[i].first.prefix;
    for (auto& a : podman_base()) argv.push_back(std::move(a));
    argv.insert(argv.end(), commands[i].second.begin(), commands[i].second.end());
    start(launcher, argv, commands[i].first.env, started[i]);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<PodmanResult> results;
  for (auto& s : started) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    results.push_back(finish(launcher, s, launcher.wait(s.pid, std::max(left, std::chrono::milliseconds(0)))));
  }
  return results;
}

}  // namespace batchai::runtime
