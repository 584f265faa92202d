// `az storage share/directory/file/container/blob ...`: contents are real folders under
// $BATCHAI_HOME/storage/<account>/ (see node_layout.hpp); every user path goes through
// resolve_inside so nothing can escape its share or container.
#include <fnmatch.h>

#include <algorithm>
#include <chrono>

#include "batchai/common/ids.hpp"
#include "batchai/control_plane/control_plane.hpp"
#include "batchai/control_plane/storage_paths.hpp"
#include "batchai/control_plane/store.hpp"
#include "internal.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

using namespace detail;

namespace {

// Checks the account exists and, when a key is given, that it is one of the account's keys.
void authenticate(Store& store, const ControlPlane::StorageAuth& auth) {
  store.read([&] {
    auto st = store.prepare("SELECT key1, key2 FROM storage_accounts WHERE name_lc = ?");
    st.bind(1, to_lower(auth.account_name));
    if (!st.step())
      throw NotFound("The storage account '" + auth.account_name +
                         "' was not found. Create it with 'batchai storage account create'.",
                     "StorageAccountNotFound");
    if (auth.account_key && *auth.account_key != st.text(0) && *auth.account_key != st.text(1))
      throw InvalidArgument("The account key given for storage account '" + auth.account_name +
                                "' is not valid (authentication failed). Use a key from 'batchai storage account "
                                "keys list -n " + auth.account_name + "'.",
                            "AuthenticationFailed");
  });
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

std::string iso_mtime(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  if (ec) return {};
  auto sys = std::chrono::file_clock::to_sys(t);
  return format_iso(std::chrono::time_point_cast<Micros>(sys));
}

std::string etag(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  char buf[32];
  std::snprintf(buf, sizeof buf, "\"0x%llX\"", static_cast<unsigned long long>(t.time_since_epoch().count()));
  return buf;
}

fs::path existing_root(const fs::path& root, const std::string& name, const char* what) {
  if (!fs::is_directory(root))
    throw NotFound(std::string("The specified ") + what + " '" + name + "' does not exist.",
                   std::string(what) == "share" ? "ShareNotFound" : "ContainerNotFound");
  return root;
}

void store_file(const fs::path& from, const fs::path& to) {
  if (!fs::is_regular_file(from)) throw InvalidArgument("[Errno 2] No such file or directory: '" + from.string() + "'");
  std::error_code ec;
  fs::path tmp = to;
  tmp += ".batchai-upload";
  fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(tmp, to, ec);  // readers never see half a file
  if (ec) throw SystemError("Cannot write '" + to.string() + "': " + ec.message());
}

Json upload_result(const fs::path& p) { return {{"etag", etag(p)}, {"lastModified", iso_mtime(p)}}; }

Json listing_entry(const fs::path& p, const std::string& name) {
  bool dir = fs::is_directory(p);
  Json props = {{"etag", etag(p)}, {"lastModified", iso_mtime(p)}};
  if (!dir) props["contentLength"] = fs::file_size(p);
  return {{"metadata", nullptr}, {"name", name}, {"properties", props}, {"type", dir ? "dir" : "file"}};
}

std::vector<fs::directory_entry> sorted_children(const fs::path& dir) {
  std::vector<fs::directory_entry> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename().string().ends_with(".batchai-upload")) continue;
    out.push_back(e);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path().filename() < b.path().filename(); });
  return out;
}

}  // namespace

fs::path ControlPlane::share_root(const std::string& account, const std::string& share) const {
  return layout_.share(account, share);
}

fs::path ControlPlane::container_root(const std::string& account, const std::string& container) const {
  return layout_.container(account, container);
}

// ---- file shares ----

Json ControlPlane::share_create(const StorageAuth& auth, const std::string& share) {
  authenticate(*store_, auth);
  validate_share_name(share, "share");
  std::error_code ec;
  fs::create_directories(share_root(auth.account_name, share).parent_path(), ec);
  bool created = fs::create_directory(share_root(auth.account_name, share), ec);
  if (ec) throw SystemError("Cannot create share folder: " + ec.message());
  return {{"created", created}};
}

