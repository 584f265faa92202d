// A job's processes seen from outside its supervisor: the bookkeeping folder and supervisor
// lock, ending every process of the job (kill and confirm), freeing its nodes only then, and
// starting the supervisor in a clean environment.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "batchai/control_plane/node_layout.hpp"
#include "store/nodes.hpp"
#include "store/store.hpp"

namespace batchai::control_plane {
class Context;
}

namespace batchai::control_plane::jobs_detail {

// Nodes of the job back to idle (inside a write transaction), but only once every process of
// the job is confirmed gone (end_job_processes, waiting up to `limit`): while one lives the
// nodes stay the job's, and the scheduler tries again. Returns the clusters touched.
std::vector<std::int64_t> release_nodes(Store& store, const std::string& job_key,
                                        std::chrono::milliseconds limit = std::chrono::seconds(5));
// The same without looking for the job's processes: free_nodes (store/nodes.hpp), for the runner
// that has just confirmed them gone itself (RunResult::processes_gone).
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
void kill_job_processes(const Context& cx, const std::string& job_key, std::optional<std::int64_t> sup_pid);
// Starts `batchai _supervise --job-key K` detached.
void spawn_supervisor(const Context& cx, const std::string& job_key);
// The file that says a supervisor of the job is being started (until it holds its lock).
inline constexpr const char* kSupervisorStartingFile = "supervisor.starting";
// True when this caller is to start the job's supervisor: nobody else marked it as being started
// in the last few seconds (a start that died is retried after that). Marks it.
bool claim_supervisor_start(const NodeLayout& layout, const std::string& job_key);

}  // namespace batchai::control_plane::jobs_detail
