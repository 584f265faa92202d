// The store's reads for the dashboard (control_plane/dashboard_reads.cpp shapes their answers):
// column-limited and index-only where they can be, so a page at 10,000 jobs parses no document it
// does not show. Each lives in the file of the table it reads (jobs_dashboard.cpp for the jobs).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/rows.hpp"

namespace batchai::control_plane::detail {

// jobs (store/jobs_dashboard.cpp)
struct JobStateRow {
  std::int64_t id = 0;
  std::int64_t experiment_id = 0;
  std::string state;
};
std::vector<JobStateRow> job_states(Store& store);  // every job, from the index jobs_by_experiment
std::vector<JobStateRow> job_states_of_experiment(Store& store, std::int64_t experiment_id);
// The cluster's queued jobs in the scheduler's order (priority, then creation, then row id).
std::vector<std::int64_t> queued_job_order(Store& store, std::int64_t cluster_id);
struct JobPageRow {
  std::int64_t id = 0;
  std::string name, state;
  std::optional<std::string> cluster;  // none when the cluster was deleted
  std::int64_t node_count = 0;
  std::optional<std::string> tool_type, creation_time, start_time, end_time;
  std::optional<std::int64_t> exit_code;
  std::optional<std::int64_t> cluster_id;
};
// One page of an experiment's jobs, newest first (by created_us, then id); state empty for all.
std::vector<JobPageRow> job_page(Store& store, std::int64_t experiment_id, const std::string& state, std::int64_t limit,
                                 std::int64_t offset);
// (name, state) of the experiment's newest jobs.
std::vector<std::pair<std::string, std::string>> newest_job_states(Store& store, std::int64_t experiment_id,
                                                                   std::int64_t limit);
// (experiment name, job name) of the job with this key.
std::optional<std::pair<std::string, std::string>> job_names_by_key(Store& store, const std::string& job_key);

// nodes (store/nodes.cpp)
struct NodeRoom {
  std::int64_t idle = 0;      // idle and given to no job
  std::int64_t capacity = 0;  // all but the leaving
};
NodeRoom node_room(Store& store, std::int64_t cluster_id);
struct NodeStateRow {
  std::int64_t id = 0;
  std::string state, job_key;  // job_key empty when free
};
std::vector<NodeStateRow> node_states(Store& store);  // by row id

// resource_groups and workspaces (store/workspaces.cpp): (group, workspace), by name, at most limit.
std::vector<std::pair<std::string, std::string>> workspace_names(Store& store, std::size_t limit);
// clusters (store/clusters_reads.cpp): row ids by group, workspace and cluster name, at most limit.
std::vector<std::int64_t> cluster_ids_by_name(Store& store, std::size_t limit);
// experiments (store/experiments.cpp): by group, workspace and experiment name, at most limit.
struct ExperimentName {
  std::int64_t id = 0;
  std::string resource_group, workspace, name;
};
std::vector<ExperimentName> experiment_names(Store& store, std::size_t limit);

}  // namespace batchai::control_plane::detail
