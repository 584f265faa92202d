// Shared by the jobs source files: the job row, lookups with the service's messages, state
// transitions written into the stored document, node release and process-tree cleanup.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "../internal.hpp"
#include "batchai/control_plane/jobs.hpp"

namespace batchai::control_plane::jobs_detail {

struct JobRow {
  std::int64_t id = 0;
  std::string key;
  std::int64_t experiment_id = 0;
  std::optional<std::int64_t> cluster_id;
  std::string name;
  std::string state;
  int priority = 1;
  int node_count = 1;
  std::int64_t created_us = 0;
  Json doc;
  Json private_data;
  std::optional<std::int64_t> sup_pid;
};

inline constexpr const char* kJobColumns =
    "SELECT id, job_key, experiment_id, cluster_id, name, state, priority, node_count, created_us, doc, private, "
    "sup_pid FROM jobs ";

JobRow read_job(const Statement& st);
std::optional<JobRow> load_job_by_key(Store& store, const std::string& key);
// Experiment row id (NotFound "The specified experiment <name> is not found").
std::int64_t require_experiment(Store& store, const WorkspaceRef& where, const std::string& experiment);
std::optional<JobRow> find_job(Store& store, const JobRef& ref);
JobRow require_job(Store& store, const JobRef& ref);  // NotFound "The specified job <name> is not found"

// Writes state + doc (executionState, transition time, executionInfo as given).
void save_job(Store& store, const JobRow& job);
// Sets executionState (and its transition time) in the document and the row.
void set_state(JobRow& job, const std::string& state, std::int64_t now_us);
// Terminal: failed/succeeded with exit code and errors; fills start/end times.
void finish_job(JobRow& job, bool succeeded, std::optional<int> exit_code, const Json& errors, std::int64_t now_us);
Json job_error(const std::string& code, const std::string& message);

// Nodes of the job back to idle (inside a write transaction), but only once every process of
// the job is confirmed gone (end_job_processes, waiting up to `limit`): while one lives the
// nodes stay the job's, and the scheduler tries again. Returns the clusters touched.
std::vector<std::int64_t> release_nodes(Store& store, const std::string& job_key,
                                        std::chrono::milliseconds limit = std::chrono::seconds(5));
// The job's nodes (node id, ordinal) in order.
std::vector<std::pair<std::string, int>> job_nodes(Store& store, const std::string& job_key);

// Per-job bookkeeping folder: supervisor.lock, supervisor.log, cgroup (the job's cgroup v2
// folder, when it has one), reserve (space the supervisor gives back on a full disk).
std::filesystem::path state_dir(const NodeLayout& layout, const std::string& job_key);
// True when a live process holds the supervisor lock of the job.
bool supervisor_alive(const NodeLayout& layout, const std::string& job_key);
// SIGKILLs every process of the job (its recorded cgroup, its BATCHAI_JOB_KEY marker) until
// none is left or `limit` passes; returns the pids still alive then (empty: all gone).
std::vector<pid_t> end_job_processes(const NodeLayout& layout, const std::string& job_key,
                                     std::chrono::milliseconds limit);
// SIGKILLs the job's supervisor (when it still holds the job's lock; through the control plane's
// launcher), then end_job_processes.
void kill_job_processes(ControlPlane& cp, const std::string& job_key, std::optional<std::int64_t> sup_pid);
// Starts `batchai _supervise --job-key K` detached.
void spawn_supervisor(ControlPlane& cp, const std::string& job_key);

}  // namespace batchai::control_plane::jobs_detail
