// `az storage share/directory/file/container/blob ...`: contents are real folders under
// $BATCHAI_HOME/storage/<account>/ (see node_layout.hpp). Names are checked where they become
// folders (NodeLayout), and every user path is opened through batchai::ConfinedDir beneath its
// share or container, so nothing outside is read, listed, created or removed.
#include "batchai/control_plane/storage_data.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/common/utf8.hpp"
#include "context.hpp"
#include "local_files.hpp"
#include "storage_names.hpp"
#include "store/store.hpp"
#include "store/resources.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

using namespace detail;

namespace {

// Checks the account exists and, when a key is given, that it is one of the account's keys.
void authenticate(Store& store, const StorageAuth& auth) {
  store.read([&] {
    const auto account = find_account(store, auth.account_name);
    if (!account)
      throw NotFound("The storage account '" + auth.account_name +
                         "' was not found. Create it with 'batchai storage account create'.",
                     "StorageAccountNotFound");
    if (auth.account_key && *auth.account_key != account->key1 && *auth.account_key != account->key2)
      throw InvalidArgument("The account key given for storage account '" + auth.account_name +
                                "' is not valid (authentication failed). Use a key from 'batchai storage account "
                                "keys list -n " + auth.account_name + "'.",
                            "AuthenticationFailed");
  });
}

std::string iso_mtime(const struct stat& st) {
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(st.st_mtim.tv_sec)) +
                 std::chrono::microseconds(st.st_mtim.tv_nsec / 1000);
  return format_iso(std::chrono::time_point_cast<Micros>(t));
}

std::string etag(const struct stat& st) {
  const auto ns = static_cast<unsigned long long>(st.st_mtim.tv_sec) * 1000000000ULL +
                  static_cast<unsigned long long>(st.st_mtim.tv_nsec);
  char buf[32];
  std::snprintf(buf, sizeof buf, "\"0x%llX\"", ns);
  return buf;
}

// The folder of a share or container, opened as the root every path of the command stays under.
ConfinedDir open_root(const fs::path& root, const std::string& name, const std::string& what) {
  auto dir = ConfinedDir::open(root, "the " + what + " '" + name + "'");
  if (!dir)
    throw NotFound("The specified " + what + " '" + name + "' does not exist.",
                   what == "share" ? "ShareNotFound" : "ContainerNotFound");
  return std::move(*dir);
}

std::string parent_of(const std::string& normal) {
  const auto slash = normal.rfind('/');
  return slash == std::string::npos ? std::string(".") : normal.substr(0, slash);
}

Json upload_result(const ConfinedDir& dir, const std::string& relative, const std::string& what) {
  auto st = dir.stat(relative, what);
  return {{"etag", st ? Json(etag(*st)) : Json()}, {"lastModified", st ? Json(iso_mtime(*st)) : Json()}};
}

// A listed entry as it is: a link that leads out (or dangles) is a file of no size.
Json listing_entry(const ConfinedEntry& e) {
  const bool dir = e.is_dir();
  const struct stat& st = e.target ? *e.target : e.link;
  Json props = {{"etag", etag(st)}, {"lastModified", iso_mtime(st)}};
  if (!dir) props["contentLength"] = e.is_file() ? static_cast<std::uint64_t>(st.st_size) : 0;
  return {{"metadata", nullptr}, {"name", to_valid_utf8(e.name)}, {"properties", props}, {"type", dir ? "dir" : "file"}};
}

// A folder inside the root (a link that leads out is none: an upload replaces the link itself).
bool is_folder(const ConfinedDir& root, const std::string& relative) {
  try {
    auto st = root.stat(relative, "The file path");
    return st && S_ISDIR(st->st_mode);
  } catch (const InvalidArgument&) {
    return false;
  }
}

std::vector<ConfinedEntry> children(const ConfinedDir& dir) { return dir.list(is_upload_temporary); }

