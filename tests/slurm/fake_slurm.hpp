// A stand-in for Slurm's client commands under the control plane: sinfo, squeue, scontrol, sbatch
// and scancel answer from a script the test sets (printf through the real launcher), or, while
// `silent`, hang like commands whose controller is gone (the client kills them at their bound).
// Every other process goes to the real launcher. No Slurm is needed.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "batchai/common/process.hpp"

namespace batchai::slurm_testing {

class FakeSlurm : public ProcessLauncher {
 public:
  pid_t spawn(const ProcessSpec& spec) override;
  std::optional<ProcessExit> wait(pid_t pid, std::optional<std::chrono::milliseconds> timeout) override {
    return real_->wait(pid, timeout);
  }
  bool signal_group(pid_t pgid, int signal) override { return real_->signal_group(pgid, signal); }
  pid_t spawn_detached(const ProcessSpec& spec) override { return real_->spawn_detached(spec); }

  // How many Slurm commands ran, and the argv of each.
  int slurm_commands() const;
  std::vector<std::vector<std::string>> commands() const;

  bool silent = false;
  // squeue's answer per Slurm job id (its state word); ids left out are unknown to Slurm.
  std::map<unsigned long, std::string> queue;
  // squeue's reason per job id ("None" for those left out).
  std::map<unsigned long, std::string> reasons;
  // squeue's working folder per job id: sbatch's --chdir, unless a test puts another job's there.
  std::map<unsigned long, std::string> work_dirs;
  unsigned long next_job_id = 42;

 private:
  mutable std::mutex mutex_;
  std::vector<std::vector<std::string>> commands_;
  std::unique_ptr<ProcessLauncher> real_ = make_posix_process_launcher();
};

}  // namespace batchai::slurm_testing
