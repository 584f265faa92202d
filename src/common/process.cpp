// POSIX implementation of ProcessLauncher: fork/exec with setsid, redirection, env merge (or a
// clean environment), cgroup joining, timed waits, process-group signals, double-fork detaching.
#include "batchai/common/process.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/errors.hpp"
#include "vfork_clone.hpp"

extern char** environ;

namespace batchai {
namespace {

// Everything the child needs, prepared before fork() so the child only calls
// async-signal-safe functions.
struct PreparedExec {
  std::vector<std::string> argv_storage;
  std::vector<std::string> env_storage;
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::string program;  // resolved path, or empty when not found
  std::string cwd;
  std::string stdout_path;
  std::string stderr_path;
  std::string cgroup_dir;    // the cgroup folder, or empty
  std::string cgroup_procs;  // <cgroup>/cgroup.procs, or empty
  bool has_stdout = false;
  bool has_stderr = false;
  bool same_file = false;
  int open_flags = 0;
  bool stdin_null = true;
  bool new_session = true;
};

std::string lookup_env(const std::vector<std::string>& env, const std::string& key) {
  const std::string prefix = key + "=";
  for (const auto& entry : env) {
    if (entry.compare(0, prefix.size(), prefix) == 0) return entry.substr(prefix.size());
  }
  return {};
}

// PATH lookup as execvp does it, but done in the parent with the child's PATH.
std::string resolve_program(const std::string& name, const std::vector<std::string>& env,
                            const std::filesystem::path& cwd) {
  if (name.find('/') != std::string::npos) {
    std::filesystem::path p(name);
    if (p.is_relative() && !cwd.empty()) p = cwd / p;
    return p.string();
  }
  std::string path = lookup_env(env, "PATH");
  if (path.empty()) path = "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) {
      return candidate.string();
    }
    start = end + 1;
  }
  return {};
}

PreparedExec prepare(const ProcessSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    throw InvalidArgument("cannot start a process with an empty command line; give at least argv[0]");
  }
  PreparedExec p;
  p.argv_storage = spec.argv;
  std::map<std::string, std::string> merged;
  for (char** e = environ; !spec.clear_env && e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    merged[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& key : spec.unset_env) merged.erase(key);
  for (const auto& [key, value] : spec.env) merged[key] = value;
  for (const auto& [key, value] : merged) p.env_storage.push_back(key + "=" + value);
  for (auto& s : p.argv_storage) p.argv.push_back(s.data());
  p.argv.push_back(nullptr);
  for (auto& s : p.env_storage) p.envp.push_back(s.data());
  p.envp.push_back(nullptr);
  p.program = resolve_program(spec.argv[0], p.env_storage, spec.cwd);
  p.cwd = spec.cwd.string();
  if (spec.stdout_file) {
    p.has_stdout = true;
    p.stdout_path = spec.stdout_file->string();
  }
  if (spec.stderr_file) {
    p.has_stderr = true;
    p.stderr_path = spec.stderr_file->string();
  }
  if (!spec.cgroup.empty()) {
    p.cgroup_dir = spec.cgroup.string();
    p.cgroup_procs = (spec.cgroup / "cgroup.procs").string();
  }
  p.same_file = p.has_stdout && p.has_stderr && p.stdout_path == p.stderr_path;
  p.open_flags = O_WRONLY | O_CREAT | O_CLOEXEC | (spec.append ? O_APPEND : O_TRUNC);
  p.stdin_null = spec.stdin_null;
  p.new_session = spec.new_session;
  return p;
}

// Writes a short message to fd 2 (after redirection, so it lands in the stderr file).
void child_say(const char* a, const char* b) {
  auto put = [](const char* s) {
    if (s != nullptr) {
      ssize_t ignored = ::write(2, s, std::strlen(s));
      (void)ignored;
    }
  };
  put("batchai: ");
  put(a);
  put(b);
  put("\n");
}

