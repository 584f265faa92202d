// Path containment checks and the on-disk layout helpers.
#include "batchai/control_plane/storage_paths.hpp"

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/common/json_util.hpp"
#include "batchai/common/log.hpp"
#include "batchai/control_plane/cluster_rules.hpp"
#include "batchai/control_plane/node_layout.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {
namespace {

bool is_within(const fs::path& candidate, const fs::path& root) {
  auto c = candidate.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++c) {
    if (r->empty()) continue;  // trailing separator
    if (c == candidate.end() || *c != *r) return false;
  }
  return true;
}

}  // namespace

std::string check_relative_path(const std::string& relative, const std::string& what) {
  if (relative.empty()) throw InvalidArgument(what + " cannot be empty.");
  fs::path p(relative);
  if (p.is_absolute())
    throw InvalidArgument(what + " '" + relative + "' must be relative; remove the leading '/'.");
  fs::path normal;
  for (const auto& part : p) {
    if (part == "..")
      throw InvalidArgument(what + " '" + relative + "' must not contain '..': it would leave its root folder.");
    if (part.empty() || part == ".") continue;
    normal /= part;
  }
  return normal.empty() ? std::string(".") : normal.generic_string();
}

fs::path resolve_inside(const fs::path& root, const std::string& relative, const std::string& what) {
  if (relative.empty() || relative == "." || relative == "/") {
    if (relative == "/") return root;
    return root;
  }
  std::string normal = check_relative_path(relative, what);
  fs::path target = normal == "." ? root : root / normal;
  std::error_code ec;
  fs::path real_root = fs::weakly_canonical(root, ec);
  if (ec) real_root = root;
  // weakly_canonical resolves every existing prefix, symlinks included.
  fs::path real_target = fs::weakly_canonical(target, ec);
  if (ec || !is_within(real_target, real_root))
    throw InvalidArgument(what + " '" + relative +
                          "' resolves outside its share or container (through a symbolic link); use a path "
                          "inside it.");
  return target;
}

fs::path NodeLayout::storage_account(const std::string& account) const {
  return home_ / "storage" / to_lower(account);
}
fs::path NodeLayout::share(const std::string& account, const std::string& share) const {
  return storage_account(account) / "shares" / to_lower(share);
}
fs::path NodeLayout::container(const std::string& account, const std::string& container) const {
  return storage_account(account) / "blobs" / to_lower(container);
}
fs::path NodeLayout::file_server(const std::string& rg, const std::string& ws, const std::string& fs_name) const {
  return workspace_file_servers(rg, ws) / to_lower(fs_name);
}
fs::path NodeLayout::workspace_clusters(const std::string& rg, const std::string& ws) const {
  return home_ / "clusters" / to_lower(rg) / to_lower(ws);
}
fs::path NodeLayout::workspace_file_servers(const std::string& rg, const std::string& ws) const {
  return home_ / "fileservers" / to_lower(rg) / to_lower(ws);
}
fs::path NodeLayout::cluster(const std::string& rg, const std::string& ws, const std::string& cluster) const {
  return workspace_clusters(rg, ws) / to_lower(cluster);
}

std::string expand_mount_root(const std::string& text, const fs::path& mount_root) {
  std::string out = text;
  for (const std::string token : {"${AZ_BATCHAI_MOUNT_ROOT}", "$AZ_BATCHAI_MOUNT_ROOT"}) {
    for (std::size_t pos = out.find(token); pos != std::string::npos; pos = out.find(token, pos)) {
      // "$AZ_BATCHAI_MOUNT_ROOTX" is another variable: only replace at a name boundary.
      std::size_t end = pos + token.size();
      if (token[1] != '{' && end < out.size() && (std::isalnum(static_cast<unsigned char>(out[end])) || out[end] == '_')) {
        pos = end;
        continue;
      }
      out.replace(pos, token.size(), mount_root.string());
      pos += mount_root.string().size();
    }
  }
  return out;
}

void link_mount_volumes(const NodeLayout& layout, const Json& mv, const fs::path& mount_root) {
  if (!mv.is_object()) return;
  std::error_code ec;
  auto link = [&](const std::string& relative, const fs::path& target) {
    const fs::path where = mount_root / check_relative_path(relative, "Relative mount path");
    fs::create_directories(where.parent_path(), ec);
    if (fs::exists(fs::symlink_status(where, ec))) return;
    fs::create_directories(target, ec);
    fs::create_directory_symlink(target, where, ec);
    if (ec) log::warning("Cannot mount '" + relative + "' under " + mount_root.string() + ": " + ec.message());
  };
  auto each = [&](const char* list, auto fn) {
    if (mv.contains(list) && mv[list].is_array())
      for (const auto& m : mv[list]) fn(m, value_or<std::string>(m, "relativeMountPath", ""));
  };
  each("azureFileShares", [&](const Json& m, const std::string& rel) {
    if (auto parsed = parse_azure_file_url(value_or<std::string>(m, "azureFileUrl", "")))
      link(rel, layout.share(value_or<std::string>(m, "accountName", parsed->first), parsed->second));
  });
  each("azureBlobFileSystems", [&](const Json& m, const std::string& rel) {
    link(rel, layout.container(value_or<std::string>(m, "accountName", ""), value_or<std::string>(m, "containerName", "")));
  });
  each("fileServers", [&](const Json& m, const std::string& rel) {
    auto id = parse_arm_id(value_or<std::string>(m.value("fileServer", Json()), "id", ""));
    if (!id || id->path.empty()) return;
    link(rel, layout.file_server_export(id->resource_group, id->name_of("workspaces").value_or(""), id->path.back().second));
  });
  each("unmanagedFileSystems", [&](const Json&, const std::string& rel) {
    fs::create_directories(mount_root / check_relative_path(rel, "Relative mount path"), ec);
  });
}

}  // namespace batchai::control_plane
