// Mount volumes: their create-time checks, and what each becomes beneath a node's mount root
// (links to the share, container or file-server folders of node_layout.hpp).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "batchai/control_plane/node_layout.hpp"
#include "batchai/runtime/job.hpp"
#include "batchai/runtime/mount_links.hpp"

namespace batchai::control_plane {

// Create-time checks of a wire-form mountVolumes object: account, share and container names,
// file-server ids and every relativeMountPath. Throws InvalidArgument naming the field.
void validate_mount_volumes(const nlohmann::json& mount_volumes);

// The same rule for a relative mount path (non-empty, no "..", not absolute); returns it normalised.
std::string check_relative_path(const std::string& relative, const std::string& what);

// What every mount volume becomes beneath a mount root: Azure File shares, blob
// containers and file-server exports link to their folders here, unmanaged file systems are plain
// folders. Relative mount paths are checked (InvalidArgument naming the field); the job
// supervisor hands these down in the launch plan (LaunchContext::job_mounts).
std::vector<runtime::MountLink> mount_links(const NodeLayout& layout, const runtime::MountVolumes& mount_volumes);

// Mounts every volume under `mount_root` (a node's $AZ_BATCHAI_MOUNT_ROOT): mount_links, then
// runtime::make_mount_links. Idempotent; a missing share or container is NotFound.
void link_mount_volumes(const NodeLayout& layout, const nlohmann::json& mount_volumes,
                        const std::filesystem::path& mount_root);

// Replaces $AZ_BATCHAI_MOUNT_ROOT and ${AZ_BATCHAI_MOUNT_ROOT} (only those) in `text`.
std::string expand_mount_root(const std::string& text, const std::filesystem::path& mount_root);

}  // namespace batchai::control_plane
