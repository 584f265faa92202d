// The user's own files: uploads into a share or container and downloads out of one, and the
// paths shown for files inside them.
#pragma once
#include <filesystem>
#include <string>

#include "batchai/common/confined_path.hpp"

namespace batchai::control_plane {

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

}  // namespace batchai::control_plane