Json ControlPlane::share_delete(const StorageAuth& auth, const std::string& share) {
  authenticate(*store_, auth);
  std::error_code ec;
  bool existed = fs::is_directory(share_root(auth.account_name, share));
  fs::remove_all(share_root(auth.account_name, share), ec);
  return {{"deleted", existed}};
}

Json ControlPlane::share_list(const StorageAuth& auth) {
  authenticate(*store_, auth);
  Json out = Json::array();
  fs::path dir = layout_.storage_account(auth.account_name) / "shares";
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : sorted_children(dir))
    out.push_back({{"metadata", nullptr},
                   {"name", e.path().filename().string()},
                   {"properties", {{"etag", etag(e.path())}, {"lastModified", iso_mtime(e.path())}, {"quota", 5120}}}});
  return out;
}

Json ControlPlane::share_exists(const StorageAuth& auth, const std::string& share) {
  authenticate(*store_, auth);
  return {{"exists", fs::is_directory(share_root(auth.account_name, share))}};
}

Json ControlPlane::directory_create(const StorageAuth& auth, const std::string& share, const std::string& path) {
  authenticate(*store_, auth);
  fs::path root = existing_root(share_root(auth.account_name, share), share, "share");
  fs::path dir = resolve_inside(root, path, "Directory path");
  if (!fs::is_directory(dir.parent_path()))
    throw NotFound("The specified parent path does not exist: create '" +
                       fs::relative(dir.parent_path(), root).generic_string() + "' first.",
                   "ParentNotFound");
  std::error_code ec;
  bool created = fs::create_directory(dir, ec);
  if (ec) throw Conflict("Cannot create directory '" + path + "': " + ec.message());
  return {{"created", created}};
}

Json ControlPlane::directory_delete(const StorageAuth& auth, const std::string& share, const std::string& path) {
  authenticate(*store_, auth);
  fs::path root = existing_root(share_root(auth.account_name, share), share, "share");
  fs::path dir = resolve_inside(root, path, "Directory path");
  if (dir == root) throw InvalidArgument("Give the directory to delete with --name; the share root cannot be deleted.");
  if (!fs::is_directory(dir)) return {{"deleted", false}};
  if (!fs::is_empty(dir))
    throw Conflict("The specified directory '" + path + "' is not empty. Delete its files first.", "DirectoryNotEmpty");
  fs::remove(dir);
  return {{"deleted", true}};
}

Json ControlPlane::directory_list(const StorageAuth& auth, const std::string& share, const std::string& path) {
  authenticate(*store_, auth);
  fs::path root = existing_root(share_root(auth.account_name, share), share, "share");
  fs::path dir = resolve_inside(root, path, "Directory path");
  if (!fs::is_directory(dir)) throw NotFound("The specified resource does not exist.", "ResourceNotFound");
  Json out = Json::array();
  for (const auto& e : sorted_children(dir))
    if (e.is_directory()) out.push_back(listing_entry(e.path(), e.path().filename().string()));
  return out;
}

Json ControlPlane::file_upload(const StorageAuth& auth, const std::string& share, const fs::path& source,
                               const std::optional<std::string>& path) {
  authenticate(*store_, auth);
  fs::path root = existing_root(share_root(auth.account_name, share), share, "share");
  std::string relative = path.value_or("");
  std::string file_name = source.filename().string();
  // Like az: a last component without '.' (or an existing folder) names the directory.
  fs::path candidate = resolve_inside(root, relative.empty() ? "." : relative, "File path");
  std::string last = fs::path(relative).filename().string();
  fs::path target;
  if (relative.empty() || relative.back() == '/' || last.find('.') == std::string::npos || fs::is_directory(candidate))
    target = resolve_inside(root, (fs::path(relative) / file_name).generic_string(), "File path");
  else
    target = candidate;
  if (!fs::is_directory(target.parent_path()))
    throw NotFound("The specified parent path does not exist: create the directory with 'batchai storage directory "
                   "create' first.",
                   "ParentNotFound");
  store_file(source, target);
  return upload_result(target);
}