// Folders of an account folder ("shares" or "blobs"): the shares or containers it holds.
std::vector<ConfinedEntry> account_folders(const fs::path& dir) {
  auto d = ConfinedDir::open(dir, "the storage account");
  std::vector<ConfinedEntry> out;
  if (!d) return out;
  for (auto& e : children(*d))
    if (e.is_dir() && !e.is_symlink()) out.push_back(std::move(e));
  return out;
}

// Makes one share or container folder (its name is checked by the caller's NodeLayout call).
Json create_account_folder(const fs::path& root, const char* what) {
  std::error_code ec;
  fs::create_directories(root.parent_path(), ec);
  const bool created = fs::create_directory(root, ec);
  if (ec) throw SystemError(std::string("Cannot create ") + what + " folder: " + ec.message());
  return {{"created", created}};
}

// Removes one share or container folder of an account without following links; true when it was there.
bool remove_account_folder(const fs::path& account_dir, const std::string& name, const char* what) {
  auto d = ConfinedDir::open(account_dir, "the storage account");
  if (!d) return false;
  auto st = d->lstat(name, std::string("The ") + what);
  const bool existed = st && S_ISDIR(st->st_mode);
  d->remove_tree(name, std::string("The ") + what);
  return existed;
}

void blobs_under(const ConfinedDir& dir, const std::string& prefix,
                 std::vector<std::pair<std::string, struct stat>>& out) {
  for (const auto& e : children(dir)) {
    if (e.is_dir() && !e.is_symlink()) {
      if (auto sub = dir.open_dir(e.name, "The blob name")) blobs_under(*sub, prefix + e.name + "/", out);
    } else if (e.is_file()) {
      out.emplace_back(prefix + e.name, *e.target);
    }
  }
}

// Opens the file `normal` (checked) for writing beneath the root: its folder is resolved confined
// and its own name is never followed (a link is refused), nor is anything but a regular file
// written (a fifo would block: O_NONBLOCK, then the type check).
UniqueFd open_for_write(const ConfinedDir& root, const std::string& normal, int flags, const std::string& what) {
  auto dir = root.open_dir(parent_of(normal), what);
  if (!dir) throw NotFound("The specified parent path does not exist.", "ParentNotFound");
  const std::string name = fs::path(normal).filename().string();
  UniqueFd fd(::openat(dir->fd(), name.c_str(), flags | O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644));
  if (!fd) {
    if (errno == ENOENT) throw NotFound("The specified resource does not exist.", "ResourceNotFound");
    if (errno == EISDIR) throw Conflict("The specified resource is a directory.", "ResourceTypeMismatch");
    if (errno == ELOOP || errno == ENXIO)
      throw InvalidArgument(what + " names a link or a special file, which is not written.", "ResourceTypeMismatch");
    throw SystemError("Cannot write " + what + ": " + std::strerror(errno));
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw InvalidArgument(what + " names no regular file.", "ResourceTypeMismatch");
  return fd;
}

StoredFile stored_file(UniqueFd fd) {
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) throw SystemError(std::string("Cannot read a stored file: ") + std::strerror(errno));
  StoredFile out;
  out.size = static_cast<std::uint64_t>(st.st_size);
  out.etag = etag(st);
  out.modified = st.st_mtim;
  out.fd = std::move(fd);
  return out;
}

}  // namespace

fs::path StorageData::share_root(const std::string& account, const std::string& share) const {
  return cx_.layout().share(account, share);
}

fs::path StorageData::container_root(const std::string& account, const std::string& container) const {
  return cx_.layout().container(account, container);
}

// ---- file shares ----

Json StorageData::share_create(const StorageAuth& auth, const std::string& share) {
  authenticate(cx_.store(), auth);
  return create_account_folder(share_root(auth.account_name, share), "share");  // the name is checked there
}

Json StorageData::share_delete(const StorageAuth& auth, const std::string& share) {
  authenticate(cx_.store(), auth);
  share_root(auth.account_name, share);  // checks the name
  return {{"deleted", remove_account_folder(cx_.layout().storage_account(auth.account_name) / "shares", share, "share")}};
}

