// Podman commands with a bound and captured output (podman.hpp).
#include "batchai/runtime/podman.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

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
                        std::chrono::milliseconds timeout, const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv = podman_base();
  argv.insert(argv.end(), args.begin(), args.end());
  return run_captured(launcher, argv, timeout, env);
}

PodmanResult run_captured(ProcessLauncher& launcher, const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout, const std::map<std::string, std::string>& env) {
  OutputDir dir;
  ProcessSpec spec;
  spec.argv = argv;
  spec.clear_env = true;
  spec.env = node_base_environment();
  for (const auto& [name, value] : env) spec.env[name] = value;
  spec.stdout_file = dir.path() / "out";
  spec.stderr_file = dir.path() / "err";
  PodmanResult result;
  const pid_t pid = launcher.spawn(spec);
  auto exit = launcher.wait(pid, timeout);
  if (!exit) {
    launcher.signal_group(pid, SIGKILL);
    exit = launcher.wait(pid, std::nullopt);
    result.timed_out = true;
  }
  result.exit_code = exit->exit_code;
  result.out = read_capped(dir.path() / "out");
  result.err = read_capped(dir.path() / "err");
  return result;
}

}  // namespace batchai::runtime
