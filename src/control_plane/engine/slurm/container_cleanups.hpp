// Containers a Slurm job left on its nodes when its whole batch step died with its runner (scancel
// -s KILL, the step OOM-killed, Slurm's kill timeout, a lost node): neither the runner nor the batch
// script's shell removed them. The login host submits one small cleanup job of its own to those
// nodes, which runs `batchai _slurm-cleanup` there (docs/slurm.md, "Containers on Slurm nodes").
#pragma once
#include <string>
#include <vector>

#include "slurm_env.hpp"

namespace batchai::control_plane::detail {
class SlurmBudget;
}

namespace batchai::control_plane::jobs_detail {

// A cleanup's first look comes this long after its job ended, so that the batch script's own
// cleanup (which follows a runner that ended) has removed them first; then every kCleanupRetry.
inline constexpr std::int64_t kCleanupFirstDelayUs = 20LL * 1000 * 1000;
inline constexpr std::int64_t kCleanupRetryUs = 3LL * 60 * 1000 * 1000;
// Cleanup jobs submitted for one job before its leftovers are given up (about an hour).
inline constexpr int kCleanupMaxAttempts = 20;

// After the transaction that ended the jobs `keys`: those whose exchange folder still holds the
// `containers` record, and whose allocation is known, get a slurm_cleanups row.
void queue_container_cleanups(const detail::SlurmEnv& env, const std::vector<std::string>& keys);

// Part of reconcile_slurm, within its budget: the controller's first due cleanup, if any. Its record
// gone: done. A runner still holds the run's lock: later. Else the previous cleanup job, if Slurm
// still holds it (pending behind a dead or busy node), is cancelled, and one cleanup job is
// submitted (sbatch under the store's write lock, so only once) to the job's nodes, sharing them
// (--oversubscribe, 2 minutes at most). A silent controller is thrown.
void run_container_cleanups(const detail::SlurmEnv& env, const detail::SlurmBudget& budget);

}  // namespace batchai::control_plane::jobs_detail