// Runs in the forked child; never returns. Exit 127 = not found, 126 = cannot execute.
// Only system calls: it may share the parent's memory (vfork_clone). `born_in_cgroup`: started
// inside p's cgroup already, so it need not move itself there.
[[noreturn]] void exec_child(const PreparedExec& p, bool born_in_cgroup) {
  // Default signal dispositions, then the mask, for the new program.
  reset_signal_handlers();
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (p.new_session) ::setsid();
  if (p.stdin_null) {
    int fd = ::open("/dev/null", O_RDONLY);
    if (fd >= 0) {
      ::dup2(fd, 0);
      if (fd != 0) ::close(fd);
    }
  }
  if (p.has_stdout) {
    int fd = ::open(p.stdout_path.c_str(), p.open_flags, 0644);
    if (fd < 0) {
      child_say("cannot open stdout file ", p.stdout_path.c_str());
      ::_exit(126);
    }
    ::dup2(fd, 1);
    if (p.same_file) ::dup2(fd, 2);
    ::close(fd);
  }
  if (p.has_stderr && !p.same_file) {
    int fd = ::open(p.stderr_path.c_str(), p.open_flags, 0644);
    if (fd < 0) {
      child_say("cannot open stderr file ", p.stderr_path.c_str());
      ::_exit(126);
    }
    ::dup2(fd, 2);
    ::close(fd);
  }
  // Joined before exec, so nothing the program starts can be outside the group.
  if (!p.cgroup_procs.empty() && !born_in_cgroup) {
    int fd = ::open(p.cgroup_procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0", 1) != 1) {
      child_say("cannot join the job's cgroup: ", p.cgroup_procs.c_str());
      ::_exit(126);
    }
    ::close(fd);
  }
  if (!p.cwd.empty() && ::chdir(p.cwd.c_str()) != 0) {
    child_say("cannot change directory to ", p.cwd.c_str());
    ::_exit(126);
  }
  if (p.program.empty()) {
    child_say("command not found: ", p.argv[0]);
    ::_exit(127);
  }
  // Descriptors the caller inherited without close-on-exec (a test harness's pipes, a shell's
  // files) must not reach a job or a detached supervisor, which would hold them open for the
  // job's lifetime. Marked close-on-exec, not closed: the exec-notification pipe still works.
  ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
  ::execve(p.program.c_str(), p.argv.data(), p.envp.data());
  int err = errno;
  child_say("cannot execute ", p.program.c_str());
  ::_exit(err == ENOENT ? 127 : 126);
}

// What a child started by start_child runs with: it may share our memory, so it only reads this.
struct ChildStart {
  const PreparedExec* exec = nullptr;
  bool born_in_cgroup = false;
  int close_fd = -1;  // the parent's end of a pipe, closed in the child
};

int run_exec_child(void* arg) {
  const auto& start = *static_cast<const ChildStart*>(arg);
  if (start.close_fd >= 0) ::close(start.close_fd);
  exec_child(*start.exec, start.born_in_cgroup);
}

