// One run of a job, the steps every engine's runner shares (the simulation's supervisor.hpp, the
// runner inside an engine's allocation in engine/<engine>/): the launch plan over the nodes the engine placed the
// job on, the record of where the run's files are and which nodes it has, and the run itself
// inside the job's containment while a watcher stops every job process when the caller says so.
// Each runner only waits for or is given its nodes, then runs, then records the outcome its way.
#pragma once
#include <signal.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/process_tree.hpp"
#include "batchai/control_plane/node_layout.hpp"
#include "batchai/runtime/job.hpp"
#include "batchai/runtime/launch_plan.hpp"
#include "batchai/runtime/podman.hpp"
#include "batchai/runtime/supervisor.hpp"
#include "store/jobs.hpp"

namespace batchai {
class Clock;
class ProcessLauncher;
}  // namespace batchai

namespace batchai::control_plane {
class Context;
}

namespace batchai::control_plane::jobs_detail {

// What the engine decided: the job's nodes (nodes[0] the master) with their folders, hosts and
// GPUs, variables added to every task's base environment, and MPI ranks placed by node.
struct Placement {
  std::vector<runtime::NodeInfo> nodes;
  std::map<std::string, std::string> extra_env;
  bool mpi_map_by_node = false;
};

// The job's typed form and its launch plan, the job-level mounts made on every node.
struct PlacedRun {
  runtime::Job typed;
  runtime::LaunchPlan plan;
  std::vector<std::string> node_ids;  // the placement's, in order
  std::string registry_password;      // containerSettings' credentials, for the image pull only
};

// The plan over `placement` for the job in `job` (its document, secrets and mounts); throws what
// stops the job from launching (InvalidArgument, SystemError, a malformed document).
PlacedRun place_run(const NodeLayout& layout, const JobRow& job, Placement placement);

// A queued job becomes running, its executionInfo started at `now_us`.
void start_if_queued(JobRow& job, std::int64_t now_us);

// Where `job file list` looks: {"stdouterr": folder, "outputs": {id: folder}}.
Json run_folders(const runtime::LaunchPlan& plan);

// Records, before anything runs, where `job file list` looks (folders) and which nodes the run
// has (nodes); with `start_queued_at_us`, a job still queued is started then. Then prepares the
// run's folders (prepare_run_folders).
void record_run_place(Store& store, const std::string& job_key, PlacedRun& run,
                      std::optional<std::int64_t> start_queued_at_us = std::nullopt);
// Makes the stdouterr folder and lets the tasks append to what is written there before them.
void prepare_run_folders(PlacedRun& run);

// Why a run's watcher stopped the job; kNone while nothing did.
enum class StopReason { kNone, kSignalled, kTerminated, kDeleted, kRequeue, kNodesLost };

struct RunOptions {
  std::string who;           // the runner in log lines, e.g. "supervisor"
  std::string runner;        // in the job's error when the run itself fails: "The <runner> could not run the job"
  std::string log_note;      // written before "process containment: ..." in the execution log
  // With signals: each tick also waits for one of them (a signalfd; they must be blocked in every
  // thread), and one that comes stops the job (kSignalled). A tick ends early when the run does.
  const sigset_t* stop_signals = nullptr;
  // Asked at every tick (1, 2, ...) until the job stops; anything but kNone stops it. What it
  // throws is logged and taken as kNone.
  std::function<StopReason(int tick)> should_stop;
  // Called once the job's containment exists, before the execution log line and the first task.
  std::function<void(const JobProcesses&)> on_contained;
};

struct RunResult {
  runtime::JobOutcome outcome;
  StopReason stopped = StopReason::kNone;
  bool processes_gone = false;  // every process of the job was confirmed gone after the run
};

// What a run needs of the host it runs on; no store (a Slurm runner on a compute host has none).
struct RunHost {
  const Clock& clock;
  ProcessLauncher& launcher;
  std::string containment;              // Settings::containment
  std::filesystem::path state_folder;   // the run's bookkeeping
  std::filesystem::path shared_root;    // NodeLayout::shared(): where mount links may lead
  // The record of the run's containers (job_containers.hpp): they outlive the run, so that the
  // outcome is stored first; the runner then removes them (remove_job_containers).
  std::filesystem::path containers_record;
  // Where each node's container commands run (Slurm: srun --nodelist=<node> for nodes other than
  // the runner's); empty: all on this machine.
  std::vector<runtime::PodmanRoute> container_routes;
};
// The host of a simulated job's run: its state folder in the home.
RunHost run_host(const Context& cx, const std::string& job_key);

// Runs the plan with runtime::supervise_job inside the job's containment (the configured mode),
// with the watcher of `options` (SIGTERM to every job process when it stops the job, SIGKILL a
// second later; orphans reaped every second), then kills and confirms gone what is left.
RunResult run_contained(const RunHost& host, const std::string& job_key, const PlacedRun& run, const RunOptions& options);

}  // namespace batchai::control_plane::jobs_detail
