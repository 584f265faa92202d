// Making mount links beneath a mount root, through batchai::ConfinedDir.
#include "batchai/runtime/mount_links.hpp"

#include "batchai/common/confined_path.hpp"
#include "batchai/common/errors.hpp"

namespace fs = std::filesystem;

namespace batchai::runtime {

void make_mount_links(const std::vector<MountLink>& links, const fs::path& mount_root) {
  if (links.empty()) return;
  std::error_code ec;
  fs::create_directories(mount_root, ec);  // a folder the program names, not user data
  auto root = ConfinedDir::open(mount_root, "the mount root");
  if (!root) throw SystemError("Cannot create the mount root '" + mount_root.string() + "': " + ec.message());
  for (const auto& link : links) {
    if (link.target.empty()) {
      root->make_dirs(link.relative_path, "The relative mount path");
      continue;
    }
    const std::string rel = root->check(link.relative_path, "The relative mount path");
    if (root->lstat(rel, "The relative mount path")) continue;
    // A missing share or container fails the mount instead of being created here.
    if (!fs::is_directory(link.target))
      throw NotFound("Cannot mount " + link.source + " at '" + rel + "': it does not exist. " + link.fix,
                     "MountSourceNotFound");
    const auto slash = rel.rfind('/');
    if (slash != std::string::npos) root->make_dirs(rel.substr(0, slash), "The relative mount path");
    root->make_symlink(rel, "The relative mount path", link.target);
  }
}

}  // namespace batchai::runtime
