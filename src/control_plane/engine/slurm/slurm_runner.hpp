// The body of `batchai _slurm-run --job-key K`, which a Slurm job's batch script runs on the first
// node of its allocation (docs/slurm.md, "Inside the allocation"). It never opens the store, which
// stays on the login host (docs/adr/0006): it reads the run's inputs from the job's exchange folder
// on the shared folder (run_exchange.hpp), claims the run there, runs the job's launch plan over
// the allocated nodes (preparation on every node and tasks of other nodes as `srun` steps pinned to
// their node, tasks of the first node directly, all inside the job's containment; SIGTERM from
// scancel or Slurm's time limit and the login host's stop request stop them), and records there
// where the job's files are and how it ended. The login host folds those records into the store.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "batchai/control_plane/node_layout.hpp"
#include "batchai/runtime/launch_plan.hpp"

namespace batchai {
class Clock;
class ProcessLauncher;
}  // namespace batchai

namespace batchai::control_plane::jobs_detail {

// What the runner has on a compute host: the shared folder's layout, no store.
struct RunnerHost {
  NodeLayout layout;
  const Clock& clock;
  ProcessLauncher& launcher;
  std::string containment;  // Settings::containment
};

// Returns the batch script's exit status: 0 when the job succeeded, its exit code (1..255) otherwise.
int run_in_slurm_allocation(const RunnerHost& host, const std::string& job_key);

// The batch script's last step, after the runner ended however it ended (SIGKILLed too), and the
// whole script of a cleanup job the login host submits to the job's nodes when the batch step died
// with its runner (container_cleanups.hpp): when the job's containers are still recorded and no
// runner holds the run's lock, removes them on every node of the allocation (bounded). 0 when none are left.
int clean_up_slurm_run(const RunnerHost& host, const std::string& job_key);

// Wraps every task placed on a node other than `here` (preparation and main tasks) into an srun
// step pinned to that node; tasks of `here` run directly, with `here_env` (this node's own Slurm
// variables) added. Pure, for tests.
void route_tasks_through_srun(runtime::LaunchPlan& plan, const std::vector<std::string>& node_names,
                              const std::string& here, const std::map<std::string, std::string>& here_env);

}  // namespace batchai::control_plane::jobs_detail
