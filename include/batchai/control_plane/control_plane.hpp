// The local Batch AI service: every resource operation the CLI can ask for. Results are the
// documents the 2018-05-01 service returned (camelCase keys, all model keys present, nulls
// kept, resourceGroup injected), as nlohmann::json, ready for the CLI's output layer.
// Every call first reconciles simulated state (provisioning, node states, queues) to now().
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/clock.hpp"
#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/node_layout.hpp"
#include "batchai/control_plane/options.hpp"

namespace batchai {
class ProcessLauncher;
}

namespace batchai::control_plane {

class Store;
class Jobs;

// Simulated durations and the on-disk home; from the environment by default:
// BATCHAI_HOME (default ~/.batchai), BATCHAI_SIM_DELAY_S (default 3 s; 0 in tests).
struct Settings {
  std::filesystem::path home;
  Micros provisioning_delay{std::chrono::seconds(3)};
  Micros node_preparation_delay{std::chrono::seconds(3)};
  static Settings from_environment();
};

// The implementations the control plane works through, chosen once by the composition root
// (src/cli/compose.cpp) or by a test; passed on to the jobs service and the node code.
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
  // Opens (creating if needed) the SQLite store under settings.home.
  static std::unique_ptr<ControlPlane> open(Settings settings, Services services);
  // Without a process launcher: for tools that only read and write resources (benchmarks).
  static std::unique_ptr<ControlPlane> open(Settings settings, std::shared_ptr<Clock> clock);

  const Settings& settings() const { return settings_; }
  Store& store() { return *store_; }
  const Clock& clock() const { return *clock_; }

  // az group ...
  Json group_create(const std::string& name, const std::string& location,
                    const std::optional<Json>& tags);
  Json group_show(const std::string& name);
  Json group_list();
  bool group_exists(const std::string& name);
  void group_delete(const std::string& name);  // cascades to everything inside

  // az storage account ... (accounts live in a resource group; names are global)
  Json storage_account_create(const std::string& resource_group, const std::string& name,
                              const std::optional<std::string>& location, const std::string& sku,
                              const std::string& kind);
  Json storage_account_show(const std::optional<std::string>& resource_group, const std::string& name);
  Json storage_account_list(const std::optional<std::string>& resource_group);
  void storage_account_delete(const std::optional<std::string>& resource_group, const std::string& name);
  Json storage_account_keys(const std::optional<std::string>& resource_group, const std::string& name);

  // az storage share/directory/file/container/blob ... authenticate with the account key when one
  // is given (wrong key → error), like the data-plane commands of az.
  struct StorageAuth {
    std::string account_name;
    std::optional<std::string> account_key;
  };
  Json share_create(const StorageAuth& auth, const std::string& share);
  Json share_delete(const StorageAuth& auth, const std::string& share);
  Json share_list(const StorageAuth& auth);
  Json share_exists(const StorageAuth& auth, const std::string& share);
  Json directory_create(const StorageAuth& auth, const std::string& share, const std::string& path);
  Json directory_delete(const StorageAuth& auth, const std::string& share, const std::string& path);
  Json directory_list(const StorageAuth& auth, const std::string& share, const std::string& path);
  Json file_upload(const StorageAuth& auth, const std::string& share, const std::filesystem::path& source,
                   const std::optional<std::string>& path);
  void file_download(const StorageAuth& auth, const std::string& share, const std::string& path,
                     const std::filesystem::path& dest);
  Json file_list(const StorageAuth& auth, const std::string& share, const std::optional<std::string>& path);
  Json file_delete(const StorageAuth& auth, const std::string& share, const std::string& path);
  Json container_create(const StorageAuth& auth, const std::string& container);
  Json container_delete(const StorageAuth& auth, const std::string& container);
  Json container_list(const StorageAuth& auth);
  Json blob_upload(const StorageAuth& auth, const std::string& container, const std::filesystem::path& file,
                   const std::string& name);
  Json blob_upload_batch(const StorageAuth& auth, const std::string& destination,
                         const std::filesystem::path& source, const std::optional<std::string>& pattern);
  void blob_download(const StorageAuth& auth, const std::string& container, const std::string& name,
                     const std::filesystem::path& file);
  Json blob_list(const StorageAuth& auth, const std::string& container, const std::optional<std::string>& prefix);
  Json blob_delete(const StorageAuth& auth, const std::string& container, const std::string& name);
  // Folder holding a share's or container's contents (mount targets for nodes and jobs).
  std::filesystem::path share_root(const std::string& account, const std::string& share) const;
  std::filesystem::path container_root(const std::string& account, const std::string& container) const;

