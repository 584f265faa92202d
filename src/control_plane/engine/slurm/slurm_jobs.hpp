// Jobs on Slurm-backed clusters (docs/slurm.md "Jobs on Slurm clusters"): a job is stored queued
// like any other; the scheduler writes its inputs into its exchange folder on the shared folder and
// submits it with sbatch (one batch job, exclusive nodes) once the cluster's bound (target, or
// auto-scale maximum) has room; every reconcile reads the submitted jobs' states from Slurm's
// client commands and what their runners recorded (runner_records.hpp); the batch script runs
// `batchai _slurm-run --job-key K` in the allocation (slurm_runner.hpp), which never opens the store.
// The job's row keeps Slurm's job id (engine_job_id); what Slurm said of it (its partition, node
// list, pending reason, final state) is its row of slurm_jobs (store/slurm.hpp).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "batchai/slurm/parsers.hpp"
#include "engine/cluster_engine.hpp"
#include "store/jobs.hpp"
#include "slurm_env.hpp"


namespace batchai::control_plane::detail {
class SlurmBudget;
}

namespace batchai::control_plane::jobs_detail {

using detail::SlurmEnv;

// True for a job made on a Slurm-backed cluster.
bool is_slurm_job(const JobRow& job);
// The Slurm job id the job was submitted as; nullopt before submission (or not a Slurm job).
std::optional<slurm::JobId> slurm_job_id(const JobRow& job);

// Where a queued job of a Slurm cluster stands, from the store (inside the caller's transaction):
// submitted, Slurm's queue holds it (with Slurm's last pending reason); not yet, batchai holds it
// until the cluster's bound has room, in submission order (its position among those held).
// One place per job of `jobs`, from one pass over the cluster's queue.
std::vector<EngineQueuePlace> slurm_queue_places(Store& store, const ClusterRow& cluster, const std::vector<JobRow>& jobs);

// Part of reconcile_slurm for the clusters named: submits queued jobs (priority, then age) while
// the cluster's bound has room, while `budget` lasts. A job Slurm refuses fails with Slurm's
// message; a silent controller is thrown (after the jobs submitted before it were stored).
void submit_slurm_jobs(const SlurmEnv& env, const std::vector<std::int64_t>& clusters, const detail::SlurmBudget& budget);

// Part of reconcile_slurm: each submitted, unfinished job of the clusters named takes Slurm's
// state (PENDING -> queued unless its run was claimed, RUNNING -> running, an ended job ->
// succeeded/failed with the exit code of Slurm's record and the error the runner recorded, or
// Slurm's reason). A silent controller is thrown.
void refresh_slurm_jobs(const SlurmEnv& env, const std::vector<std::int64_t>& clusters, const detail::SlurmBudget& budget);

// `job terminate` / `job delete` of a submitted job: scancel, then (with `wait`) waits, bounded,
// until Slurm reports the job ended. Every Slurm command within kSlurmBudget; a silent
// controller (or one backing off) is not waited for: the cancel is queued for when it answers.
// Returns Slurm's last word on it (nullopt when Slurm does not answer, or without `wait`).
std::optional<slurm::JobInfo> cancel_slurm_job(const SlurmEnv& env, const JobRow& job, bool wait = true);

// Ends a Slurm job that `job terminate`/`job delete` set terminating: scancel, then its end
// recorded (Slurm's record when it came within the wait, JobTerminated either way). Without
// Slurm's word, the runner's (it stops the tasks when it reads `terminating`) is awaited, bounded.
void terminate_slurm_job(const SlurmEnv& env, const JobRow& job);

// Inside a read: the submitted jobs of the named clusters that have not ended.
std::vector<JobRow> submitted_unfinished_jobs(Store& store, const std::vector<std::int64_t>& clusters);

}  // namespace batchai::control_plane::jobs_detail