// A child running exec_child(p): born inside p's cgroup where the kernel can, sharing our memory
// until it execs where this build can (vfork_clone), else fork()ed. `close_fd` is closed in it.
pid_t start_child(const PreparedExec& p, int close_fd) {
  if (!p.cgroup_dir.empty()) {
    UniqueFd group(::open(p.cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ChildStart in_group{&p, true, close_fd};
    if (group) {
      if (pid_t pid = vfork_clone(run_exec_child, &in_group, group.get()); pid >= 0) return pid;
    }
  }
  ChildStart moving{&p, false, close_fd};
  if (pid_t pid = vfork_clone(run_exec_child, &moving); pid >= 0) return pid;
  const pid_t pid = ::fork();
  if (pid == 0) run_exec_child(&moving);
  return pid;
}

// The middle process of spawn_detached: in a session of its own, it starts the detached child
// (not a group leader there, so the child's setsid() gives it its own session), waits until that
// has exec'd, reports its pid and exits, leaving it to init or the nearest subreaper.
struct DetachedStart {
  const PreparedExec* exec = nullptr;
  int read_fd = -1;   // the parent's end
  int report_fd = -1;
};

int run_detached_middle(void* arg) {
  const auto& start = *static_cast<const DetachedStart*>(arg);
  ::close(start.read_fd);
  ::setsid();
  int exec_fds[2];  // EOF once the grandchild has exec'd: it no longer runs with our memory
  const bool have_exec_pipe = ::pipe2(exec_fds, O_CLOEXEC) == 0;
  ChildStart child{start.exec, false, have_exec_pipe ? exec_fds[0] : -1};
  // Shares the memory of the process that started us when we do: only vfork_clone then, no fork().
  pid_t grandchild = vfork_clone(run_exec_child, &child);
  if (grandchild < 0 && errno == ENOSYS) {
    grandchild = ::fork();
    if (grandchild == 0) run_exec_child(&child);
  }
  if (have_exec_pipe) {
    ::close(exec_fds[1]);
    char byte = 0;
    while (::read(exec_fds[0], &byte, 1) < 0 && errno == EINTR) {
    }
    ::close(exec_fds[0]);
  }
  ssize_t ignored = ::write(start.report_fd, &grandchild, sizeof grandchild);
  (void)ignored;
  ::_exit(grandchild < 0 ? 1 : 0);
}

ProcessExit decode_status(int status) {
  ProcessExit out;
  if (WIFEXITED(status)) {
    out.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    out.exit_code = 128 + WTERMSIG(status);
    out.signaled = true;
  }
  return out;
}

class PosixProcessLauncher final : public ProcessLauncher {
 public:
  pid_t spawn(const ProcessSpec& spec) override {
    PreparedExec p = prepare(spec);
    // A close-on-exec pipe: EOF tells us the child has run setsid() and exec'd (or exited), so
    // signal_group(pid) right after spawn() always reaches the new group.
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      throw SystemError(std::string("pipe failed: ") + std::strerror(errno));
    }
    const pid_t pid = start_child(p, fds[0]);
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      throw SystemError(std::string("fork failed: ") + std::strerror(errno) +
                        "; check the process limit (ulimit -u) and free memory");
    }
    ::close(fds[1]);
    char byte = 0;
    while (::read(fds[0], &byte, 1) < 0 && errno == EINTR) {
    }
    ::close(fds[0]);
    return pid;
  }

  std::optional<ProcessExit> wait(pid_t pid, std::optional<std::chrono::milliseconds> timeout) override {
    if (!timeout) {
      int status = 0;
      while (true) {
        pid_t r = ::waitpid(pid, &status, 0);
        if (r == pid) return decode_status(status);
        if (r < 0 && errno != EINTR) throw_wait_error(pid);
      }
    }
    if (auto e = wait_any({pid}, *timeout)) return e->second;
    return std::nullopt;
  }

  // Sleeps in poll() on a pidfd per child (readable once it has exited), so an exit is seen when
  // it happens, not at the next tick of a sleep loop.
  std::optional<std::pair<pid_t, ProcessExit>> wait_any(const std::vector<pid_t>& pids,
                                                        std::chrono::milliseconds timeout) override {
    if (auto e = reap_any_now(pids)) return e;
    if (timeout <= std::chrono::milliseconds(0)) return std::nullopt;
    std::vector<UniqueFd> pidfds;
    std::vector<pollfd> polled;
    for (pid_t pid : pids) {
      UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
      if (!fd) return ProcessLauncher::wait_any(pids, timeout);  // no pidfds (old kernel, no descriptors left)
      polled.push_back({fd.get(), POLLIN, 0});
      pidfds.push_back(std::move(fd));
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto left = [&] { return std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()); };
    while (true) {
      if (auto e = reap_any_now(pids)) return e;
      const auto wait_ms = left();
      if (wait_ms <= std::chrono::milliseconds(0)) return std::nullopt;
      const int n = ::poll(polled.data(), polled.size(), static_cast<int>(std::min<std::int64_t>(wait_ms.count(), INT32_MAX)));
      if (n < 0 && errno != EINTR) return ProcessLauncher::wait_any(pids, left());  // e.g. ENOMEM: sleep instead
    }
  }

  bool signal_group(pid_t pgid, int signal) override {
    if (pgid <= 1) throw InvalidArgument("refusing to signal process group " + std::to_string(pgid));
    return ::kill(-pgid, signal) == 0;
  }

  pid_t spawn_detached(const ProcessSpec& spec) override {
    PreparedExec p = prepare(spec);
    p.new_session = true;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      throw SystemError(std::string("pipe failed: ") + std::strerror(errno));
    }
    DetachedStart start{&p, fds[0], fds[1]};
    pid_t middle = vfork_clone(run_detached_middle, &start);
    if (middle < 0) {
      middle = ::fork();
      if (middle == 0) run_detached_middle(&start);
    }
    if (middle < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      throw SystemError(std::string("fork failed: ") + std::strerror(errno));
    }
    ::close(fds[1]);
    pid_t grandchild = -1;
    ssize_t n;
    do {
      n = ::read(fds[0], &grandchild, sizeof grandchild);
    } while (n < 0 && errno == EINTR);
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
    }
    if (n != static_cast<ssize_t>(sizeof grandchild) || grandchild <= 0) {
      throw SystemError("could not start a detached process for '" + spec.argv[0] +
                        "'; check the process limit (ulimit -u)");
    }
    return grandchild;
  }

 private:
  // The first of `pids` that has exited, reaped; never blocks.
  static std::optional<std::pair<pid_t, ProcessExit>> reap_any_now(const std::vector<pid_t>& pids) {
    for (pid_t pid : pids) {
      int status = 0;
      pid_t r;
      do {
        r = ::waitpid(pid, &status, WNOHANG);
      } while (r < 0 && errno == EINTR);
      if (r == pid) return std::make_pair(pid, decode_status(status));
      if (r < 0) throw_wait_error(pid);
    }
    return std::nullopt;
  }

  [[noreturn]] static void throw_wait_error(pid_t pid) {
    throw SystemError("waitpid(" + std::to_string(pid) + ") failed: " + std::strerror(errno) +
                      "; only children of this process can be waited for");
  }
};

}  // namespace