Json StorageData::share_list(const StorageAuth& auth) {
  authenticate(cx_.store(), auth);
  Json out = Json::array();
  for (const auto& e : account_folders(cx_.layout().storage_account(auth.account_name) / "shares"))
    out.push_back({{"metadata", nullptr},
                   {"name", to_valid_utf8(e.name)},
                   {"properties", {{"etag", etag(e.link)}, {"lastModified", iso_mtime(e.link)}, {"quota", 5120}}}});
  return out;
}

Json StorageData::share_exists(const StorageAuth& auth, const std::string& share) {
  authenticate(cx_.store(), auth);
  std::error_code ec;
  return {{"exists", fs::is_directory(fs::symlink_status(share_root(auth.account_name, share), ec))}};
}

Json StorageData::directory_create(const StorageAuth& auth, const std::string& share, const std::string& path) {
  authenticate(cx_.store(), auth);
  validate_file_path(path);
  ConfinedDir root = open_root(share_root(auth.account_name, share), share, "share");
  const std::string dir = root.check(path, "The directory path");
  if (dir == ".") throw InvalidArgument("Give the directory to create with --name; the share root already exists.");
  const std::string parent = parent_of(dir);
  if (parent != "." && !root.open_dir(parent, "The directory path"))
    throw NotFound("The specified parent path does not exist: create '" + parent + "' first.", "ParentNotFound");
  try {
    return {{"created", root.make_dir(dir, "The directory path")}};
  } catch (const Conflict& e) {
    throw Conflict("Cannot create directory '" + path + "': " + e.what());
  }
}

Json StorageData::directory_delete(const StorageAuth& auth, const std::string& share, const std::string& path) {
  authenticate(cx_.store(), auth);
  validate_file_path(path);
  ConfinedDir root = open_root(share_root(auth.account_name, share), share, "share");
  const std::string dir = root.check(path, "The directory path");
  if (dir == ".") throw InvalidArgument("Give the directory to delete with --name; the share root cannot be deleted.");
  auto st = root.lstat(dir, "The directory path");
  if (!st || !S_ISDIR(st->st_mode)) return {{"deleted", false}};
  try {
    return {{"deleted", root.remove_dir(dir, "The directory path")}};
  } catch (const Conflict&) {
    throw Conflict("The specified directory '" + path + "' is not empty. Delete its files first.", "DirectoryNotEmpty");
  }
}

Json StorageData::directory_list(const StorageAuth& auth, const std::string& share, const std::string& path) {
  authenticate(cx_.store(), auth);
  validate_file_path(path);
  ConfinedDir root = open_root(share_root(auth.account_name, share), share, "share");
  auto dir = root.open_dir(path, "The directory path");
  if (!dir) throw NotFound("The specified resource does not exist.", "ResourceNotFound");
  Json out = Json::array();
  for (const auto& e : children(*dir))
    if (e.is_dir()) out.push_back(listing_entry(e));
  return out;
}

Json StorageData::file_upload(const StorageAuth& auth, const std::string& share, const fs::path& source,
                               const std::optional<std::string>& path) {
  authenticate(cx_.store(), auth);
  const std::string relative = path.value_or("");
  validate_file_path(relative);
  ConfinedDir root = open_root(share_root(auth.account_name, share), share, "share");
  const std::string candidate = root.check(relative, "The file path");
  // Like az: a last component without '.' (or an existing folder) names the directory.
  const std::string last = fs::path(candidate).filename().string();
  std::string target = candidate;
  if (relative.empty() || relative.back() == '/' || last.find('.') == std::string::npos || is_folder(root, candidate))
    target = root.check(candidate + "/" + source.filename().string(), "The file path");
  validate_file_path(target);  // the local file's own name joins the path
  const std::string parent = parent_of(target);
  if (parent != "." && !root.open_dir(parent, "The file path"))
    throw NotFound("The specified parent path does not exist: create the directory with 'batchai storage directory "
                   "create' first.",
                   "ParentNotFound");
  store_local_file(root, target, "The file path", source);
  return upload_result(root, target, "The file path");
}

