// The Slurm client: batchai's one way to ask a Slurm controller about nodes and jobs. It runs
// Slurm's own commands (sinfo, squeue, scontrol, sbatch, scancel) through ProcessLauncher with
// argv, never a shell, each bounded in time (docs/slurm.md, "Commands batchai runs").
#pragma once
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/process.hpp"
#include "batchai/slurm/batch_script.hpp"
#include "batchai/slurm/parsers.hpp"

namespace batchai::slurm {

struct ClientOptions {
  // The slurm.conf the commands read; none = $SLURM_CONF of this process, or else the system's.
  std::optional<std::filesystem::path> slurm_conf;
  // Longest a single Slurm command may take; past it the controller "does not answer".
  std::chrono::milliseconds command_timeout{15000};
};

// The oldest Slurm batchai supports (sbatch --parsable, squeue %T, scontrol -o as used here).
inline constexpr SlurmVersion kOldestSupported{20, 11};

// Throws Error when `version` is older than kOldestSupported.
void require_supported(const SlurmVersion& version);

class SlurmClient {
 public:
  explicit SlurmClient(ProcessLauncher& launcher, ClientOptions options = {});

  // The controller's version (scontrol show config: SLURM_VERSION), refused when too old.
  SlurmVersion check_version();
  // The partition's nodes with their states; NotFound when the partition does not exist.
  std::vector<NodeInfo> partition_nodes(const std::string& partition);
  // Submits the job (sbatch --parsable) and returns its id. The folders of its stdout and stderr
  // files are created first: Slurm does not create them.
  JobId submit(const BatchJob& job);
  // The job's state: from squeue while Slurm still queues or runs it; once it has ended, from
  // scontrol while the controller still remembers it (MinJobAge), then from sacct where Slurm keeps
  // accounting. No file of the controller's is read: the login host need not be the controller.
  // NotFound when no source knows the job. With a `work_dir`, only a record of the job run in that
  // folder is its answer (see jobs()).
  JobInfo job(JobId id, const std::filesystem::path& work_dir = {});
  // The states of many jobs with one squeue, scontrol for those that ended, and one sacct for those
  // the controller forgot (what a reconcile of every job of a cluster needs); a job no source knows
  // is left out of the answer.
  // A controller that lost a job gives its id out again: with `work_dirs`, an id's answer is only
  // a record of the job run in its folder (is_same_job), so another job's queue entry or record
  // under that id is passed over, and an earlier completion record of the job itself still found.
  std::map<JobId, JobInfo> jobs(const std::vector<JobId>& ids,
                                const std::map<JobId, std::filesystem::path>& work_dirs = {});
  // scancel; a job that has already ended is left as it is. NotFound for an unknown job; with a
  // `work_dir`, for one whose id names another job now, which is never cancelled.
  void cancel(JobId id, const std::filesystem::path& work_dir = {});

 private:
  struct Output {
    int exit_code = 0;
    std::string out;
    std::string err;
  };
  Output run(const std::vector<std::string>& argv);
  // Output of a command that must succeed; throws the controller error or SystemError otherwise.
  std::string run_checked(const std::vector<std::string>& argv);
  [[noreturn]] void fail(const std::string& command, const Output& result);
  // The last accounting record (sacct) of each of `ids`, of the job run in its folder where
  // `work_dirs` names one; empty where Slurm keeps no accounting or it does not answer.
  std::map<JobId, JobInfo> accounting_records(const std::vector<JobId>& ids,
                                             const std::map<JobId, std::filesystem::path>& work_dirs = {});
  std::optional<JobInfo> scontrol_job(JobId id);
  const std::map<std::string, std::string>& config();

  ProcessLauncher& launcher_;
  ClientOptions options_;
  std::optional<std::map<std::string, std::string>> config_;
};

}  // namespace batchai::slurm
