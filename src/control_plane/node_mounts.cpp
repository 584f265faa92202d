// Mount volumes: their create-time checks and what each becomes beneath a node's mount root.
#include "node_mounts.hpp"

#include <algorithm>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/common/json_util.hpp"
#include "mount_rules.hpp"
#include "storage_names.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {
namespace {

// A resource group taken from a file-server id: the group-name characters, never a path step.
void validate_group_component(const std::string& name, const std::string& field) {
  bool ok = !name.empty() && name.size() <= 90 && name.back() != '.' &&
            std::all_of(name.begin(), name.end(), [](unsigned char c) {
              return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '(' || c == ')';
            });
  if (!ok) throw InvalidArgument(field + ": the resource group '" + name + "' is not a valid resource group name.");
}

struct FileServerRef {
  std::string resource_group, workspace, name;
};

FileServerRef file_server_of(const std::string& id, const std::string& field) {
  auto parsed = parse_arm_id(id);
  if (!parsed || parsed->path.empty())
    throw InvalidArgument(field + ": '" + id + "' is not the ARM id of a file server.");
  FileServerRef ref{parsed->resource_group, parsed->name_of("workspaces").value_or(""), parsed->path.back().second};
  validate_group_component(ref.resource_group, field);
  validate_resource_name(ref.workspace, "workspace_name");
  validate_resource_name(ref.name, "file_server_name");
  return ref;
}

// (account, share) of an azureFileShares entry: accountName when given, else the URL's host.
std::pair<std::string, std::string> share_of(const std::string& account, const std::string& url,
                                             const std::string& field) {
  auto parsed = parse_azure_file_url(url);
  if (!parsed) throw InvalidArgument(field + ": ill-formed Azure File URL '" + url + "'.");
  return {account.empty() ? parsed->first : account, parsed->second};
}

FileServerRef file_server_of(const Json& mount, const std::string& field) {
  return file_server_of(value_or<std::string>(mount.value("fileServer", Json()), "id", ""), field);
}

std::pair<std::string, std::string> share_of(const Json& mount, const std::string& field) {
  return share_of(value_or<std::string>(mount, "accountName", ""), value_or<std::string>(mount, "azureFileUrl", ""), field);
}

std::string field_of(const char* list, std::size_t i) {
  return std::string("mountVolumes.") + list + "[" + std::to_string(i) + "]";
}

template <typename F>
void each_mount(const Json& mv, const char* list, F fn) {
  if (!mv.is_object() || !mv.contains(list) || !mv[list].is_array()) return;
  std::size_t i = 0;
  for (const auto& m : mv[list]) fn(m, field_of(list, i++));
}

}  // namespace

void validate_mount_volumes(const Json& mv) {
  auto relative = [](const Json& m, const std::string& field) {
    check_relative_path(value_or<std::string>(m, "relativeMountPath", ""), field + ".relativeMountPath");
  };
  each_mount(mv, "azureFileShares", [&](const Json& m, const std::string& field) {
    auto [account, share] = share_of(m, field);
    validate_storage_account_name(to_lower(account));
    validate_share_name(share, "share");
    relative(m, field);
  });
  each_mount(mv, "azureBlobFileSystems", [&](const Json& m, const std::string& field) {
    validate_storage_account_name(to_lower(value_or<std::string>(m, "accountName", "")));
    validate_share_name(value_or<std::string>(m, "containerName", ""), "container");
    relative(m, field);
  });
  each_mount(mv, "fileServers", [&](const Json& m, const std::string& field) {
    file_server_of(m, field + ".fileServer.id");
    relative(m, field);
  });
  each_mount(mv, "unmanagedFileSystems", relative);
}

std::string check_relative_path(const std::string& relative, const std::string& what) {
  if (relative.empty()) throw InvalidArgument(what + " cannot be empty.");
  return confine_relative(relative, what, "its mount root");
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

std::vector<runtime::MountLink> mount_links(const NodeLayout& layout, const runtime::MountVolumes& mv) {
  std::vector<runtime::MountLink> links;
  auto link = [&](const std::string& relative, const fs::path& target, const std::string& source, const std::string& fix) {
    links.push_back({check_relative_path(relative, "The relative mount path"), target, source, fix});
  };
  for (std::size_t i = 0; i < mv.azure_file_shares.size(); ++i) {
    const auto& m = mv.azure_file_shares[i];
    auto [account, share] = share_of(m.account_name, m.azure_file_url, field_of("azureFileShares", i));
    link(m.relative_mount_path, layout.share(account, share),
         "the Azure File share '" + share + "' of storage account '" + account + "'",
         "Create it with 'batchai storage share create -n " + share + " --account-name " + account + "'.");
  }
  for (const auto& m : mv.azure_blob_file_systems) {
    link(m.relative_mount_path, layout.container(m.account_name, m.container_name),
         "the blob container '" + m.container_name + "' of storage account '" + m.account_name + "'",
         "Create it with 'batchai storage container create -n " + m.container_name + " --account-name " +
             m.account_name + "'.");
  }
  for (std::size_t i = 0; i < mv.file_servers.size(); ++i) {
    const auto& m = mv.file_servers[i];
    auto f = file_server_of(m.file_server_id, field_of("fileServers", i) + ".fileServer.id");
    link(m.relative_mount_path, layout.file_server_export(f.resource_group, f.workspace, f.name),
         "the file server '" + f.name + "' (resource group '" + f.resource_group + "', workspace '" + f.workspace + "')",
         "Create it with 'batchai file-server create' first.");
  }
  for (const auto& m : mv.unmanaged_file_systems) link(m.relative_mount_path, {}, "", "");  // a plain folder
  return links;
}

void link_mount_volumes(const NodeLayout& layout, const Json& mv, const fs::path& mount_root) {
  if (!mv.is_object()) return;
  runtime::make_mount_links(mount_links(layout, runtime::parse_mount_volumes(mv)), mount_root);
}

}  // namespace batchai::control_plane
