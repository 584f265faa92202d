// The body of `batchai _slurm-run --job-key K`, which a Slurm job's batch script runs on the
// first node of its allocation (docs/slurm.md, "Inside the allocation"): the job's launch plan over
// the allocated nodes (folders beneath each node's folder of the cluster, on the shared
// $BATCHAI_HOME), preparation on every node and tasks of other nodes as `srun` steps pinned to
// their node, tasks of the first node directly, all inside the job's containment; SIGTERM (scancel,
// Slurm's time limit) and `job terminate` stop them. It records where the job's files are and how
// it ended; the job's state and exit code come from Slurm (slurm_jobs.hpp).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "batchai/runtime/launch_plan.hpp"

namespace batchai::control_plane::detail {
class SlurmEnv;
}

namespace batchai::control_plane::jobs_detail {

// Returns the batch script's exit status: 0 when the job succeeded, its exit code (1..255) otherwise.
int run_in_slurm_allocation(const detail::SlurmEnv& env, const std::string& job_key);

// Wraps every task placed on a node other than `here` (preparation and main tasks) into an srun
// step pinned to that node; tasks of `here` run directly, with `here_env` (this node's own Slurm
// variables) added. Pure, for tests.
void route_tasks_through_srun(runtime::LaunchPlan& plan, const std::vector<std::string>& node_names,
                              const std::string& here, const std::map<std::string, std::string>& here_env);

}  // namespace batchai::control_plane::jobs_detail