void StorageData::file_download(const StorageAuth& auth, const std::string& share, const std::string& path,
                                 const fs::path& dest) {
  authenticate(cx_.store(), auth);
  validate_file_path(path);
  ConfinedDir root = open_root(share_root(auth.account_name, share), share, "share");
  auto file = root.open_file(path, "The file path");
  if (!file) throw NotFound("The specified resource does not exist: " + path, "ResourceNotFound");
  copy_to_local_file(*file, fs::is_directory(dest) ? dest / fs::path(root.check(path, "The file path")).filename() : dest);
}

Json StorageData::file_list(const StorageAuth& auth, const std::string& share, const std::optional<std::string>& path) {
  authenticate(cx_.store(), auth);
  validate_file_path(path.value_or(""));
  ConfinedDir root = open_root(share_root(auth.account_name, share), share, "share");
  auto dir = root.open_dir(path.value_or(""), "The directory path");
  if (!dir) throw NotFound("The specified resource does not exist.", "ResourceNotFound");
  Json out = Json::array();
  for (const auto& e : children(*dir)) out.push_back(listing_entry(e));
  return out;
}

Json StorageData::file_delete(const StorageAuth& auth, const std::string& share, const std::string& path) {
  authenticate(cx_.store(), auth);
  validate_file_path(path);
  ConfinedDir root = open_root(share_root(auth.account_name, share), share, "share");
  const std::string file = root.check(path, "The file path");
  auto st = file == "." ? std::nullopt : root.lstat(file, "The file path");
  if (!st || S_ISDIR(st->st_mode)) throw NotFound("The specified resource does not exist: " + path, "ResourceNotFound");
  root.remove_file(file, "The file path");  // a link goes, never its target
  return {{"deleted", true}};
}

Json StorageData::file_create(const StorageAuth& auth, const std::string& share, const std::string& path,
                              std::uint64_t length) {
  authenticate(cx_.store(), auth);
  if (length > kMaxShareFileBytes)
    throw InvalidArgument("The file length " + std::to_string(length) + " is over the largest a share file may have (" +
                              std::to_string(kMaxShareFileBytes) + " bytes).",
                          "InvalidHeaderValue");
  validate_file_path(path);
  ConfinedDir root = open_root(share_root(auth.account_name, share), share, "share");
  const std::string file = root.check(path, "The file path");
  if (file == ".") throw InvalidArgument("Give the file's path; the share root is a directory.", "InvalidResourceName");
  UniqueFd fd = open_for_write(root, file, O_CREAT, "The file path");
  // Azure's Create File replaces the content: the file is `length` zeros (sparse) afterwards.
  if (::ftruncate(fd.get(), 0) != 0 || ::ftruncate(fd.get(), static_cast<off_t>(length)) != 0)
    throw SystemError("Cannot size the file '" + path + "': " + std::strerror(errno));
  return upload_result(root, file, "The file path");
}

