#include "batchai/slurm/states.hpp"

#include <initializer_list>
#include <string>
#include <utility>

#include "batchai/common/errors.hpp"

namespace batchai::slurm {
namespace {

// Trailing flags sinfo appends to %T (sinfo(1), "NODE STATE CODES").
constexpr std::string_view kNodeFlags = "*~#!%$@^-+";

bool one_of(std::string_view s, std::initializer_list<std::string_view> set) {
  for (auto e : set)
    if (s == e) return true;
  return false;
}

std::string first_word(std::string_view s) {
  auto end = s.find(' ');
  return std::string(s.substr(0, end));
}

}  // namespace

std::string_view to_string(NodeState state) {
  switch (state) {
    case NodeState::idle: return "idle";
    case NodeState::running: return "running";
    case NodeState::preparing: return "preparing";
    case NodeState::unusable: return "unusable";
  }
  return "unusable";
}

std::string_view to_string(JobState state) {
  switch (state) {
    case JobState::queued: return "queued";
    case JobState::running: return "running";
    case JobState::succeeded: return "succeeded";
    case JobState::failed: return "failed";
  }
  return "failed";
}

NodeState map_node_state(std::string_view sinfo_state) {
  std::string_view base = sinfo_state;
  bool unusable_flag = false, preparing_flag = false;
  while (!base.empty() && kNodeFlags.find(base.back()) != std::string_view::npos) {
    char f = base.back();
    // not responding, powered off, powering down (pending or under way), maintenance
    if (f == '*' || f == '~' || f == '!' || f == '%' || f == '$') unusable_flag = true;
    // powering up, reboot issued: the node comes into service soon
    if (f == '#' || f == '^') preparing_flag = true;
    base.remove_suffix(1);
  }
  NodeState state = NodeState::unusable;
  if (one_of(base, {"idle", "planned"}))
    state = NodeState::idle;
  else if (one_of(base, {"allocated", "mixed", "completing"}))
    state = NodeState::running;
  else if (one_of(base, {"powering_up", "booting"}))
    state = NodeState::preparing;
  // everything else (down, drained, draining, fail, failing, maint, reserved, future, unknown,
  // inval, powered_down, ...) cannot take a job now
  if (state == NodeState::unusable || unusable_flag) return NodeState::unusable;
  if (preparing_flag) return NodeState::preparing;
  return state;
}

bool is_final_job_state(std::string_view slurm_state) {
  return one_of(first_word(slurm_state), {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                                          "BOOT_FAIL", "DEADLINE", "PREEMPTED", "SPECIAL_EXIT", "REVOKED"});
}

JobOutcome map_job_state(std::string_view slurm_state, std::optional<int> exit_code) {
  const std::string s = first_word(slurm_state);
  auto failed = [](std::string code, std::string message) {
    return JobOutcome{JobState::failed, std::move(code), std::move(message)};
  };
  if (one_of(s, {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"}))
    return JobOutcome{JobState::queued, {}, {}};
  if (one_of(s, {"RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED"}))
    return JobOutcome{JobState::running, {}, {}};
  if (s == "COMPLETED") return JobOutcome{JobState::succeeded, {}, {}};
  if (s == "FAILED" || s == "SPECIAL_EXIT") {
    std::string code = exit_code ? " " + std::to_string(*exit_code) : std::string();
    return failed("JobFailed", "Job failed with non-zero exit code" + code + " (Slurm " + s + ")");
  }
  if (s == "CANCELLED") return failed("JobTerminated", "The job was terminated (Slurm CANCELLED).");
  if (s == "TIMEOUT") return failed("JobTimedOut", "The job ran longer than its maxWallClockTime (Slurm TIMEOUT).");
  if (s == "NODE_FAIL") return failed("NodeFailed", "A node of the job failed while it ran (Slurm NODE_FAIL).");
  if (s == "OUT_OF_MEMORY") return failed("OutOfMemory", "The job ran out of memory (Slurm OUT_OF_MEMORY).");
  if (s == "BOOT_FAIL") return failed("NodeBootFailed", "A node of the job failed to boot (Slurm BOOT_FAIL).");
  if (s == "DEADLINE") return failed("DeadlineExceeded", "The job could not end before its deadline (Slurm DEADLINE).");
  if (s == "PREEMPTED") return failed("JobPreempted", "The job was preempted by another job (Slurm PREEMPTED).");
  if (s == "REVOKED") return failed("JobRevoked", "Slurm revoked the job (Slurm REVOKED).");
  throw SystemError("Slurm reported the job state '" + s.substr(0, 64) +
                    "', which batchai does not know; see docs/slurm.md for the states it maps.");
}

}  // namespace batchai::slurm
