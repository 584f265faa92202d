// The sweep's sandbox: folders, the bounded runner, the decoy digest and the /proc scan.
#include "sandbox.hpp"

#include "support/files.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace batchai::sweep {
namespace fs = std::filesystem;

namespace {

using test::read_file;

// FNV-1a, enough to notice any change in the decoy.
void mix(std::uint64_t& h, const std::string& bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  h ^= 0xff;
  h *= 1099511628211ULL;
}

}  // namespace

Sandbox::Sandbox() {
  home_ = root_ / "home";
  decoy_ = root_ / "decoy";
  inputs_ = root_ / "inputs";
  for (const auto& d : {home_, decoy_ / "sub", inputs_, root_ / "user"}) fs::create_directories(d);
  fs::permissions(home_, fs::perms::owner_all);  // as batchai makes it: a home others read is warned about
  // 4242 bytes: a listing that reports this size reports the decoy's file.
  std::string secret(kSecret);
  secret += std::string(4242 - secret.size(), 'x');
  for (const auto& f : {decoy_ / "secret.txt", decoy_ / "sub" / "b.txt", decoy_ / "passwd"}) std::ofstream(f) << secret;
  fs::create_symlink("secret.txt", decoy_ / "link.txt");
}

fs::path Sandbox::write_input(const std::string& name, const std::string& content) const {
  return test::write_file(inputs_ / name, content);
}

Outcome Sandbox::run(const std::vector<std::string>& args, std::chrono::seconds limit,
                     const std::map<std::string, std::string>& extra) const {
  std::map<std::string, std::string> env = {{"BATCHAI_HOME", home_.string()},
                                            {"BATCHAI_SIM_DELAY_S", "0"},
                                            {"HOME", (root_ / "user").string()},
                                            {"USER", "tester"}};
  if (const char* path = std::getenv("PATH")) env["PATH"] = path;
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> env_text;
  for (const auto& [k, v] : env) env_text.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  // BATCHAI_SWEEP_EXE runs the sweep against another build (e.g. an older one, to see what it catches).
  const char* other = std::getenv("BATCHAI_SWEEP_EXE");
  std::string exe = other != nullptr ? other : BATCHAI_EXE;
  std::vector<std::string> argv_text = args;
  std::vector<char*> argv = {exe.data()};
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::chdir(root_.c_str());
    ::execve(exe.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  Outcome result;
  std::array<pollfd, 2> fds{{{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}}};
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int open_fds = 2;
  char buffer[65536];
  constexpr std::size_t kKeep = 1 << 20;  // enough to judge an answer; a flood is not stored
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left.count(), 200)));
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      std::string& sink = i == 0 ? result.out : result.err;
      if (sink.size() < kKeep) sink.append(buffer, static_cast<std::size_t>(n));
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  int status = 0;
  if (!result.timed_out) {
    // Output closed: the process is ending; give it the rest of the limit.
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        result.timed_out = true;
        ::kill(-pid, SIGKILL);
        break;
      }
      ::usleep(2000);
    }
  }
  if (result.timed_out) ::waitpid(pid, &status, 0);
  result.code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  return result;
}

std::uint64_t Sandbox::decoy_digest() const {
  std::uint64_t h = 1469598103934665603ULL;
  std::vector<fs::path> paths;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(decoy_, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    paths.push_back(it->path());
  std::sort(paths.begin(), paths.end());
  mix(h, std::to_string(paths.size()));
  for (const auto& p : paths) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) continue;
    mix(h, p.lexically_relative(decoy_).string());
    mix(h, std::to_string(st.st_mode) + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) +
               "." + std::to_string(st.st_mtim.tv_nsec));
    if (S_ISLNK(st.st_mode)) mix(h, fs::read_symlink(p, ec).string());
    if (S_ISREG(st.st_mode)) mix(h, read_file(p));
  }
  struct stat top {};
  if (::lstat(decoy_.c_str(), &top) == 0) mix(h, std::to_string(top.st_mode));
  return h;
}

std::vector<int> Sandbox::leftover_processes() const {
  std::vector<int> found;
  const std::string needle = root_.string();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::stoi(name);
    if (pid == ::getpid()) continue;
    std::string text = read_file(e.path() / "cmdline") + read_file(e.path() / "environ");
    if (text.find(needle) == std::string::npos) continue;
    std::string stat = read_file(e.path() / "stat");
    auto paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z') continue;
    found.push_back(pid);
  }
  return found;
}

}  // namespace batchai::sweep
