// Job process containment: /proc scans, the job's cgroup v2 group, the child-subreaper walk and
// the BATCHAI_JOB_KEY marker; kill-and-confirm for every way a job can end.
#include "batchai/common/process_tree.hpp"

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batchai/common/confined_path.hpp"
#include "vfork_clone.hpp"

namespace fs = std::filesystem;

namespace batchai {
namespace {

constexpr const char* kJobGroupPrefix = "batchai-job-";

std::string read_small_file(const std::string& path, std::size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;
  char buf[8192];
  ssize_t n;
  while (out.size() < limit && ((n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

std::optional<ProcInfo> parse_stat(pid_t pid) {
  std::string stat = read_small_file("/proc/" + std::to_string(pid) + "/stat", 4096);
  // The command name (2nd field) may hold spaces and parentheses: parse after the last ')'.
  auto paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(paren + 1));
  ProcInfo p;
  p.pid = pid;
  long ppid = 0, pgid = 0, sid = 0;
  if (!(rest >> p.state >> ppid >> pgid >> sid)) return std::nullopt;
  std::string skipped;
  for (int field = 7; field < 22 && rest >> skipped; ++field) {
  }
  rest >> p.start_ticks;  // field 22
  p.ppid = static_cast<pid_t>(ppid);
  p.pgid = static_cast<pid_t>(pgid);
  p.sid = static_cast<pid_t>(sid);
  return p;
}

// This process's cgroup v2 path ("/a/b") from /proc/self/cgroup, empty when there is none.
std::string own_cgroup_path() {
  std::istringstream in(read_small_file("/proc/self/cgroup", 65536));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return {};
}

// The folder of this process's own cgroup v2 group, from /proc/self/mountinfo.
std::optional<fs::path> own_cgroup_dir(std::string* why) {
  const std::string own = own_cgroup_path();
  if (own.empty()) {
    if (why) *why = "this process is in no cgroup v2 group";
    return std::nullopt;
  }
  std::istringstream in(read_small_file("/proc/self/mountinfo", 1 << 20));
  std::string line;
  while (std::getline(in, line)) {
    auto dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, dev, root, mount_point;
    if (!(fields >> id >> parent >> dev >> root >> mount_point)) continue;
    if (root != "/" && own.rfind(root, 0) != 0) continue;  // a bind mount of another subtree
    std::string relative = root == "/" ? own : own.substr(root.size());
    while (!relative.empty() && relative.front() == '/') relative.erase(0, 1);
    return relative.empty() ? fs::path(mount_point) : fs::path(mount_point) / relative;
  }
  if (why) *why = "cgroup v2 is not mounted";
  return std::nullopt;
}

bool write_text(const fs::path& file, const std::string& text) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

std::vector<pid_t> read_pids(const fs::path& file) {
  std::istringstream in(read_small_file(file.string(), 1 << 22));
  std::vector<pid_t> out;
  long pid = 0;
  while (in >> pid) out.push_back(static_cast<pid_t>(pid));
  return out;
}

int exit_at_once(void*) { return 0; }

// Whether a job's process can be in `group`: a child started there (as the tasks will be), else
// one that moves itself there (kernels before 5.7).
bool can_start_in(const fs::path& group, std::string* why) {
  UniqueFd group_fd(::open(group.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  pid_t child = group_fd ? vfork_clone(exit_at_once, nullptr, group_fd.get()) : -1;
  if (child < 0) {
    const std::string procs = (group / "cgroup.procs").string();
    child = ::fork();
    if (child == 0) {
      int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
      ::_exit(fd >= 0 && ::write(fd, "0", 1) == 1 ? 0 : 1);
    }
  }
  if (child < 0) {
    if (why) *why = std::string("fork failed: ") + std::strerror(errno);
    return false;
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok && why) *why = "cannot move a process into a new cgroup under " + group.parent_path().string();
  return ok;
}

bool safe_key(const std::string& key) {
  if (key.empty() || key.size() > 100) return false;
  for (char c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

}  // namespace

std::vector<ProcInfo> list_processes() {
  std::vector<ProcInfo> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  while (dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid <= 0) continue;
    if (auto p = parse_stat(static_cast<pid_t>(pid))) out.push_back(*p);
  }
  ::closedir(dir);
  return out;
}

bool process_has_env(pid_t pid, const std::string& name, const std::string& value) {
  const std::string environ = read_small_file("/proc/" + std::to_string(pid) + "/environ", 1 << 22);
  const std::string entry = name + "=" + value;
  for (std::size_t pos = environ.find(entry); pos != std::string::npos; pos = environ.find(entry, pos + 1)) {
    const bool starts = pos == 0 || environ[pos - 1] == '\0';
    const bool ends = pos + entry.size() == environ.size() || environ[pos + entry.size()] == '\0';
    if (starts && ends) return true;
  }
  return false;
}

namespace {

// This process's cgroup v2 group when its cgroup.procs is writable (not yet proven usable).
std::optional<fs::path> own_writable_cgroup(std::string* why) {
  auto dir = own_cgroup_dir(why);
  if (!dir) return std::nullopt;
  if (::access((*dir / "cgroup.procs").c_str(), W_OK) != 0) {
    if (why) *why = "cgroup v2 group " + dir->string() + " is not writable";
    return std::nullopt;
  }
  return dir;
}

}  // namespace

std::optional<fs::path> writable_cgroup_parent(std::string* why) {
  auto dir = own_writable_cgroup(why);
  if (!dir) return std::nullopt;
  const fs::path probe = *dir / ("batchai-probe-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::create_directory(probe, ec);
  if (ec) {
    if (why) *why = "cannot create a cgroup under " + dir->string() + ": " + ec.message();
    return std::nullopt;
  }
  const bool ok = can_start_in(probe, why);
  fs::remove(probe, ec);
  if (!ok) return std::nullopt;
  return dir;
}

JobProcesses JobProcesses::contain(const std::string& job_key, const std::string& preference) {
  JobProcesses j;
  j.key_ = job_key;
  j.supervisor_ = true;
  timespec boot{};
  if (::clock_gettime(CLOCK_BOOTTIME, &boot) == 0) {
    const auto hz = static_cast<unsigned long long>(::sysconf(_SC_CLK_TCK));
    const auto now = static_cast<unsigned long long>(boot.tv_sec) * hz +
                     static_cast<unsigned long long>(boot.tv_nsec) * hz / 1000000000ULL;
    j.started_ticks_ = now > 1 ? now - 1 : 0;  // a tick of slack for the rounding
  }
  // Orphans (setsid daemons, ranks whose mpirun died) come to us instead of init.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  if (preference == "subreaper") {
    j.fallback_why_ = "BATCHAI_CONTAINMENT=subreaper";
  } else if (!safe_key(job_key)) {
    j.fallback_why_ = "the job key cannot name a cgroup";
  } else if (auto parent = own_writable_cgroup(&j.fallback_why_)) {
    // Proven on the job's own group: one process started there, not a separate probe group.
    const fs::path group = *parent / (kJobGroupPrefix + job_key);
    std::error_code ec;
    fs::create_directory(group, ec);
    if (ec) {
      j.fallback_why_ = "cannot create " + group.string() + ": " + ec.message();
    } else if (!can_start_in(group, &j.fallback_why_)) {
      fs::remove(group, ec);
    } else {
      j.cgroup_ = group;
    }
  }
  return j;
}

JobProcesses::JobProcesses(std::string job_key, fs::path cgroup) : key_(std::move(job_key)), cgroup_(std::move(cgroup)) {}

std::string JobProcesses::describe() const {
  if (!cgroup_.empty()) return "cgroup " + cgroup_.string();
  return "subreaper (no cgroup: " + (fallback_why_.empty() ? std::string("not used") : fallback_why_) + ")";
}

void JobProcesses::adopt(ProcessSpec& spec) const {
  spec.env[kJobKeyVariable] = key_;
  spec.cgroup = cgroup_;
}

std::vector<pid_t> JobProcesses::members(const std::set<pid_t>& tasks) const { return members(tasks, list_processes()); }

std::vector<pid_t> JobProcesses::members(const std::set<pid_t>& tasks, const std::vector<ProcInfo>& procs) const {
  const pid_t self = ::getpid();
  std::map<pid_t, const ProcInfo*> by_pid;
  std::multimap<pid_t, pid_t> children;
  for (const auto& p : procs) {
    by_pid[p.pid] = &p;
    children.emplace(p.ppid, p.pid);
  }
  std::set<pid_t> found;
  if (!cgroup_.empty())
    for (pid_t pid : read_pids(cgroup_ / "cgroup.procs")) found.insert(pid);
  if (safe_key(key_))
    for (const auto& p : procs)
      if (p.pid > 1 && p.pid != self && p.state != 'Z' && (p.start_ticks == 0 || p.start_ticks >= started_ticks_) &&
          !found.count(p.pid) && process_has_env(p.pid, kJobKeyVariable, key_))
        found.insert(p.pid);
  if (supervisor_) {
    // Below our children that are tasks or job processes: everything, marked or not.
    std::vector<pid_t> stack;
    for (auto [it, end] = children.equal_range(self); it != end; ++it)
      if (tasks.count(it->second) || found.count(it->second)) stack.push_back(it->second);
    while (!stack.empty()) {
      pid_t pid = stack.back();
      stack.pop_back();
      found.insert(pid);
      for (auto [it, end] = children.equal_range(pid); it != end; ++it) stack.push_back(it->second);
    }
  }
  std::vector<pid_t> out;
  for (pid_t pid : found) {
    auto it = by_pid.find(pid);
    if (pid <= 1 || pid == self || it == by_pid.end() || it->second->state == 'Z' || it->second->state == 'X') continue;
    out.push_back(pid);
  }
  return out;
}

void JobProcesses::signal_all(int signal, const std::set<pid_t>& tasks) const {
  for (pid_t pid : members(tasks)) ::kill(pid, signal);
}

std::vector<pid_t> JobProcesses::kill_all(std::chrono::milliseconds limit, const std::set<pid_t>& tasks) const {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  const bool has_kill_file = !cgroup_.empty() && fs::exists(cgroup_ / "cgroup.kill");
  for (;;) {
    if (has_kill_file) write_text(cgroup_ / "cgroup.kill", "1");
    const auto procs = list_processes();  // one scan of /proc per round: it reads every process's environment
    auto left = members(tasks, procs);
    if (supervisor_) reap_orphans(tasks, procs);
    if (left.empty()) break;
    for (pid_t pid : left) ::kill(pid, SIGKILL);
    // Ours: no zombie left behind; but never a task, which its launcher still waits for.
    for (pid_t pid : left)
      if (!tasks.count(pid)) ::waitpid(pid, nullptr, WNOHANG);
    if (std::chrono::steady_clock::now() >= deadline) return members(tasks);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!cgroup_.empty()) {
    std::error_code ec;
    fs::remove(cgroup_, ec);  // EBUSY for a moment while the kernel finishes the exits: harmless
  }
  return {};
}

void reap_orphans(const std::set<pid_t>& keep) { reap_orphans(keep, list_processes()); }

void reap_orphans(const std::set<pid_t>& keep, const std::vector<ProcInfo>& procs) {
  const pid_t self = ::getpid();
  for (const auto& p : procs)
    if (p.ppid == self && p.state == 'Z' && !keep.count(p.pid)) ::waitpid(p.pid, nullptr, WNOHANG);
}

void leave_job_cgroup() {
  auto dir = own_cgroup_dir(nullptr);
  if (!dir || dir->filename().string().rfind(kJobGroupPrefix, 0) != 0) return;
  write_text(dir->parent_path() / "cgroup.procs", std::to_string(::getpid()));
}

}  // namespace batchai
