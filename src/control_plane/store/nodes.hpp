// The nodes table as the jobs use it (store/nodes.cpp): which nodes a job holds, and giving them
// back. The simulated engine's node steps (engine/simulated/node_steps.cpp) still hold their own
// SQL over this table.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "store/store.hpp"

namespace batchai::control_plane::jobs_detail {

// The job's nodes (node id, ordinal) in order.
std::vector<std::pair<std::string, int>> job_nodes(Store& store, const std::string& job_key);
// The number of the job's nodes still marked running.
int running_node_count(Store& store, const std::string& job_key);
// The job's nodes back to idle without looking for its processes (inside a write transaction):
// for a caller that confirmed them gone (jobs/job_processes.hpp). Returns the clusters touched.
std::vector<std::int64_t> free_nodes(Store& store, const std::string& job_key);

// The cluster's idle nodes that no job holds (row ids, by ordinal).
std::vector<std::int64_t> free_idle_nodes(Store& store, std::int64_t cluster_id);
// Gives the node (row id) to the job, running.
void give_node(Store& store, std::int64_t node_id, const std::string& job_key);

}  // namespace batchai::control_plane::jobs_detail