  // az batchai workspace ...
  Json workspace_create(const std::string& resource_group, const std::string& name,
                        const std::optional<std::string>& location);
  Json workspace_show(const WorkspaceRef& ref);
  Json workspace_list(const std::optional<std::string>& resource_group);
  void workspace_delete(const WorkspaceRef& ref);

  // az batchai experiment ...
  Json experiment_create(const WorkspaceRef& ref, const std::string& name);
  Json experiment_show(const WorkspaceRef& ref, const std::string& name);
  Json experiment_list(const WorkspaceRef& ref);
  void experiment_delete(const WorkspaceRef& ref, const std::string& name);

  // az batchai cluster ...
  Json cluster_create(const ClusterCreateOptions& options);
  Json cluster_show(const WorkspaceRef& ref, const std::string& name);
  Json cluster_list(const WorkspaceRef& ref);
  Json cluster_resize(const WorkspaceRef& ref, const std::string& name, int target);
  Json cluster_auto_scale(const WorkspaceRef& ref, const std::string& name, int min_nodes, int max_nodes);
  void cluster_delete(const WorkspaceRef& ref, const std::string& name);
  Json cluster_node_list(const WorkspaceRef& ref, const std::string& cluster);
  // Runs --exec in the node's folder and environment; output lines go to `out`. Returns nothing
  // printable (exit 0 whatever the command's exit code, as the original).
  void cluster_node_exec(const WorkspaceRef& ref, const std::string& cluster, const NodeExecOptions& options);
  Json cluster_file_list(const WorkspaceRef& ref, const std::string& cluster, const std::string& path,
                         int expiry_minutes);

  // az batchai file-server ...
  std::optional<Json> file_server_create(const FileServerCreateOptions& options);  // nullopt with --no-wait
  Json file_server_show(const WorkspaceRef& ref, const std::string& name);
  Json file_server_list(const WorkspaceRef& ref);
  void file_server_delete(const WorkspaceRef& ref, const std::string& name);

  // az batchai list-usages
  Json list_usages(const std::string& location);

  // The jobs service: created with the control plane, so every command that deletes or
  // reconciles also ends, schedules and frees the jobs it affects.
  Jobs& jobs() { return *jobs_; }

  // Brings simulated state up to clock().now(): provisioning, allocation, node preparation,
  // then the job scheduler.
  void reconcile();

  // --- for the jobs service and the node code ---
  const NodeLayout& layout() const { return layout_; }
  ProcessLauncher& launcher();
  // Nodes an auto-scale cluster should have for its queued + running work; the cluster grows or
  // shrinks (idle nodes only) towards it, clamped to [minimumNodeCount, maximumNodeCount].
  // Ignored for manual clusters. Call inside or outside a store transaction.
  void set_auto_scale_demand(std::int64_t cluster_row_id, int nodes);
  // Row id of a cluster (NotFound with the service's message when missing).
  std::int64_t cluster_row_id(const WorkspaceRef& ref, const std::string& name);
  // Recomputes a cluster's counters/allocation state and stored document from its node rows.
  void refresh_cluster(std::int64_t cluster_row_id);

 private:
  void reconcile_clusters(std::int64_t now_us);
  void reconcile_file_servers(std::int64_t now_us);
  void start_node_work(std::int64_t cluster_row_id);
  void empty_trash();
  // Inside a deleting transaction: ends the jobs on the workspace's clusters (also jobs of
  // other workspaces that run there) and in its experiments. `with` says what else went, e.g.
  // " with its resource group 'rg'" (or empty).
  void end_jobs_of_workspace(std::int64_t workspace_row_id, const std::string& workspace, const std::string& with);

  Settings settings_;
  std::shared_ptr<Store> store_;
  std::shared_ptr<Clock> clock_;
  NodeLayout layout_;
  std::shared_ptr<ProcessLauncher> launcher_;
  std::unique_ptr<Jobs> jobs_;
};

}  // namespace batchai::control_plane
