// The jobs table (store/jobs.cpp): the job row, lookups with the service's messages, the state
// transitions written into the stored document, and the typed reads and writes of the services,
// the scheduler and the engines. No SQL of the jobs table lives outside store/.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "store/nodes.hpp"
#include "store/rows.hpp"
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

std::optional<JobRow> load_job_by_key(Store& store, const std::string& key);
std::optional<JobRow> load_job_by_id(Store& store, std::int64_t id);
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

// A new job row, queued.
struct NewJob {
  std::string key;
  std::int64_t experiment_id = 0;
  std::int64_t cluster_id = 0;
  std::string name;
  int priority = 1;
  int node_count = 1;
  std::int64_t created_us = 0;
  Json doc;
  Json private_data;
  ClusterKind engine = ClusterKind::kSimulated;
};
void insert_job(Store& store, const NewJob& job);
void delete_job(Store& store, std::int64_t id);
// The experiment's job documents in creation order; with `fields`, only those top-level members
// of each (plain keys; anything else throws Error), read by SQLite from the stored text.
Json experiment_job_docs(Store& store, std::int64_t experiment_id, const std::vector<std::string>& fields);

// The jobs a deleted cluster, experiment or workspace (`row_id`) leaves behind.
enum class JobParent { kCluster, kExperiment, kWorkspace };
std::vector<JobRow> jobs_under(Store& store, JobParent parent, std::int64_t row_id);
// The key of the cluster's first queued job in the scheduler's order (priority, creation, id).
std::optional<std::string> queue_head(Store& store, std::int64_t cluster_id);

// Reads of engines that keep their own queue (engine/slurm): a job of theirs is "submitted" once
// its engine_job_id is set. Their unfinished jobs of a cluster in the scheduler's order:
std::vector<JobRow> unfinished_engine_jobs(Store& store, std::int64_t cluster_id, ClusterKind engine);
// Of the engine's unfinished jobs of the cluster, those submitted.
std::vector<JobRow> submitted_engine_jobs(Store& store, std::int64_t cluster_id, ClusterKind engine);
// Whether the cluster holds a queued job of the engine not submitted yet (a cheap read).
bool holds_unsubmitted_job(Store& store, std::int64_t cluster_id, ClusterKind engine);
// The engine's unfinished jobs of a cluster in the scheduler's order, without their documents.
struct QueueSlot {
  std::int64_t id = 0;
  bool queued = false;
  int node_count = 1;
  bool submitted = false;
};
std::vector<QueueSlot> engine_queue_slots(Store& store, std::int64_t cluster_id, ClusterKind engine);
// Row id and document of the engine's unfinished jobs, or of those whose document has errors.
enum class DocsOf { kUnfinished, kWithErrors };
std::vector<std::pair<std::int64_t, Json>> engine_job_docs(Store& store, ClusterKind engine, DocsOf which);
void save_job_doc(Store& store, std::int64_t id, const Json& doc);
// Key and private data of the cluster's running (or terminating) jobs.
std::vector<std::pair<std::string, Json>> running_jobs_private(Store& store, std::int64_t cluster_id);

// ---- The scheduler's reads and writes (store/jobs_queue.cpp): every command runs a step, so
// what it reads of the queue comes from the jobs_schedule index alone where it can.
struct QueuedJob {
  std::int64_t id = 0;
  std::string key;
  std::int64_t cluster_id = 0;
  int priority = 1;
  std::int64_t created_us = 0;
  ClusterKind engine = ClusterKind::kSimulated;  // its cluster's
};
// The queued jobs that have a cluster.
std::vector<QueuedJob> queued_jobs(Store& store);
struct ActiveJob {
  std::string key;
  std::optional<std::int64_t> sup_pid;
  std::int64_t created_us = 0;
  std::optional<std::string> state_changed;  // executionStateTransitionTime, as stored
  ClusterKind engine = ClusterKind::kSimulated;
  std::optional<std::int64_t> cluster_id;
};
// The running and terminating jobs.
std::vector<ActiveJob> active_jobs(Store& store);
// Keys of ended, queued or deleted jobs that nodes still name as theirs.
std::vector<std::string> keys_holding_nodes_while_not_running(Store& store);
// Clusters with a queued job and an idle free node.
std::vector<std::int64_t> clusters_with_queue_and_idle_node(Store& store);
// The job's state; nullopt when it is gone.
std::optional<JobState> job_state(Store& store, const std::string& job_key);
// The cluster's queued jobs (key, node count) in the scheduler's order.
std::vector<std::pair<std::string, int>> queued_keys_and_sizes(Store& store, std::int64_t cluster_id);
// Each auto-scale cluster whose stored demand differs from the nodes its unfinished jobs need.
std::vector<std::pair<std::int64_t, int>> changed_auto_scale_demands(Store& store);

// A Slurm job's run claim (engine/slurm/run_claim.hpp): inside a write transaction, records that
// the run was claimed by `who` unless one is recorded already; true when this call recorded it.
bool record_run_claim(Store& store, const std::string& job_key, const std::string& who);
// Who claimed the job's run, as recorded; nullopt while nobody did.
std::optional<std::string> run_claim(Store& store, const std::string& job_key);

}  // namespace batchai::control_plane::jobs_detail
