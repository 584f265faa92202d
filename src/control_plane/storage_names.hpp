// The name rules of storage as the service checks them: storage accounts, shares, containers,
// and paths and blob names inside them. Checked wherever a name becomes a folder
// (NodeLayout::storage_account/share/container); the confinement itself is
// batchai/common/confined_path.hpp.
#pragma once
#include <string>

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

}  // namespace batchai::control_plane
