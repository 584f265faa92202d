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
#include <vector>

#include "batchai/common/clock.hpp"
#include "batchai/control_plane/clusters.hpp"
#include "batchai/control_plane/experiments.hpp"
#include "batchai/control_plane/file_servers.hpp"
#include "batchai/control_plane/groups.hpp"
#include "batchai/control_plane/jobs.hpp"
#include "batchai/control_plane/node_layout.hpp"
#include "batchai/control_plane/nodes.hpp"
#include "batchai/control_plane/storage_accounts.hpp"
#include "batchai/control_plane/storage_data.hpp"
#include "batchai/control_plane/workspaces.hpp"

namespace batchai {
class ProcessLauncher;
}

namespace batchai::control_plane {

class Store;

// Simulated durations and the on-disk home; from the environment by default:
// BATCHAI_HOME (default ~/.batchai), BATCHAI_SIM_DELAY_S (default 3 s; 0 in tests).
struct Settings {
  std::filesystem::path home;
  Micros provisioning_delay{std::chrono::seconds(3)};
  Micros node_preparation_delay{std::chrono::seconds(3)};
  static Settings from_environment();
};

// The implementations the control plane works through, chosen once by the composition root
// (src/cli/compose.cpp) or by a test; passed on to the services.
struct Services {
  std::shared_ptr<Clock> clock;
  // Setup tasks, job supervisors and their processes, node exec, ssh-keygen, signals to process
  // groups. Null: every operation that starts or signals a process refuses (SystemError).
  std::shared_ptr<ProcessLauncher> launcher;
};

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

  // Brings simulated state up to clock().now(): provisioning, allocation, node preparation,
  // then the job scheduler. Each service entry point calls it once. It asks Slurm nothing.
  void reconcile();
  // The same, after the Slurm-backed clusters named (row ids) and their jobs were read from Slurm:
  // for the commands that show or change them, within a short budget, and not at all while their
  // controller backs off after it did not answer (docs/slurm.md, "When the controller does not answer").
  void reconcile(const std::vector<std::int64_t>& slurm_clusters);
  // How many times reconcile() ran (tests: one command reconciles once).
  std::uint64_t reconcile_count() const { return reconciles_; }

  // --- shared by the services ---
  const Settings& settings() const { return settings_; }
  Store& store() { return *store_; }
  const Clock& clock() const { return *clock_; }
  const NodeLayout& layout() const { return layout_; }
  ProcessLauncher& launcher();
  // Removes the folders deletes queued in the trash table (after their transaction committed).
  void empty_trash();

 private:
  Settings settings_;
  std::shared_ptr<Store> store_;
  std::shared_ptr<Clock> clock_;
  NodeLayout layout_;
  std::shared_ptr<ProcessLauncher> launcher_;
  std::uint64_t reconciles_ = 0;
  Groups groups_{*this};
  StorageAccounts storage_accounts_{*this};
  StorageData storage_{*this};
  Workspaces workspaces_{*this};
  Experiments experiments_{*this};
  Clusters clusters_{*this};
  Nodes nodes_{*this};
  FileServers file_servers_{*this};
  Jobs jobs_{*this};
};

}  // namespace batchai::control_plane
