// Storage name rules, mount volume checks and linking, and the on-disk layout helpers; every
// path built from a name or a mount field goes through these rules and batchai::ConfinedDir.
#include "node_mounts.hpp"
#include "storage_paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/common/json_util.hpp"
#include "batchai/common/utf8.hpp"
#include "mount_rules.hpp"
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

[[noreturn]] void name_out_of_range() {
  throw InvalidArgument("The specified resource name length is not within the permissible limits.",
                        "OutOfRangeInput");
}

// The checks both kinds of name share: valid UTF-8 without NUL, segments within `segment_max`
// characters and 255 bytes, at most `segments_max` segments.
void validate_storage_name(const std::string& name, std::size_t segment_max, std::size_t segments_max) {
  if (!is_valid_utf8(name) || name.find('\0') != std::string::npos)
    throw InvalidArgument("The specified resource name contains invalid characters: it is not valid UTF-8.",
                          "InvalidResourceName");
  std::size_t segments = 0;
  for (std::size_t start = 0; start <= name.size();) {
    std::size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    const std::string_view segment(name.data() + start, end - start);
    if (!segment.empty()) ++segments;
    if (segment.size() > 255 || utf16_length(segment) > segment_max) name_out_of_range();
    start = end + 1;
  }
  if (segments > segments_max) name_out_of_range();
}

}  // namespace

void validate_file_path(const std::string& path) {
  validate_storage_name(path, 255, 250);  // Azure Files: 250 subdirectories deep at most
  if (utf16_length(path) > 2048) name_out_of_range();
}

void validate_blob_name(const std::string& name) {
  validate_storage_name(name, 1024, 254);
  if (utf16_length(name) > 1024) name_out_of_range();
}

void validate_storage_account_name(const std::string& account) {
  bool ok = account.size() >= 3 && account.size() <= 24 && std::all_of(account.begin(), account.end(), [](unsigned char c) {
              return std::islower(c) || std::isdigit(c);
            });
  if (!ok)
    throw InvalidArgument("The storage account name '" + account +
                          "' is not valid: use 3-24 lower-case letters and digits.");
}

void validate_share_name(const std::string& name, const char* what) {
  bool ok = name.size() >= 3 && name.size() <= 63 && name.front() != '-' && name.back() != '-' &&
            name.find("--") == std::string::npos && std::all_of(name.begin(), name.end(), [](unsigned char c) {
              return std::islower(c) || std::isdigit(c) || c == '-';
            });
  if (!ok)
    throw InvalidArgument(std::string("The ") + what + " name '" + name +
                          "' is not valid: use 3-63 lower-case letters, digits and single hyphens.");
}

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

fs::path resolve_inside(const fs::path& root, const std::string& relative, const std::string& what) {
  std::string normal = confine_relative(relative, what, "its share or container");
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

// Copies the user's local file into `dir` at `relative`, atomically (last writer wins).
void store_local_file(const ConfinedDir& dir, const std::string& relative, const std::string& what, const fs::path& from) {
  UniqueFd src(::open(from.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));  // a fifo must not block
  struct stat st{};
  if (!src || ::fstat(src.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw InvalidArgument("[Errno 2] No such file or directory: '" + from.string() + "'");
  ::fcntl(src.get(), F_SETFL, O_RDONLY);
  dir.replace_file(relative, what, src.get(), st.st_mode & 0777);
}

// Copies an opened share/container file to the user's local destination (the user's own path).
void copy_to_local_file(const UniqueFd& in, const fs::path& out) {
  UniqueFd fd(::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) throw SystemError("Cannot write '" + out.string() + "': " + std::strerror(errno));
  try {
    copy_fd(in.get(), fd.get());
  } catch (const SystemError& e) {
    throw SystemError("Cannot write '" + out.string() + "': " + e.what());
  }
}

// Names become folders here, so the name rules are checked here: no caller can build a storage
// path from a name that is a path ('..', '/x', 'a/b', a trailing '/').
fs::path NodeLayout::storage_account(const std::string& account) const {
  validate_storage_account_name(to_lower(account));
  return home_ / "storage" / to_lower(account);
}
fs::path NodeLayout::share(const std::string& account, const std::string& share) const {
  validate_share_name(share, "share");
  return storage_account(account) / "shares" / share;
}
fs::path NodeLayout::container(const std::string& account, const std::string& container) const {
  validate_share_name(container, "container");
  return storage_account(account) / "blobs" / container;
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
