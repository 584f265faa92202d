// A job's processes from outside its supervisor (job_processes.hpp).
#include "job_processes.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <ctime>
#include <fstream>

#include "batchai/common/log.hpp"
#include "batchai/common/process.hpp"
#include "batchai/common/process_tree.hpp"
#include "context.hpp"
#include "job_containers.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane::jobs_detail {

std::vector<std::int64_t> release_nodes(Store& store, const std::string& job_key, std::chrono::milliseconds limit) {
  // A node never goes to the next job while a process of this one lives.
  const NodeLayout layout(store.path().parent_path());
  if (auto left = end_job_processes(layout, job_key, limit); !left.empty()) {
    log::warning("job " + job_key + ": " + std::to_string(left.size()) + " process(es) (first pid " +
                 std::to_string(left.front()) + ") survived SIGKILL; its nodes stay taken until they are gone");
    return {};
  }
  return free_nodes(store, job_key);
}

fs::path state_dir(const NodeLayout& layout, const std::string& job_key) { return layout.job_state(job_key); }

bool supervisor_alive(const NodeLayout& layout, const std::string& job_key) {
  const fs::path lock = state_dir(layout, job_key) / "supervisor.lock";
  int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // never created: no supervisor ever held it
  // flock conflicts between open file descriptions even inside one process, so this also
  // reports "held" when asked from within the supervisor itself.
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

std::vector<pid_t> end_job_processes(const NodeLayout& layout, const std::string& job_key,
                                     std::chrono::milliseconds limit) {
  std::string cgroup;
  std::ifstream in(state_dir(layout, job_key) / "cgroup");
  std::getline(in, cgroup);
  remove_job_containers(containers_record(layout, job_key), job_key);  // what runs in them is the job's too
  return JobProcesses(job_key, cgroup).kill_all(limit);
}

void kill_job_processes(const Context& cx, const std::string& job_key, std::optional<std::int64_t> sup_pid) {
  if (sup_pid && *sup_pid > 1 && supervisor_alive(cx.layout(), job_key))
    cx.launcher().signal_group(static_cast<pid_t>(*sup_pid), SIGKILL);
  end_job_processes(cx.layout(), job_key, std::chrono::seconds(5));
}

bool claim_supervisor_start(const NodeLayout& layout, const std::string& job_key) {
  constexpr std::time_t kStartGraceS = 10;  // a supervisor holds its lock well within this
  const fs::path dir = state_dir(layout, job_key);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path marker = dir / kSupervisorStartingFile;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
      ::close(fd);
      return true;
    }
    if (errno != EEXIST) return true;  // it cannot be marked: started anyway (a twin finds the lock taken)
    struct stat st {};
    if (::lstat(marker.c_str(), &st) != 0) continue;  // removed meanwhile: try again
    if (std::time(nullptr) - st.st_mtime < kStartGraceS) return false;
    ::unlink(marker.c_str());  // a start that never got its lock
  }
  return false;
}

void spawn_supervisor(const Context& cx, const std::string& job_key) {
  const fs::path dir = state_dir(cx.layout(), job_key);
  fs::create_directories(dir);
  ProcessSpec spec;
  spec.argv = {self_executable().string(), "_supervise", "--job-key", job_key};
  // The node's environment, not the submitter's (AZURE_STORAGE_KEY, ...): jobs inherit from here.
  spec.clear_env = true;
  spec.env = node_base_environment();
  spec.env["BATCHAI_HOME"] = cx.settings().home.string();
  if (!cx.settings().shared.empty()) spec.env["BATCHAI_SHARED_DIR"] = cx.settings().shared.string();
  spec.cwd = dir;
  spec.stdout_file = dir / "supervisor.log";
  spec.stderr_file = dir / "supervisor.log";
  spec.append = true;
  // Run from inside a job (a job that submits jobs): the supervisor is born outside that job's
  // cgroup, so it does not end with it. spawn_detached returns once it has exec'd its clean env.
  leave_job_cgroup();
  cx.launcher().spawn_detached(spec);
}

}  // namespace batchai::control_plane::jobs_detail
