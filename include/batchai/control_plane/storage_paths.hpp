// Safe resolution of user-given storage paths (file share paths, blob names, mount paths):
// a path may never leave its share/container root, whether by "..", an absolute path or a
// symlink that resolves outside the root.
#pragma once
#include <filesystem>
#include <string>

namespace batchai::control_plane {

// root / relative, after checking `relative` (throws InvalidArgument naming `what`):
// no absolute path, no ".." component, and no existing prefix that resolves (through symlinks)
// outside root. Empty and "." mean the root itself.
std::filesystem::path resolve_inside(const std::filesystem::path& root, const std::string& relative,
                                     const std::string& what);

// The same checks for a relative mount path (non-empty, no "..", not absolute); returns it normalised.
std::string check_relative_path(const std::string& relative, const std::string& what);

}  // namespace batchai::control_plane
