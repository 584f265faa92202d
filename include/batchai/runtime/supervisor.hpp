// The job supervisor's core: executes a LaunchPlan with a ProcessLauncher — folders, hostfile,
// required programs, job preparation on every node, the main tasks, maxWallClockTime — and
// reports the outcome. Independent of the store: state changes go through a callback.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/common/process.hpp"
#include "batchai/runtime/launch_plan.hpp"

namespace batchai::runtime {

struct JobOutcome {
  bool succeeded = false;
  std::optional<int> exit_code;  // null when the job failed before its main process ran
  Json errors = nullptr;         // [BatchAIError] ({code, message, details}) or null
};

struct SupervisorOptions {
  std::chrono::milliseconds max_wall_clock{std::chrono::hours(24 * 7)};
  std::chrono::milliseconds kill_grace{2000};  // SIGTERM -> SIGKILL delay when stopping tasks
  // The longest a wait for the tasks blocks before the wall clock is looked at again (a task's
  // exit ends the wait at once).
  std::chrono::milliseconds longest_wait{1000};
  // Called with "preparing" (job preparation started), "running" (main tasks started) and
  // "succeeded"/"failed" (with the outcome) so the caller can record state.
  std::function<void(const std::string& state, const JobOutcome* outcome)> record;
  // Every process of the job beyond the task groups (its cgroup, reparented orphans, ranks in
  // their own groups): stopping tasks that still run sends SIGTERM and, after kill_grace, SIGKILL
  // there too. What a job leaves behind once all its tasks ended is the caller's to kill.
  std::function<void(int signal)> signal_job;
  // Bytes the job's user may still write on the filesystem holding a folder (statvfs when
  // empty; tests inject). A failed job whose folders' filesystem is full says so.
  std::function<std::uintmax_t(const std::filesystem::path&)> free_space;
};

// Below this many free bytes a filesystem counts as full when a job fails.
inline constexpr std::uintmax_t kFullFilesystemBytes = 1u << 20;

// Runs the whole plan and returns how it ended; never throws for job-level failures (missing
// programs, preparation failures, timeouts, non-zero exits): those become the outcome.
JobOutcome supervise_job(const LaunchPlan& plan, ProcessLauncher& launcher, const SupervisorOptions& options);

// True when `program` (a name on PATH, or a path) exists and is executable.
bool program_available(const std::string& program, const std::map<std::string, std::string>& env);

}  // namespace batchai::runtime
