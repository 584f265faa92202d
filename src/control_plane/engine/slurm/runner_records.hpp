// What a Slurm job's runner recorded in its exchange folder (run_exchange.hpp), folded into the
// store by the login host's batchai: the run's start (running, where its files are, its nodes, who
// claimed it) and its end; and the job's end when Slurm's record comes without the runner's word.
// A job succeeds only when its runner recorded that its command ran and exited 0: a batch script
// Slurm calls COMPLETED without that word never makes a job succeeded.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "batchai/slurm/parsers.hpp"
#include "store/jobs.hpp"
#include "slurm_env.hpp"

namespace batchai::control_plane::jobs_detail {

struct RunnerRecord {
  std::optional<std::string> claim;
  std::optional<Json> started;
  std::optional<Json> outcome;
  std::string batch_log_tail;  // Slurm's last line of the batch script's output, for a launch failure
};
RunnerRecord read_runner_record(const NodeLayout& layout, const std::string& job_key);

// True when the runner recorded that a signal stopped the run: Slurm was ending the job (scancel, a
// lost node, its time limit), and Slurm's final word says why.
bool stopped_by_signal(const RunnerRecord& record);

// Inside the caller's write transaction: the runner's start (a queued job becomes running at the
// runner's start time; folders, nodes and the claim recorded) and, `with_end`, its end (the job
// finishes with the runner's outcome; as terminated when it was being terminated). True when `job`
// changed.
bool fold_runner_record(Store& store, JobRow& job, const RunnerRecord& record, std::int64_t now_us,
                        bool with_end = true);

// The end of a job Slurm says ended while its runner recorded no outcome: terminated when it was
// being terminated; Slurm's reason when Slurm ended it (a node failure, its time limit, a cancel);
// otherwise the run was lost (claimed, then no word: its runner was killed) or never started (no
// claim: Slurm could not start the runner, with Slurm's reason and the batch script's last line).
// `lost_nodes`: the allocation's nodes that are not usable now, named in a node failure's error.
void finish_from_slurm(JobRow& job, const slurm::JobInfo& info, const RunnerRecord& record, std::int64_t now_us,
                       const std::vector<std::string>& lost_nodes = {});

// True for a final Slurm state in which the batch script ended by itself (COMPLETED, FAILED), not
// one in which Slurm ended it (a node failure, its time limit, a cancel, memory).
bool ended_by_itself(const std::string& slurm_state);

// The end of a job Slurm no longer knows (its record purged, or a controller that lost its state):
// the runner's outcome when it recorded one, else lost.
void finish_forgotten(JobRow& job, std::uint64_t slurm_job_id, const RunnerRecord& record, std::int64_t now_us);

// After the transaction that ended the jobs `keys`: their inputs leave the shared folder, and the
// containers a dead batch step left on their nodes get a cleanup (container_cleanups.hpp).
void forget_inputs(const detail::SlurmEnv& env, const std::vector<std::string>& keys);

// Part of every reconcile of the named Slurm clusters, also while their controller is silent:
// folds the records of their submitted, unfinished jobs (an end a signal caused waits for Slurm's
// word). Asks Slurm nothing.
void fold_runner_records(const detail::SlurmEnv& env, const std::vector<std::int64_t>& clusters);

}  // namespace batchai::control_plane::jobs_detail