void ControlPlane::file_download(const StorageAuth& auth, const std::string& share, const std::string& path,
                                 const fs::path& dest) {
  authenticate(*store_, auth);
  fs::path root = existing_root(share_root(auth.account_name, share), share, "share");
  fs::path file = resolve_inside(root, path, "File path");
  if (!fs::is_regular_file(file)) throw NotFound("The specified resource does not exist: " + path, "ResourceNotFound");
  fs::path out = fs::is_directory(dest) ? dest / file.filename() : dest;
  std::error_code ec;
  fs::copy_file(file, out, fs::copy_options::overwrite_existing, ec);
  if (ec) throw SystemError("Cannot write '" + out.string() + "': " + ec.message());
}

Json ControlPlane::file_list(const StorageAuth& auth, const std::string& share, const std::optional<std::string>& path) {
  authenticate(*store_, auth);
  fs::path root = existing_root(share_root(auth.account_name, share), share, "share");
  fs::path dir = resolve_inside(root, path.value_or(""), "Directory path");
  if (!fs::is_directory(dir)) throw NotFound("The specified resource does not exist.", "ResourceNotFound");
  Json out = Json::array();
  for (const auto& e : sorted_children(dir)) out.push_back(listing_entry(e.path(), e.path().filename().string()));
  return out;
}

Json ControlPlane::file_delete(const StorageAuth& auth, const std::string& share, const std::string& path) {
  authenticate(*store_, auth);
  fs::path root = existing_root(share_root(auth.account_name, share), share, "share");
  fs::path file = resolve_inside(root, path, "File path");
  if (!fs::is_regular_file(file)) throw NotFound("The specified resource does not exist: " + path, "ResourceNotFound");
  fs::remove(file);
  return {{"deleted", true}};
}

// ---- blob containers ----

Json ControlPlane::container_create(const StorageAuth& auth, const std::string& container) {
  authenticate(*store_, auth);
  validate_share_name(container, "container");
  std::error_code ec;
  fs::create_directories(container_root(auth.account_name, container).parent_path(), ec);
  bool created = fs::create_directory(container_root(auth.account_name, container), ec);
  if (ec) throw SystemError("Cannot create container folder: " + ec.message());
  return {{"created", created}};
}

Json ControlPlane::container_delete(const StorageAuth& auth, const std::string& container) {
  authenticate(*store_, auth);
  bool existed = fs::is_directory(container_root(auth.account_name, container));
  std::error_code ec;
  fs::remove_all(container_root(auth.account_name, container), ec);
  return {{"deleted", existed}};
}

Json ControlPlane::container_list(const StorageAuth& auth) {
  authenticate(*store_, auth);
  Json out = Json::array();
  fs::path dir = layout_.storage_account(auth.account_name) / "blobs";
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : sorted_children(dir))
    out.push_back({{"metadata", nullptr},
                   {"name", e.path().filename().string()},
                   {"properties",
                    {{"etag", etag(e.path())},
                     {"lastModified", iso_mtime(e.path())},
                     {"lease", {{"duration", nullptr}, {"state", "available"}, {"status", "unlocked"}}},
                     {"publicAccess", nullptr}}}});
  return out;
}

Json ControlPlane::blob_upload(const StorageAuth& auth, const std::string& container, const fs::path& file,
                               const std::string& name) {
  authenticate(*store_, auth);
  fs::path root = existing_root(container_root(auth.account_name, container), container, "container");
  fs::path target = resolve_inside(root, name, "Blob name");
  if (target == root) throw InvalidArgument("Please provide a blob name with --name.");
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);  // blob names are flat: '/' only looks like folders
  store_file(file, target);
  return upload_result(target);
}

