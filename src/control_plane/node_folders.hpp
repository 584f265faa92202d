// A node's folder as every engine lays it out (mounts, jobs, shared; node_layout.hpp) and what a
// node adds to the environment of the commands it runs.
#pragma once
#include <filesystem>
#include <map>
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/node_layout.hpp"

namespace batchai::control_plane::detail {

// Makes a node folder (mounts, jobs, shared) and links the cluster's nodeSetup mountVolumes
// beneath its mount root; idempotent, so a crash or a second call is harmless.
void ensure_node_folder(const NodeLayout& layout, const Json& cluster_doc, const std::filesystem::path& node);
// The node's mount root and job temp folder (AZ_BATCHAI_MOUNT_ROOT, AZ_BATCHAI_JOB_TEMP_DIR).
std::map<std::string, std::string> node_mount_environment(const std::filesystem::path& node);

}  // namespace batchai::control_plane::detail
