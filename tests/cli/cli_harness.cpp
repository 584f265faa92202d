// fork/exec of the batchai executable with captured output.
#include "cli_harness.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <stdexcept>

#include <gtest/gtest.h>

#include "support/files.hpp"

namespace batchai::cli::testing {
namespace fs = std::filesystem;

nlohmann::json CliResult::json() const {
  try {
    return nlohmann::json::parse(out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "stdout is not JSON: " << e.what() << "\nstdout:\n" << out << "\nstderr:\n" << err;
    return nullptr;
  }
}

CliHarness::CliHarness() {
  fs::create_directories(home_);
  fs::permissions(home_, fs::perms::owner_all);  // as batchai makes it: a home others read is warned about
  fs::create_directories(dir_ / "user");
}

fs::path CliHarness::write_file(const std::string& name, const std::string& content) const {
  return test::write_file(dir_ / name, content);
}

std::vector<std::string> CliHarness::environment(const std::map<std::string, std::string>& extra) const {
  std::map<std::string, std::string> env;
  for (const char* keep : {"PATH", "LANG", "TMPDIR"}) {
    if (const char* v = std::getenv(keep)) env[keep] = v;
  }
  env["BATCHAI_HOME"] = home_.string();
  env["BATCHAI_SIM_DELAY_S"] = "0";
  env["HOME"] = (dir_ / "user").string();  // keeps ~/.ssh lookups inside the test folder
  env["USER"] = "tester";
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

namespace {

[[noreturn]] void exec_child(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<char*> argv;
  std::string exe = BATCHAI_EXE;
  argv.push_back(exe.data());
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  execve(exe.c_str(), argv.data(), envp.data());
  _exit(127);
}

}  // namespace

CliResult CliHarness::run(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) const {
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  auto envv = environment(env);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    exec_child(args, envv);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  CliResult result;
  std::array<pollfd, 2> fds{{{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}}};
  int open_fds = 2;
  char buffer[65536];
  while (open_fds > 0) {
    poll(fds.data(), fds.size(), -1);
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? result.out : result.err).append(buffer, static_cast<std::size_t>(n));
      }
    }
  }
  result.exit_code = wait(pid);
  return result;
}

CliResult CliHarness::run_in_pty(const std::vector<std::string>& args, const std::string& input) const {
  std::string command = "'" + std::string(BATCHAI_EXE) + "'";
  for (const auto& a : args) {
    std::string quoted;
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    command += " '" + quoted + "'";
  }
  int in_pipe[2], out_pipe[2];
  if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0) throw std::runtime_error("pipe failed");
  auto envv = environment({});
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(out_pipe[1], 2);
    close(in_pipe[1]);
    close(out_pipe[0]);
    std::vector<char*> envp;
    for (const auto& e : envv) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    const char* argv[] = {"script", "-qec", command.c_str(), "/dev/null", nullptr};
    execve("/usr/bin/script", const_cast<char**>(argv), envp.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  if (write(in_pipe[1], input.data(), input.size()) < 0) {
    // the child may already have exited; its output tells why
  }
  close(in_pipe[1]);
  CliResult result;
  char buffer[4096];
  for (ssize_t n; (n = read(out_pipe[0], buffer, sizeof buffer)) > 0;) result.out.append(buffer, static_cast<std::size_t>(n));
  close(out_pipe[0]);
  result.exit_code = wait(pid);
  return result;
}

pid_t CliHarness::spawn(const std::vector<std::string>& args) const {
  auto envv = environment({});
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
    exec_child(args, envv);
  }
  return pid;
}

int CliHarness::wait(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

nlohmann::json normalise(nlohmann::json doc) {
  static const std::regex kUuid("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  if (doc.is_object()) {
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      const std::string& key = it.key();
      bool is_time = key.size() >= 4 && (key.ends_with("Time") || key.ends_with("time"));
      if (is_time && it->is_string()) {
        *it = "<time>";
      } else {
        *it = normalise(*it);
      }
    }
  } else if (doc.is_array()) {
    for (auto& item : doc) item = normalise(item);
  } else if (doc.is_string()) {
    doc = std::regex_replace(doc.get<std::string>(), kUuid, "<uuid>");
  }
  return doc;
}

}  // namespace batchai::cli::testing