Json StorageData::file_write_range(const StorageAuth& auth, const std::string& share, const std::string& path,
                                   std::uint64_t offset, std::string_view bytes) {
  authenticate(cx_.store(), auth);
  if (bytes.size() > kMaxPutRangeBytes)
    throw InvalidArgument("A range may hold at most 4 MiB.", "InvalidRange");
  validate_file_path(path);
  ConfinedDir root = open_root(share_root(auth.account_name, share), share, "share");
  const std::string file = root.check(path, "The file path");
  if (file == ".") throw InvalidArgument("Give the file's path; the share root is a directory.", "InvalidResourceName");
  UniqueFd fd = open_for_write(root, file, 0, "The file path");
  struct stat st{};
  ::fstat(fd.get(), &st);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  // Ranges stay inside the length the file was created with, as in Azure (no growing by writes).
  if (offset > size || bytes.size() > size - offset)
    throw InvalidArgument("The range specified is invalid for the current size of the resource.", "InvalidRange");
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd.get(), bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw SystemError("Cannot write the file '" + path + "': " + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  return upload_result(root, file, "The file path");
}

StoredFile StorageData::file_open(const StorageAuth& auth, const std::string& share, const std::string& path) {
  authenticate(cx_.store(), auth);
  validate_file_path(path);
  ConfinedDir root = open_root(share_root(auth.account_name, share), share, "share");
  auto file = root.open_file(path, "The file path");
  if (!file) throw NotFound("The specified resource does not exist.", "ResourceNotFound");
  return stored_file(std::move(*file));
}

// ---- blob containers ----

Json StorageData::blob_put(const StorageAuth& auth, const std::string& container, const std::string& name,
                           std::string_view bytes) {
  // The body goes in through an anonymous memory file, so replace_file's atomic write applies.
  UniqueFd mem(::memfd_create("batchai-blob", MFD_CLOEXEC));
  if (!mem) throw SystemError(std::string("Cannot hold the blob: ") + std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(mem.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw SystemError(std::string("Cannot hold the blob: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  ::lseek(mem.get(), 0, SEEK_SET);
  return blob_put_file(auth, container, name, mem.get());
}

Json StorageData::blob_put_file(const StorageAuth& auth, const std::string& container, const std::string& name,
                                int source_fd) {
  authenticate(cx_.store(), auth);
  validate_blob_name(name);
  ConfinedDir root = open_root(container_root(auth.account_name, container), container, "container");
  const std::string blob = root.check(name, "The blob name");
  if (blob == ".") throw InvalidArgument("Give the blob's name.", "InvalidResourceName");
  if (parent_of(blob) != ".") root.make_dirs(parent_of(blob), "The blob name");
  root.replace_file(blob, "The blob name", source_fd);
  return upload_result(root, blob, "The blob name");
}

StoredFile StorageData::blob_open(const StorageAuth& auth, const std::string& container, const std::string& name) {
  authenticate(cx_.store(), auth);
  validate_blob_name(name);
  ConfinedDir root = open_root(container_root(auth.account_name, container), container, "container");
  auto blob = root.open_file(name, "The blob name");
  if (!blob) throw NotFound("The specified blob does not exist.", "BlobNotFound");
  return stored_file(std::move(*blob));
}

Json StorageData::container_exists(const StorageAuth& auth, const std::string& container) {
  authenticate(cx_.store(), auth);
  std::error_code ec;
  return {{"exists", fs::is_directory(fs::symlink_status(container_root(auth.account_name, container), ec))}};
}

Json StorageData::container_create(const StorageAuth& auth, const std::string& container) {
  authenticate(cx_.store(), auth);
  return create_account_folder(container_root(auth.account_name, container), "container");
}

Json StorageData::container_delete(const StorageAuth& auth, const std::string& container) {
  authenticate(cx_.store(), auth);
  container_root(auth.account_name, container);  // checks the name
  return {{"deleted",
           remove_account_folder(cx_.layout().storage_account(auth.account_name) / "blobs", container, "container")}};
}

Json StorageData::container_list(const StorageAuth& auth) {
  authenticate(cx_.store(), auth);
  Json out = Json::array();
  for (const auto& e : account_folders(cx_.layout().storage_account(auth.account_name) / "blobs"))
    out.push_back({{"metadata", nullptr},
                   {"name", to_valid_utf8(e.name)},
                   {"properties",
                    {{"etag", etag(e.link)},
                     {"lastModified", iso_mtime(e.link)},
                     {"lease", {{"duration", nullptr}, {"state", "available"}, {"status", "unlocked"}}},
                     {"publicAccess", nullptr}}}});
  return out;
}

Json StorageData::blob_upload(const StorageAuth& auth, const std::string& container, const fs::path& file,
                               const std::string& name) {
  authenticate(cx_.store(), auth);
  validate_blob_name(name);
  ConfinedDir root = open_root(container_root(auth.account_name, container), container, "container");
  const std::string blob = root.check(name, "The blob name");
  if (blob == ".") throw InvalidArgument("Please provide a blob name with --name.");
  // Blob names are flat: '/' only looks like folders, which are made as needed.
  if (parent_of(blob) != ".") root.make_dirs(parent_of(blob), "The blob name");
  store_local_file(root, blob, "The blob name", file);
  return upload_result(root, blob, "The blob name");
}

Json StorageData::blob_upload_batch(const StorageAuth& auth, const std::string& destination, const fs::path& source,
                                     const std::optional<std::string>& pattern) {
  authenticate(cx_.store(), auth);
  std::string container = destination;
  if (auto slash = container.find_last_of('/'); slash != std::string::npos && container.find("://") != std::string::npos)
    container = container.substr(slash + 1);  // a container URL
  const fs::path container_dir = container_root(auth.account_name, container);  // checks the name
  if (!fs::is_directory(source)) throw InvalidArgument("The source '" + source.string() + "' is not a folder.");
  ConfinedDir root = open_root(container_dir, container, "container");
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(source)) {
    if (!e.is_regular_file()) continue;
    std::string rel = fs::relative(e.path(), source).generic_string();
    if (pattern && ::fnmatch(pattern->c_str(), rel.c_str(), 0) != 0) continue;
    names.push_back(rel);
  }
  std::sort(names.begin(), names.end());
  Json out = Json::array();
  for (const auto& rel : names) validate_blob_name(rel);  // all checked before any is stored
  for (const auto& rel : names) {
    const std::string blob = root.check(rel, "The blob name");
    if (parent_of(blob) != ".") root.make_dirs(parent_of(blob), "The blob name");
    store_local_file(root, blob, "The blob name", source / rel);
    Json stored = upload_result(root, blob, "The blob name");
    out.push_back({{"Blob", "https://" + to_lower(auth.account_name) + ".blob.core.windows.net/" + container + "/" + rel},
                   {"Last Modified", stored["lastModified"]},
                   {"Type", nullptr},
                   {"eTag", stored["etag"]}});
  }
  return out;
}

void StorageData::blob_download(const StorageAuth& auth, const std::string& container, const std::string& name,
                                 const fs::path& file) {
  authenticate(cx_.store(), auth);
  validate_blob_name(name);
  ConfinedDir root = open_root(container_root(auth.account_name, container), container, "container");
  auto blob = root.open_file(name, "The blob name");
  if (!blob) throw NotFound("The specified blob does not exist: " + name, "BlobNotFound");
  copy_to_local_file(*blob, file);
}

Json StorageData::blob_list(const StorageAuth& auth, const std::string& container,
                             const std::optional<std::string>& prefix) {
  authenticate(cx_.store(), auth);
  if (prefix) validate_blob_name(*prefix);
  ConfinedDir root = open_root(container_root(auth.account_name, container), container, "container");
  std::vector<std::pair<std::string, struct stat>> blobs;
  blobs_under(root, "", blobs);
  std::sort(blobs.begin(), blobs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Json out = Json::array();
  for (const auto& [rel, st] : blobs) {
    if (prefix && rel.rfind(*prefix, 0) != 0) continue;
    out.push_back({{"deleted", false},
                   {"metadata", nullptr},
                   {"name", to_valid_utf8(rel)},
                   {"properties",
                    {{"blobType", "BlockBlob"},
                     {"contentLength", static_cast<std::uint64_t>(st.st_size)},
                     {"etag", etag(st)},
                     {"lastModified", iso_mtime(st)}}},
                   {"snapshot", nullptr}});
  }
  return out;
}

Json StorageData::blob_delete(const StorageAuth& auth, const std::string& container, const std::string& name) {
  authenticate(cx_.store(), auth);
  validate_blob_name(name);
  ConfinedDir root = open_root(container_root(auth.account_name, container), container, "container");
  const std::string blob = root.check(name, "The blob name");
  auto st = blob == "." ? std::nullopt : root.lstat(blob, "The blob name");
  if (!st || S_ISDIR(st->st_mode)) throw NotFound("The specified blob does not exist: " + name, "BlobNotFound");
  root.remove_file(blob, "The blob name");
  // Folders only exist to hold '/'-named blobs: drop the ones left empty, never the container.
  for (std::string dir = parent_of(blob); dir != "."; dir = parent_of(dir)) {
    try {
      if (!root.remove_dir(dir, "The blob name")) break;
    } catch (const Conflict&) {
      break;  // still holds other blobs
    }
  }
  return {{"deleted", true}};
}

}  // namespace batchai::control_plane
