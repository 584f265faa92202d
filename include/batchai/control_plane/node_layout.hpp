// Where resources live on disk (the runtime mounts and runs jobs in these folders). Two roots: the
// home ($BATCHAI_HOME) on the login host's own disk, with the store and local bookkeeping, and the
// shared folder ($BATCHAI_SHARED_DIR, default the home) that every node of a Slurm cluster mounts at
// the same path, with everything a job touches. Names in paths are lower-cased so lookups stay
// case-insensitive.
//
// home:
//   state.db                                         the SQLite store (WAL: state.db-wal, -shm); never
//                                                    opened from another host (docs/adr/0006)
//   jobs/<key>/                                      a simulated job's supervisor lock, log, cgroup
// shared:
//   jobs/<key>/                                      a Slurm job's exchange folder (run_exchange.hpp)
//   storage/<account>/shares/<share>/...              Azure File share contents
//   storage/<account>/blobs/<container>/...           blob container contents ('/' in names = folders)
//   fileservers/<rg>/<ws>/<fs>/data/...               NFS export of a file server (mountPoint /mnt/data)
//   clusters/<rg>/<ws>/<cluster>/nodes/<nodeId>/      one simulated node, laid out by runtime::NodeDir
//       (mount root, job folders, scratch); mount links are symlinks to the share/container/
//       file-server folder (unmanaged: a plain local folder)
//       .setup_exit            exit code of the node setup task once it finished
//       .setup_cmd             the setup task wrapper's log of what it ran
#pragma once
#include <filesystem>
#include <string>

#include <vector>

#include <nlohmann/json.hpp>


namespace batchai::control_plane {

class NodeLayout {
 public:
  explicit NodeLayout(std::filesystem::path home) : home_(home), shared_(std::move(home)) {}
  NodeLayout(std::filesystem::path home, std::filesystem::path shared)
      : home_(std::move(home)), shared_(std::move(shared)) {}

  const std::filesystem::path& home() const { return home_; }
  const std::filesystem::path& shared() const { return shared_; }
  std::filesystem::path database() const { return home_ / "state.db"; }
  // A job's bookkeeping folder on this host (supervisor lock, log, cgroup), named by its job key.
  std::filesystem::path job_state(const std::string& job_key) const { return home_ / "jobs" / job_key; }
  // A Slurm job's exchange folder on the shared folder, named by its job key.
  std::filesystem::path job_exchange(const std::string& job_key) const { return shared_ / "jobs" / job_key; }
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

 private:
  std::filesystem::path home_;
  std::filesystem::path shared_;
};

}  // namespace batchai::control_plane
