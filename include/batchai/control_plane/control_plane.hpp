// The local Batch AI service: the store, the implementations it works through, and one service
// per resource (groups, storage, workspaces and experiments, clusters and nodes, file servers,
// jobs). Results are the documents the 2018-05-01 service returned (camelCase keys, all model
// keys present, nulls kept, resourceGroup injected), as nlohmann::json, ready for the CLI's
// output layer. Each service entry point reconciles simulated state (provisioning, node states,
// queues) to now() once; services call each other through rows, never through these entries.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/clock.hpp"
#include "batchai/control_plane/clusters.hpp"
#include "batchai/control_plane/experiments.hpp"
#include "batchai/control_plane/file_servers.hpp"
#include "batchai/control_plane/groups.hpp"
#include "batchai/control_plane/jobs.hpp"
#include "batchai/control_plane/node_layout.hpp"
#include "batchai/control_plane/nodes.hpp"
#include "batchai/control_plane/settings.hpp"
#include "batchai/control_plane/storage_accounts.hpp"
#include "batchai/control_plane/storage_data.hpp"
#include "batchai/control_plane/workspaces.hpp"

namespace batchai {
class ProcessLauncher;
}

namespace batchai::control_plane {

class Store;

class AutoStorage;
class Engines;
struct ClusterScope;
struct Parts;

class ControlPlane {
 public:
  ControlPlane(Settings settings, std::shared_ptr<Store> store, Services services);
  ~ControlPlane();
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;
  // Opens (creating if needed) the SQLite store under settings.home.
  static std::unique_ptr<ControlPlane> open(Settings settings, Services services);
  // Without a process launcher: for tools that only read and write resources (benchmarks).
  static std::unique_ptr<ControlPlane> open(Settings settings, std::shared_ptr<Clock> clock);

  // The services, made with the control plane: every command that deletes or reconciles also
  // ends, schedules and frees the jobs it affects.
  Groups& groups() { return groups_; }
  StorageAccounts& storage_accounts() { return storage_accounts_; }
  StorageData& storage() { return storage_; }
  Workspaces& workspaces() { return workspaces_; }
  Experiments& experiments() { return experiments_; }
  Clusters& clusters() { return clusters_; }
  Nodes& nodes() { return nodes_; }
  FileServers& file_servers() { return file_servers_; }
  Jobs& jobs() { return jobs_; }

  // Body of `batchai _supervise --job-key K` (a job on a simulated cluster; jobs/supervisor.hpp):
  // waits for nodes, runs the job, records the result. Returns the process exit code (0 unless
  // the supervisor itself could not work).
  int supervise(const std::string& job_key);

  // Brings simulated state up to clock().now(): provisioning, allocation, node preparation, then
  // the job scheduler. It asks no engine (Slurm) anything; the services scope that themselves.
  void reconcile();
  // The same, also asking the engines of the clusters in `scope` (reconciler.hpp), each within
  // its engine's bound: for the control plane's own read models.
  void reconcile(const ClusterScope& scope);
  // How many times a reconcile ran (tests: one command reconciles once).
  std::uint64_t reconcile_count() const;
  // Whether the store was opened read-only because the disk had no room for its WAL (every
  // write fails saying so): a long-lived holder opens again rather than keep this one.
  bool state_read_only() const;

  // --- for tools and tests ---
  const Settings& settings() const { return settings_; }
  Store& store() { return *store_; }
  const Clock& clock() const { return *clock_; }
  const NodeLayout& layout() const;
  ProcessLauncher& launcher();
  // Removes the folders deletes queued in the trash table (after their transaction committed).
  void empty_trash();
  // The engines (engine/cluster_engine.hpp): for the control plane's own read models.
  const Engines& engines() const;

 private:
  Settings settings_;
  std::shared_ptr<Store> store_;
  std::shared_ptr<Clock> clock_;
  std::shared_ptr<ProcessLauncher> launcher_;
  std::unique_ptr<Parts> parts_;  // context, engines, rules: made before the services that use them
  Groups groups_;
  StorageAccounts storage_accounts_;
  StorageData storage_;
  std::unique_ptr<AutoStorage> auto_storage_;  // through the three storage services above
  Workspaces workspaces_;
  Experiments experiments_;
  Clusters clusters_;
  Nodes nodes_;
  FileServers file_servers_;
  Jobs jobs_;
};

// Body of `batchai _slurm-run --job-key K`, the batch script of a job on a Slurm cluster, run by
// Slurm on the first node of the job's allocation, on a compute host. It never opens the store
// (docs/adr/0006): it works in the job's exchange folder under settings.shared_dir(). Returns the
// batch script's exit status. kCleanUp: the script's last step, after the runner ended however it
// ended; removes the job's containers the runner left (`batchai _slurm-cleanup`).
enum class SlurmRunStep { kRun, kCleanUp };
int run_in_slurm_allocation(const Settings& settings, const Services& services, const std::string& job_key,
                            SlurmRunStep step = SlurmRunStep::kRun);

}  // namespace batchai::control_plane
