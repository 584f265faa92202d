// The launcher a job's supervisor runs the job's processes with: every process starts inside the
// job's containment (JobProcesses: marker variable, cgroup), and the tasks it started and has not
// reaped yet are kept, so stopping the job reaches their groups and the subtrees below them.
// Used by every engine's job runner (jobs/job_run.hpp).
#pragma once
#include <mutex>
#include <set>

#include "batchai/common/process.hpp"
#include "batchai/common/process_tree.hpp"

namespace batchai::control_plane::jobs_detail {

class JobLauncher final : public ProcessLauncher {
 public:
  JobLauncher(ProcessLauncher& inner, const JobProcesses& procs) : inner_(inner), procs_(procs) {}
  pid_t spawn(const ProcessSpec& spec) override;
  std::optional<ProcessExit> wait(pid_t pid, std::optional<std::chrono::milliseconds> timeout) override;
  std::optional<std::pair<pid_t, ProcessExit>> wait_any(const std::vector<pid_t>& pids,
                                                        std::chrono::milliseconds timeout) override;
  bool signal_group(pid_t pgid, int signal) override { return inner_.signal_group(pgid, signal); }
  pid_t spawn_detached(const ProcessSpec& spec) override { return inner_.spawn_detached(spec); }
  // The tasks started and not reaped yet.
  std::set<pid_t> tasks();
  // `signal` to every task's group and every process of the job's containment.
  void signal_all(int signal);
  // Orphans the subreaper adopted and that exited (not tasks: the runner waits for those).
  void reap_orphans();

 private:
  ProcessLauncher& inner_;  // the control plane's (Services::launcher)
  const JobProcesses& procs_;
  std::mutex mutex_;
  std::set<pid_t> tasks_;
};

}  // namespace batchai::control_plane::jobs_detail
