// The job row, lookups with the service's messages and the state transitions written into the
// stored document; shared by the jobs source files.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "../rows.hpp"
#include "batchai/control_plane/jobs.hpp"
#include "batchai/control_plane/states.hpp"

namespace batchai::control_plane::jobs_detail {

struct JobRow {
  std::int64_t id = 0;
  std::string key;
  std::int64_t experiment_id = 0;
  std::optional<std::int64_t> cluster_id;
  std::string name;
  JobState state = JobState::kQueued;
  int priority = 1;
  int node_count = 1;
  std::int64_t created_us = 0;
  Json doc;
  Json private_data;
  std::optional<std::int64_t> sup_pid;
  ClusterKind kind = ClusterKind::kSimulated;  // the engine that runs it (its cluster's when made)
  std::optional<std::int64_t> engine_job_id;   // its id in the engine's own scheduler, once submitted
};

inline constexpr const char* kJobColumns =
    "SELECT id, job_key, experiment_id, cluster_id, name, state, priority, node_count, created_us, doc, private, "
    "sup_pid, engine, engine_job_id FROM jobs ";

JobRow read_job(const Statement& st);
std::optional<JobRow> load_job_by_key(Store& store, const std::string& key);
// Experiment row id (NotFound "The specified experiment <name> is not found").
std::int64_t require_experiment(Store& store, const WorkspaceRef& where, const std::string& experiment);
std::optional<JobRow> find_job(Store& store, const JobRef& ref);
JobRow require_job(Store& store, const JobRef& ref);  // NotFound "The specified job <name> is not found"

// Writes state + doc (executionState, transition time, executionInfo as given), private data,
// supervisor pid and engine job id.
void save_job(Store& store, const JobRow& job);
// Sets executionState (and its transition time) in the document and the row.
void set_state(JobRow& job, JobState state, std::int64_t now_us);
// Terminal: failed/succeeded with exit code and errors; fills start/end times.
void finish_job(JobRow& job, bool succeeded, std::optional<int> exit_code, const Json& errors, std::int64_t now_us);
Json job_error(const std::string& code, const std::string& message);

// The invariant of every job run by batchai: its task is started at most once. The runner marks
// the job (the row's run_claim) in the store before the task's first process starts; a job whose
// mark is set and whose runner is gone ended with it (SupervisorDied) and is never started
// again, by any supervisor, command, reconcile or engine. A requeue, decided by the live runner
// that holds the mark, clears it in the transaction that queues the job again.
enum class TaskStart { kMarked, kStartedBefore, kNotRunning };
// Inside a write transaction: marks the job's task started by `who` when the job is running (or
// terminating) and unmarked; kStartedBefore when it was marked already, kNotRunning when the job
// is queued, has ended or is gone.
TaskStart mark_task_started(Store& store, const std::string& job_key, const std::string& who);
// Who marked the job's task started; nullopt while nobody did.
std::optional<std::string> task_started_by(Store& store, const std::string& job_key);
// Inside the write transaction that queues the job again: its next run may start the task.
void forget_task_start(Store& store, const std::string& job_key);
// Running jobs of the cluster that no supervisor ever took and whose task never started (placed,
// their supervisor not yet there): the only running jobs another supervisor may take.
std::vector<std::string> never_supervised_running_jobs(Store& store, std::int64_t cluster);
// The error of a job whose supervisor (`which`, e.g. "pid 42"; may be empty) died while the job
// was in `state`: its processes stopped, its task not started again.
Json supervisor_died_error(const std::string& which, JobState state);

// The job's nodes (node id, ordinal) in order.
std::vector<std::pair<std::string, int>> job_nodes(Store& store, const std::string& job_key);

}  // namespace batchai::control_plane::jobs_detail
