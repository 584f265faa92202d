// Where simulated resources live on disk under $BATCHAI_HOME (the runtime mounts and runs jobs
// in these folders). Names in paths are lower-cased so lookups stay case-insensitive.
//
//   state.db                                         the SQLite store (WAL: state.db-wal, -shm)
//   storage/<account>/shares/<share>/...              Azure File share contents
//   storage/<account>/blobs/<container>/...           blob container contents ('/' in names = folders)
//   fileservers/<rg>/<ws>/<fs>/data/...               NFS export of a file server (mountPoint /mnt/data)
//   clusters/<rg>/<ws>/<cluster>/nodes/<nodeId>/      one simulated node:
//       mounts/                = $AZ_BATCHAI_MOUNT_ROOT; mounts/<relativeMountPath> is a symlink to the
//                                share/container/file-server folder (unmanaged: a plain local folder)
//       jobs/                  = $AZ_BATCHAI_JOB_TEMP_DIR (jobs/<job>/ = $AZ_BATCHAI_JOB_TEMP, with
//                                jobs/<job>/shared = $AZ_BATCHAI_SHARED_JOB_TEMP, jobs/<job>/mounts =
//                                $AZ_BATCHAI_JOB_MOUNT_ROOT)
//       shared/                node-wide scratch
//       .setup_exit            exit code of the node setup task once it finished
//       .setup_cmd             the setup task wrapper's log of what it ran
#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace batchai::control_plane {

class NodeLayout {
 public:
  explicit NodeLayout(std::filesystem::path home) : home_(std::move(home)) {}

  const std::filesystem::path& home() const { return home_; }
  std::filesystem::path database() const { return home_ / "state.db"; }
  std::filesystem::path storage_account(const std::string& account) const;
  std::filesystem::path share(const std::string& account, const std::string& share) const;
  std::filesystem::path container(const std::string& account, const std::string& container) const;
  std::filesystem::path file_server(const std::string& rg, const std::string& ws, const std::string& fs) const;
  std::filesystem::path file_server_export(const std::string& rg, const std::string& ws, const std::string& fs) const {
    return file_server(rg, ws, fs) / "data";
  }
  std::filesystem::path workspace_clusters(const std::string& rg, const std::string& ws) const;
  std::filesystem::path workspace_file_servers(const std::string& rg, const std::string& ws) const;
  std::filesystem::path cluster(const std::string& rg, const std::string& ws, const std::string& cluster) const;
  std::filesystem::path node(const std::string& rg, const std::string& ws, const std::string& cluster,
                             const std::string& node_id) const {
    return this->cluster(rg, ws, cluster) / "nodes" / node_id;
  }
  static std::filesystem::path mount_root(const std::filesystem::path& node_dir) { return node_dir / "mounts"; }
  static std::filesystem::path job_temp_dir(const std::filesystem::path& node_dir) { return node_dir / "jobs"; }
  static std::filesystem::path shared_dir(const std::filesystem::path& node_dir) { return node_dir / "shared"; }

 private:
  std::filesystem::path home_;
};

// Mounts every volume of a mountVolumes object under `mount_root` (a node's $AZ_BATCHAI_MOUNT_ROOT or a
// job's $AZ_BATCHAI_JOB_MOUNT_ROOT): Azure File shares, blob containers and file-server exports as
// symlinks to their folders (created when missing), unmanaged file systems as plain folders.
// Idempotent; relative mount paths that escape the root are refused.
void link_mount_volumes(const NodeLayout& layout, const nlohmann::json& mount_volumes,
                        const std::filesystem::path& mount_root);

// Replaces $AZ_BATCHAI_MOUNT_ROOT and ${AZ_BATCHAI_MOUNT_ROOT} (only those) in `text`.
std::string expand_mount_root(const std::string& text, const std::filesystem::path& mount_root);

}  // namespace batchai::control_plane
