// A simulated node's preparation: its folder with the cluster's mounts, and the cluster's setup
// task, run detached in the node's environment; its exit code lands in the node folder.
#pragma once
#include <filesystem>
#include <string>

#include "batchai/common/process.hpp"
#include "store/rows.hpp"

namespace batchai::control_plane::simulated {

// Makes the node folder with its mounts; false (with .mount_error written) when a volume cannot
// be mounted (a missing share, container or file server).
bool mount_node(const NodeLayout& layout, const Json& cluster_doc, const std::filesystem::path& node);
// Starts the setup task on the node (session leader, pid in .setup_pid; exit code in .setup_exit).
void spawn_setup_task(ProcessLauncher& launcher, const detail::ClusterRow& cluster, const std::string& node_id,
                      const std::filesystem::path& node);
// Kills the setup task still running on the node folder (its process group, checked by its
// working folder so a reused pid is never hit).
void stop_setup_task(ProcessLauncher& launcher, const std::filesystem::path& node);

}  // namespace batchai::control_plane::simulated
