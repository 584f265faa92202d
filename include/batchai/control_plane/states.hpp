// The states of a job, a node and a cluster's allocation, as the service names them
// (executionState, nodeStateCounts' keys, allocationState). The control plane parses a row's
// state once and compares enums; the strings exist only in documents and the store.
#pragma once
#include <optional>
#include <string_view>

namespace batchai::control_plane {

enum class JobState { kQueued, kRunning, kTerminating, kSucceeded, kFailed };
enum class NodeState { kIdle, kRunning, kPreparing, kUnusable, kLeaving };
enum class AllocationState { kSteady, kResizing };

// "queued", "idle", "steady", ...: the names the API and the store use.
std::string_view to_string(JobState state);
std::string_view to_string(NodeState state);
std::string_view to_string(AllocationState state);

// nullopt for a name the service does not use.
std::optional<JobState> parse_job_state(std::string_view name);
std::optional<NodeState> parse_node_state(std::string_view name);
std::optional<AllocationState> parse_allocation_state(std::string_view name);

// queued, running or terminating: the job still holds (or waits for) its engine's resources.
constexpr bool is_unfinished(JobState state) {
  return state == JobState::kQueued || state == JobState::kRunning || state == JobState::kTerminating;
}

}  // namespace batchai::control_plane
