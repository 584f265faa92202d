#include "batchai/control_plane/states.hpp"

#include <array>
#include <utility>

namespace batchai::control_plane {
namespace {

template <typename E, std::size_t N>
using Names = std::array<std::pair<E, std::string_view>, N>;

constexpr Names<JobState, 5> kJobStates{{{JobState::kQueued, "queued"},
                                         {JobState::kRunning, "running"},
                                         {JobState::kTerminating, "terminating"},
                                         {JobState::kSucceeded, "succeeded"},
                                         {JobState::kFailed, "failed"}}};
constexpr Names<NodeState, 5> kNodeStates{{{NodeState::kIdle, "idle"},
                                           {NodeState::kRunning, "running"},
                                           {NodeState::kPreparing, "preparing"},
                                           {NodeState::kUnusable, "unusable"},
                                           {NodeState::kLeaving, "leaving"}}};
constexpr Names<AllocationState, 2> kAllocationStates{
    {{AllocationState::kSteady, "steady"}, {AllocationState::kResizing, "resizing"}}};

template <typename E, std::size_t N>
std::string_view name_of(const Names<E, N>& names, E state) {
  for (const auto& [value, name] : names)
    if (value == state) return name;
  return "unknown";
}

template <typename E, std::size_t N>
std::optional<E> parse(const Names<E, N>& names, std::string_view text) {
  for (const auto& [value, name] : names)
    if (name == text) return value;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(JobState state) { return name_of(kJobStates, state); }
std::string_view to_string(NodeState state) { return name_of(kNodeStates, state); }
std::string_view to_string(AllocationState state) { return name_of(kAllocationStates, state); }

std::optional<JobState> parse_job_state(std::string_view name) { return parse(kJobStates, name); }
std::optional<NodeState> parse_node_state(std::string_view name) { return parse(kNodeStates, name); }
std::optional<AllocationState> parse_allocation_state(std::string_view name) {
  return parse(kAllocationStates, name);
}

}  // namespace batchai::control_plane