std::optional<std::pair<pid_t, ProcessExit>> ProcessLauncher::wait_any(const std::vector<pid_t>& pids,
                                                                       std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    for (pid_t pid : pids) {
      if (auto e = wait(pid, std::chrono::milliseconds(0))) return std::make_pair(pid, *e);
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

std::unique_ptr<ProcessLauncher> make_posix_process_launcher() {
  return std::make_unique<PosixProcessLauncher>();
}

bool process_alive(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  // A zombie (exited, not yet reaped by its parent) is not alive: it runs nothing.
  int fd = ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  char buf[512];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return true;
  std::string stat(buf, static_cast<std::size_t>(n));
  auto paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return true;
  char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

std::filesystem::path self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw SystemError("cannot read /proc/self/exe: " + ec.message());
  return p;
}

namespace {

// KEY=VALUE lines of a shell-style settings file (/etc/default/locale), quotes removed.
std::map<std::string, std::string> read_settings_file(const std::filesystem::path& file) {
  std::map<std::string, std::string> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("export ", 0) == 0) line.erase(0, 7);
    auto eq = line.find('=');
    if (eq == std::string::npos || line[0] == '#') continue;
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    out[line.substr(0, eq)] = value;
  }
  return out;
}

// The system PATH, with the running batchai's folder first: the node "image" carries the tool
// that runs it, so a job's `batchai train ...` finds this very build or install (§4.8). Only when
// this process is batchai (a test program's folder is no tool), and never a folder that a PATH
// cannot spell (a ':' would split it, a relative one would depend on the task's folder).
std::string node_base_path() {
  const std::string system_path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || exe.filename() != "batchai" || !exe.is_absolute()) return system_path;
  const std::string dir = exe.parent_path().string();
  if (dir.empty() || dir.find(':') != std::string::npos) return system_path;
  std::string path = dir;
  std::size_t start = 0;
  while (start <= system_path.size()) {  // the system folders, less the one already first
    std::size_t end = std::min(system_path.find(':', start), system_path.size());
    if (std::string entry = system_path.substr(start, end - start); entry != dir) path += ":" + entry;
    start = end + 1;
  }
  return path;
}

}  // namespace

std::map<std::string, std::string> node_base_environment() {
  std::map<std::string, std::string> env;
  env["PATH"] = node_base_path();
  // The user from the password database, not from the caller's variables.
  if (const passwd* pw = ::getpwuid(::geteuid())) {
    env["HOME"] = pw->pw_dir != nullptr && *pw->pw_dir != '\0' ? pw->pw_dir : "/";
    env["USER"] = env["LOGNAME"] = pw->pw_name != nullptr ? pw->pw_name : "";
    env["SHELL"] = pw->pw_shell != nullptr && *pw->pw_shell != '\0' ? pw->pw_shell : "/bin/sh";
  } else {
    env["HOME"] = "/";
    env["SHELL"] = "/bin/sh";
  }
  for (const char* file : {"/etc/default/locale", "/etc/locale.conf"}) {
    auto settings = read_settings_file(file);
    for (const char* name : {"LANG", "LC_ALL"})
      if (auto it = settings.find(name); it != settings.end() && !it->second.empty() && !env.count(name))
        env[name] = it->second;
  }
  if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && tmp[0] == '/') env["TMPDIR"] = tmp;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (entry.rfind("BATCHAI_", 0) != 0 || eq == std::string::npos) continue;
    std::string name = entry.substr(0, eq);
    if (name != "BATCHAI_JOB_KEY") env[name] = entry.substr(eq + 1);  // a job's marker is its own
  }
  return env;
}

}  // namespace batchai
