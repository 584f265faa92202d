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
  ClusterKind kind = ClusterKind::kSimulated;  // the engine that runs it, from private_data
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
void set_state(JobRow& job, JobState state, std::int64_t now_us);
// Terminal: failed/succeeded with exit code and errors; fills start/end times.
void finish_job(JobRow& job, bool succeeded, std::optional<int> exit_code, const Json& errors, std::int64_t now_us);
Json job_error(const std::string& code, const std::string& message);

// The job's nodes (node id, ordinal) in order.
std::vector<std::pair<std::string, int>> job_nodes(Store& store, const std::string& job_key);

}  // namespace batchai::control_plane::jobs_detail
