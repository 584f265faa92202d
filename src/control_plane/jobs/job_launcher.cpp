#include "job_launcher.hpp"

#include "batchai/common/process_tree.hpp"

namespace batchai::control_plane::jobs_detail {

pid_t JobLauncher::spawn(const ProcessSpec& spec) {
  ProcessSpec contained = spec;
  procs_.adopt(contained);
  // Under the lock: reap_orphans() must never see a task that is not in tasks_ yet.
  std::lock_guard lock(mutex_);
  pid_t pid = inner_.spawn(contained);
  tasks_.insert(pid);
  return pid;
}

std::optional<ProcessExit> JobLauncher::wait(pid_t pid, std::optional<std::chrono::milliseconds> timeout) {
  auto e = inner_.wait(pid, timeout);
  if (e) {
    std::lock_guard lock(mutex_);
    tasks_.erase(pid);  // reaped: its pid may belong to someone else from now on
  }
  return e;
}

std::optional<std::pair<pid_t, ProcessExit>> JobLauncher::wait_any(const std::vector<pid_t>& pids,
                                                                   std::chrono::milliseconds timeout) {
  auto e = inner_.wait_any(pids, timeout);
  if (e) {
    std::lock_guard lock(mutex_);
    tasks_.erase(e->first);
  }
  return e;
}

std::set<pid_t> JobLauncher::tasks() {
  std::lock_guard lock(mutex_);
  return tasks_;
}

void JobLauncher::signal_all(int signal) {
  const auto live = tasks();
  for (pid_t g : live) inner_.signal_group(g, signal);
  procs_.signal_all(signal, live);
}

void JobLauncher::reap_orphans() {
  std::lock_guard lock(mutex_);
  batchai::reap_orphans(tasks_);
}

}  // namespace batchai::control_plane::jobs_detail
