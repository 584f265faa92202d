// Mount links: what a mount volume becomes on a node (a symlink to its share, container or file
// server export, or a plain folder). The control plane computes them with its mount rules and
// hands them down; the runtime only makes them, confined beneath the mount root.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace batchai::runtime {

struct MountLink {
  std::string relative_path;     // beneath the mount root, normalised (no '..', not absolute)
  std::filesystem::path target;  // the folder to link to; empty: a plain folder (unmanaged file system)
  std::string source;            // "the Azure File share 's' of storage account 'a'", for messages
  std::string fix;               // what to do when the target is missing
};

// Makes every link under `mount_root` (created when missing; untouched when there is none). Idempotent: an existing name is an
// earlier mount. A missing target is NotFound (code MountSourceNotFound), as on the service; a
// path that leads out of the root through a symlink is InvalidArgument.
void make_mount_links(const std::vector<MountLink>& links, const std::filesystem::path& mount_root);

}  // namespace batchai::runtime
