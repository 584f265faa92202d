// `batchai cluster node ...` and `cluster file list`, and the node simulation every reconcile
// steps: allocation, preparation (mounts, setup task), resize and removal of nodes.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/options.hpp"

namespace batchai::control_plane {

class ControlPlane;

class Nodes {
 public:
  explicit Nodes(ControlPlane& cp) : cp_(cp) {}

  Json list(const WorkspaceRef& ref, const std::string& cluster);
  // Runs --exec in the node's folder and environment; output lines go to `out`. Returns nothing
  // printable (exit 0 whatever the command's exit code, as the original).
  void exec(const WorkspaceRef& ref, const std::string& cluster, const NodeExecOptions& options);
  Json file_list(const WorkspaceRef& ref, const std::string& cluster, const std::string& path, int expiry_minutes);

  // --- for the other services ---
  // Part of ControlPlane::reconcile: steps every cluster with pending node work to `now_us`.
  void reconcile(std::int64_t now_us);
  // Mounts, setup tasks and folders for the cluster's preparing and idle nodes.
  void start_work(std::int64_t cluster_row_id);
  // Kills the setup task still running on the node folder `node` (its process group, recorded at
  // spawn; checked by the process's working folder so a reused pid is never hit).
  void stop_setup_task(const std::filesystem::path& node);

 private:
  ControlPlane& cp_;
};

}  // namespace batchai::control_plane
