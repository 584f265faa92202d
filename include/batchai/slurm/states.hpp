// Slurm's node and job states mapped to Batch AI's (docs/slurm.md, "State mapping"). Pure
// functions: the control plane reports what these return, and tests pin every row of the tables.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace batchai::slurm {

// A cluster node as Batch AI counts it (nodeStateCounts, docs/behaviour.md §4.2).
enum class NodeState { idle, running, preparing, unusable };

// A job's executionState (docs/behaviour.md §4.2).
enum class JobState { queued, running, succeeded, failed };

std::string_view to_string(NodeState state);
std::string_view to_string(JobState state);

// Maps one `sinfo %T` state ("idle", "mixed", "down*", "idle~", "drained", ...), base state plus
// the trailing flag characters. An unknown state is unusable: a node Slurm cannot describe to us
// must not be counted as available.
NodeState map_node_state(std::string_view sinfo_state);

// What a finished or running Slurm job means for Batch AI: the state and, when failed, the error
// code and message its executionInfo carries.
struct JobOutcome {
  JobState state = JobState::queued;
  std::string error_code;     // empty unless failed: JobFailed, JobTimedOut, JobTerminated, ...
  std::string error_message;
};

// Maps a Slurm job state (squeue %T, scontrol JobState, a completion record's JobState; "CANCELLED
// by 0" is read as CANCELLED). `exit_code` is the job's exit status when known, for the message
// of a FAILED job. Throws SystemError for a state this Slurm version is not known to print.
JobOutcome map_job_state(std::string_view slurm_state, std::optional<int> exit_code = std::nullopt);

// True for the states after which Slurm never runs the job again.
bool is_final_job_state(std::string_view slurm_state);

}  // namespace batchai::slurm
