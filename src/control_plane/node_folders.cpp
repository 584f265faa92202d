#include "node_folders.hpp"
#include "node_mounts.hpp"

#include "batchai/runtime/node_dir.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane::detail {

void ensure_node_folder(const NodeLayout& layout, const Json& doc, const fs::path& node) {
  std::error_code ec;
  const runtime::NodeDir dir(node);
  for (const auto& sub : {dir.mounts(), dir.jobs(), dir.shared()}) fs::create_directories(sub, ec);
  Json mv = doc.contains("nodeSetup") && doc["nodeSetup"].is_object() ? doc["nodeSetup"].value("mountVolumes", Json())
                                                                       : Json();
  link_mount_volumes(layout, mv, dir.mounts());
}

std::map<std::string, std::string> node_mount_environment(const fs::path& node) {
  const runtime::NodeDir dir(node);
  return {{"AZ_BATCHAI_MOUNT_ROOT", dir.mounts().string()}, {"AZ_BATCHAI_JOB_TEMP_DIR", dir.jobs().string()}};
}

}  // namespace batchai::control_plane::detail