Json ControlPlane::blob_upload_batch(const StorageAuth& auth, const std::string& destination, const fs::path& source,
                                     const std::optional<std::string>& pattern) {
  authenticate(*store_, auth);
  std::string container = destination;
  if (auto slash = container.find_last_of('/'); slash != std::string::npos && container.find("://") != std::string::npos)
    container = container.substr(slash + 1);  // a container URL
  if (!fs::is_directory(source)) throw InvalidArgument("The source '" + source.string() + "' is not a folder.");
  fs::path root = existing_root(container_root(auth.account_name, container), container, "container");
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(source)) {
    if (!e.is_regular_file()) continue;
    std::string rel = fs::relative(e.path(), source).generic_string();
    if (pattern && ::fnmatch(pattern->c_str(), rel.c_str(), 0) != 0) continue;
    names.push_back(rel);
  }
  std::sort(names.begin(), names.end());
  Json out = Json::array();
  for (const auto& rel : names) {
    fs::path target = resolve_inside(root, rel, "Blob name");
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    store_file(source / rel, target);
    out.push_back({{"Blob", "https://" + to_lower(auth.account_name) + ".blob.core.windows.net/" + container + "/" + rel},
                   {"Last Modified", iso_mtime(target)},
                   {"Type", nullptr},
                   {"eTag", etag(target)}});
  }
  return out;
}

void ControlPlane::blob_download(const StorageAuth& auth, const std::string& container, const std::string& name,
                                 const fs::path& file) {
  authenticate(*store_, auth);
  fs::path root = existing_root(container_root(auth.account_name, container), container, "container");
  fs::path blob = resolve_inside(root, name, "Blob name");
  if (!fs::is_regular_file(blob)) throw NotFound("The specified blob does not exist: " + name, "BlobNotFound");
  std::error_code ec;
  fs::copy_file(blob, file, fs::copy_options::overwrite_existing, ec);
  if (ec) throw SystemError("Cannot write '" + file.string() + "': " + ec.message());
}

Json ControlPlane::blob_list(const StorageAuth& auth, const std::string& container,
                             const std::optional<std::string>& prefix) {
  authenticate(*store_, auth);
  fs::path root = existing_root(container_root(auth.account_name, container), container, "container");
  std::vector<std::pair<std::string, fs::path>> blobs;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() || e.path().filename().string().ends_with(".batchai-upload")) continue;
    std::string rel = fs::relative(e.path(), root).generic_string();
    if (prefix && rel.rfind(*prefix, 0) != 0) continue;
    blobs.emplace_back(rel, e.path());
  }
  std::sort(blobs.begin(), blobs.end());
  Json out = Json::array();
  for (const auto& [rel, p] : blobs)
    out.push_back({{"deleted", false},
                   {"metadata", nullptr},
                   {"name", rel},
                   {"properties",
                    {{"blobType", "BlockBlob"},
                     {"contentLength", fs::file_size(p)},
                     {"etag", etag(p)},
                     {"lastModified", iso_mtime(p)}}},
                   {"snapshot", nullptr}});
  return out;
}

Json ControlPlane::blob_delete(const StorageAuth& auth, const std::string& container, const std::string& name) {
  authenticate(*store_, auth);
  fs::path root = existing_root(container_root(auth.account_name, container), container, "container");
  fs::path blob = resolve_inside(root, name, "Blob name");
  if (!fs::is_regular_file(blob)) throw NotFound("The specified blob does not exist: " + name, "BlobNotFound");
  fs::remove(blob);
  // Folders only exist to hold '/'-named blobs: drop the ones left empty.
  std::error_code ec;
  for (fs::path dir = blob.parent_path(); dir != root && fs::is_empty(dir, ec); dir = dir.parent_path())
    fs::remove(dir, ec);
  return {{"deleted", true}};
}

}  // namespace batchai::control_plane
