// Batch AI jobs over the control plane: create/show/list/delete/terminate, job files and nodes,
// the scheduler (run by every reconcile: gang scheduling by priority then age, auto-scale demand,
// dead-supervisor detection) and the body of the detached per-job supervisor process.
// The runtime (launch plans, supervise_job) does the running; this is the store-side glue.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/list_page.hpp"
#include "batchai/control_plane/options.hpp"

namespace batchai::control_plane {

class ControlPlane;

// Names one job: its workspace, experiment and name.
// A job key as job create makes them (a lower-case version-4 UUID): the only text that may
// name a job's folder under $BATCHAI_HOME/jobs.
inline bool is_job_key(const std::string& text) {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f'))) return false;
  }
  return true;
}

struct JobRef {
  WorkspaceRef where;
  std::string experiment;
  std::string name;
};

// Owned by the ControlPlane (ControlPlane::jobs()): made with it, so the scheduler runs on every
// reconcile and every delete ends the jobs under it, whichever command runs.
class Jobs {
 public:
  explicit Jobs(ControlPlane& cp);

  // A resource a delete takes away from under its jobs.
  enum class Deleted { kCluster, kWorkspace, kExperiment };
  // Inside the deleting transaction: every queued, running or terminating job of the cluster,
  // workspace or experiment row ends (failed; its supervisor and processes killed and confirmed
  // gone, its nodes freed). Jobs of a deleted cluster stay, with the error ClusterDeleted
  // "The job's <why> while the job was <state>."; jobs of a deleted experiment or workspace go
  // with it (their bookkeeping folders trashed).
  void end_jobs_under(Deleted kind, std::int64_t row_id, const std::string& why);
  // Inside a deleting transaction: ends the jobs on the workspace's clusters (also jobs of other
  // workspaces that run there) and in its experiments. `with` says what else went, e.g.
  // " with its resource group 'rg'" (or empty).
  void end_jobs_of_workspace(std::int64_t workspace_row_id, const std::string& workspace, const std::string& with);

  // docs/behaviour.md §4.4; the job is stored queued and its supervisor process started.
  Json create(const JobCreateOptions& options);
  Json show(const JobRef& job);
  // With `fields` (top-level keys), each document holds only those keys, read by SQLite's JSON
  // functions without parsing whole documents: what a table of 10,000 jobs needs.
  Json list(const WorkspaceRef& where, const std::string& experiment, const std::vector<std::string>& fields = {});
  // One page of list() (list_page.hpp), keyed by the job row id.
  Page list_page(const WorkspaceRef& where, const std::string& experiment, const PageRequest& page);
  // The same page (same reconcile, rows and next) with each document's stored text unparsed.
  TextPage list_page_text(const WorkspaceRef& where, const std::string& experiment, const PageRequest& page);
  // Terminates (if running) then removes the job and its bookkeeping folder.
  void remove(const JobRef& job);
  // queued -> failed; running -> terminating -> failed; finished: no change.
  void terminate(const JobRef& job);

  // `job file list`: immediate children of {output dir}/{path}, name order (docs/behaviour.md §2.2.6).
  Json file_list(const JobRef& job, const std::string& directory_id, const std::string& path, int expiry_minutes);
  // The folder `job file list/stream` reads, opened as a confined root (nothing the job planted
  // in it leads out); nullopt while the job has not produced it yet.
  std::optional<ConfinedDir> output_folder(const JobRef& job, const std::string& directory_id, const std::string& path);
  Json node_list(const JobRef& job);
  void node_exec(const JobRef& job, const NodeExecOptions& options);

  // The scheduler step (run by every ControlPlane::reconcile; scheduler.hpp).
  void schedule();

  // Body of `batchai _supervise --job-key K` (supervisor.hpp): waits for nodes, runs the job,
  // records the result. Returns the process exit code (0 unless the supervisor itself could not work).
  int supervise(const std::string& job_key);

  // Body of `batchai _slurm-run --job-key K`, the batch script of a job on a Slurm cluster, run
  // by Slurm on the first node of the job's allocation. Returns the batch script's exit status.
  int run_in_slurm_allocation(const std::string& job_key);

  // Where the supervisor keeps its lock, pid list and log for `job_key`.
  std::filesystem::path job_state_dir(const std::string& job_key) const;

 private:
  // queued -> failed; running -> terminating, then waits for the supervisor to record failed
  // (ends the job's processes itself after 10 s). No reconcile: the entry points do that.
  void end(const JobRef& job);

  ControlPlane& cp_;
};

}  // namespace batchai::control_plane
