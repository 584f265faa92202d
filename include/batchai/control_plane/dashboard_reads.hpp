// Reads made for the dashboard of `batchai serve` (docs/dashboard.md "Dashboard"): small, bounded
// answers over the whole store (counts, one page of jobs with their place in the queue, the job
// on each node, a change version), read with field-limited queries so 10,000 jobs cost
// milliseconds, never whole documents. Read-only: nothing here changes the store but the reconcile
// each entry runs first, as every service entry does.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/confined_path.hpp"
#include "batchai/control_plane/jobs.hpp"
#include "batchai/control_plane/options.hpp"

namespace batchai::control_plane {

class ControlPlane;

struct DashboardCluster {
  std::string resource_group, workspace, name;
  std::string engine;  // ClusterEngine::engine_name()
  std::string vm_size, allocation_state;
  std::int64_t current_nodes = 0, target_nodes = 0;
  std::int64_t idle = 0, running = 0, preparing = 0, unusable = 0, leaving = 0;
};

struct DashboardExperiment {
  std::string resource_group, workspace, name;
  std::map<std::string, std::int64_t> job_counts;  // by state
};

struct DashboardOverview {
  std::string version;  // changes whenever a job's, cluster's or node's state does
  std::vector<WorkspaceRef> workspaces;
  std::vector<DashboardCluster> clusters;
  std::vector<DashboardExperiment> experiments;
  bool truncated = false;
};

struct DashboardJob {
  std::string name, state, cluster, tool_type;
  std::int64_t node_count = 0;
  std::optional<std::string> creation_time, start_time, end_time;
  std::optional<std::int64_t> exit_code;
  std::optional<std::int64_t> queue_position;  // queued jobs: 1-based, in the scheduler's order
  std::optional<std::string> wait_reason;      // queued jobs: why it has not started
};

struct DashboardJobPage {
  std::int64_t total = 0;                           // jobs matching the state filter
  std::map<std::string, std::int64_t> counts;       // every job of the experiment, by state
  std::vector<DashboardJob> jobs;                   // newest first
  std::string version;                              // changes whenever a job of the experiment changes state
};

struct DashboardNode {
  std::string node_id, state;
  std::optional<std::string> job_experiment, job_name;
  std::optional<std::int64_t> engine_job_id;  // the job's id in its engine's own queue
};

struct DashboardClusterNodes {
  std::string engine;  // ClusterEngine::engine_name()
  std::string allocation_state;
  std::vector<DashboardNode> nodes;
};

// A file named by a job's manifest, opened inside one of the job's (or its cluster's) mounted
// volumes.
struct DashboardMountFile {
  UniqueFd fd;
  std::uint64_t size = 0;
};

class DashboardReads {
 public:
  explicit DashboardReads(ControlPlane& cp) : cp_(cp) {}

  // Every read first brings simulated state up to now; with `ask_engines` also the state of the
  // clusters shown (overview) or of the experiment's unfinished jobs (jobs) from their engines
  // (Slurm: sinfo, squeue, within its bound), which a caller polling it should ration.
  DashboardOverview overview(std::size_t max_clusters, std::size_t max_experiments, bool ask_engines = false);
  // One page (`page` from 0) of `limit` jobs, newest first; `state` empty: every state.
  // NotFound when the experiment is not there.
  DashboardJobPage jobs(const WorkspaceRef& where, const std::string& experiment, const std::string& state,
                        std::int64_t page, std::int64_t limit, bool ask_engines = false);
  // The names of the experiment's `limit` newest jobs (newest first) and the state of each.
  std::vector<std::pair<std::string, std::string>> newest_jobs(const WorkspaceRef& where, const std::string& experiment,
                                                               std::int64_t limit);
  // The cluster's engine and its node rows (ordinal order, at most `limit`) with the job each one
  // runs. NotFound when the cluster is not there.
  DashboardClusterNodes cluster_nodes(const WorkspaceRef& where, const std::string& cluster, std::size_t limit);
  // The job's id in its engine's own queue, when an engine that schedules itself took it.
  std::optional<std::int64_t> engine_job_id(const JobRef& job);
  // `mount_path` (relative, as the trainer's manifest names it) beneath the job's mount root
  // (`job_root`) or its cluster's: resolved through the mount volumes' own folders only, confined
  // (no '..', no absolute path, no symlink out), a regular file of at most `max_bytes`. nullopt
  // for anything else, never an error.
  std::optional<DashboardMountFile> open_mount_file(const JobRef& job, bool job_root, const std::string& mount_path,
                                                    std::uint64_t max_bytes);

 private:
  ControlPlane& cp_;
};

}  // namespace batchai::control_plane
