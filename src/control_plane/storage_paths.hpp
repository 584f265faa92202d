// Names and paths of storage as the control plane builds them: the storage account, share and
// container name rules (checked wherever a name becomes a folder), mount volume checks, and
// relative paths under their roots. The confinement itself is batchai/common/confined_path.hpp.
#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "batchai/common/confined_path.hpp"

namespace batchai::control_plane {

// 3-24 lower-case letters and digits (the service's rule); InvalidArgument otherwise.
void validate_storage_account_name(const std::string& account);
// Share and container names: 3-63 lower-case letters, digits and single hyphens, starting and
// ending with a letter or digit. `what` is "share" or "container". InvalidArgument otherwise.
void validate_share_name(const std::string& name, const char* what);

// Azure's limits on names inside a share or container, checked before a path is used; both
// count UTF-16 code units as Azure does. InvalidArgument "InvalidResourceName" for a name that is
// not valid UTF-8 (or holds NUL), "OutOfRangeInput" for one over a limit:
//  - a file or directory path: each segment at most 255 characters, the whole at most 2,048;
//  - a blob name: 1,024 characters and 254 segments at most.
// Both also keep each segment within 255 bytes, the longest name a folder here can hold.
void validate_file_path(const std::string& path);
void validate_blob_name(const std::string& name);

// Create-time checks of a wire-form mountVolumes object: account, share and container names,
// file-server ids and every relativeMountPath. Throws InvalidArgument naming the field.
void validate_mount_volumes(const nlohmann::json& mount_volumes);

// Uploads the user's local regular file `from` to `relative` in `dir`, atomically (replace_file);
// InvalidArgument "[Errno 2] ..." when it is no regular file (a fifo is refused, never read).
void store_local_file(const ConfinedDir& dir, const std::string& relative, const std::string& what,
                      const std::filesystem::path& from);
// Downloads an opened share/container file to the user's local path `out` (created or truncated).
void copy_to_local_file(const UniqueFd& in, const std::filesystem::path& out);

// root / relative after the confinement rule (no absolute path, no '..') and a check that no
// existing prefix resolves outside root through a symlink. Only for building paths to show;
// reading and writing go through ConfinedDir so nothing changes between check and use.
std::filesystem::path resolve_inside(const std::filesystem::path& root, const std::string& relative,
                                     const std::string& what);

// The same rule for a relative mount path (non-empty, no "..", not absolute); returns it normalised.
std::string check_relative_path(const std::string& relative, const std::string& what);

}  // namespace batchai::control_plane
