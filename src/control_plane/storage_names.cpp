// The storage account, share, container, file path and blob name rules (the service's), and the
// home's storage folders built from names that passed them.
#include "storage_names.hpp"

#include <algorithm>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/common/utf8.hpp"
#include "batchai/control_plane/node_layout.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {
namespace {

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

// Names become folders here, so the name rules are checked here: no caller can build a storage
// path from a name that is a path ('..', '/x', 'a/b', a trailing '/').
fs::path NodeLayout::storage_account(const std::string& account) const {
  validate_storage_account_name(to_lower(account));
  return shared_ / "storage" / to_lower(account);
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
  return shared_ / "clusters" / to_lower(rg) / to_lower(ws);
}
fs::path NodeLayout::workspace_file_servers(const std::string& rg, const std::string& ws) const {
  return shared_ / "fileservers" / to_lower(rg) / to_lower(ws);
}
fs::path NodeLayout::cluster(const std::string& rg, const std::string& ws, const std::string& cluster) const {
  return workspace_clusters(rg, ws) / to_lower(cluster);
}

}  // namespace batchai::control_plane
