// Confined paths (see confined_path.hpp): every operation resolves beneath the root's descriptor
// (confined_resolve.cpp) and acts on the last name with *at(2) calls that never follow it, so
// nothing outside the root is read, listed, created or removed.
#include "batchai/common/confined_path.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "confined_resolve.hpp"

namespace batchai {

using confined_internal::join;
using confined_internal::open_beneath;
using confined_internal::split;


std::optional<ConfinedDir> ConfinedDir::open(const std::filesystem::path& root, std::string label) {
  const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    throw SystemError("Cannot open " + label + " ('" + root.string() + "'): " + std::strerror(errno));
  }
  return ConfinedDir(UniqueFd(fd), root, std::move(label));
}

std::string confine_relative(const std::string& relative, const std::string& what, const std::string& label) {
  if (relative.find('\0') != std::string::npos)
    throw InvalidArgument(what + " must not contain a NUL character: it names no file in " + label + ".");
  if (!relative.empty() && relative.front() == '/')
    throw InvalidArgument(what + " '" + relative + "' must be relative to " + label + "; remove the leading '/'.");
  std::vector<std::string> kept;
  for (auto& part : split(relative)) {
    if (part == "..")
      throw InvalidArgument(what + " '" + relative + "' must not contain '..': it would leave " + label + ".");
    if (part != ".") kept.push_back(std::move(part));
  }
  return join(kept, kept.size());
}

std::string ConfinedDir::check(const std::string& relative, const std::string& what) const {
  return confine_relative(relative, what, label_);
}

namespace {

// Turns a failed lookup's errno into the typed error the user sees.
[[noreturn]] void fail(int err, const std::string& relative, const std::string& what, const std::string& label) {
  if (err == EXDEV || err == ELOOP)
    throw InvalidArgument(what + " '" + relative + "' leads out of " + label +
                          " through a symbolic link; use a path inside it.");
  if (err == ENOENT || err == ENOTDIR)
    throw NotFound(what + " '" + relative + "' does not exist in " + label + ".", "ResourceNotFound");
  throw SystemError(what + " '" + relative + "' in " + label + ": " + std::strerror(err));
}

}  // namespace

std::optional<ConfinedDir> ConfinedDir::open_dir(const std::string& relative, const std::string& what) const {
  const std::string normal = check(relative, what);
  const int fd = open_beneath(fd_.get(), normal, O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    fail(errno, relative, what, label_);
  }
  return ConfinedDir(UniqueFd(fd), normal == "." ? path_ : path_ / normal, label_);
}

std::optional<UniqueFd> ConfinedDir::open_file(const std::string& relative, const std::string& what) const {
  const std::string normal = check(relative, what);
  // O_NONBLOCK: a fifo planted in the folder must not hang the reader; regular files ignore it.
  UniqueFd fd(open_beneath(fd_.get(), normal, O_RDONLY | O_NONBLOCK));
  if (!fd) {
    if (errno == ENOENT || errno == ENOTDIR || errno == EISDIR || errno == ENXIO) return std::nullopt;
    fail(errno, relative, what, label_);
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const int fl = ::fcntl(fd.get(), F_GETFL);
  if (fl >= 0) ::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK);
  return fd;
}

std::optional<struct stat> ConfinedDir::stat(const std::string& relative, const std::string& what) const {
  const std::string normal = check(relative, what);
  UniqueFd fd(open_beneath(fd_.get(), normal, O_PATH));
  if (!fd) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    fail(errno, relative, what, label_);
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) fail(errno, relative, what, label_);
  return st;
}

std::optional<struct stat> ConfinedDir::lstat(const std::string& relative, const std::string& what) const {
  const std::string normal = check(relative, what);
  struct stat st{};
  if (normal == ".") {
    if (::fstat(fd_.get(), &st) != 0) fail(errno, relative, what, label_);
    return st;
  }
  auto [parent, name] = parent_of(normal, relative, what);
  if (!parent) return std::nullopt;
  if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    fail(errno, relative, what, label_);
  }
  return st;
}

std::pair<UniqueFd, std::string> ConfinedDir::parent_of(const std::string& normal, const std::string& relative,
                                                        const std::string& what) const {
  auto parts = split(normal);
  if (parts.empty() || normal == ".")
    throw InvalidArgument(what + " must name something inside " + label_ + ", not " + label_ + " itself.");
  const std::string name = parts.back();
  UniqueFd parent(open_beneath(fd_.get(), join(parts, parts.size() - 1), O_RDONLY | O_DIRECTORY));
  if (!parent && errno != ENOENT && errno != ENOTDIR) fail(errno, relative, what, label_);
  return {std::move(parent), name};
}

std::vector<ConfinedEntry> ConfinedDir::list(const std::function<bool(const std::string&)>& hide) const {
  std::vector<ConfinedEntry> out;
  const int fd = ::openat(fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw SystemError("Cannot list " + label_ + ": " + std::strerror(errno));
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    ::close(fd);
    throw SystemError("Cannot list " + label_ + ": " + std::strerror(errno));
  }
  while (const dirent* d = ::readdir(dir)) {
    const std::string name = d->d_name;
    if (name == "." || name == ".." || (hide && hide(name))) continue;
    ConfinedEntry e;
    e.name = name;
    if (::fstatat(fd, name.c_str(), &e.link, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    if (!S_ISLNK(e.link.st_mode)) {
      e.target = e.link;
    } else if (UniqueFd t(open_beneath(fd, name, O_PATH)); t) {
      struct stat st{};
      if (::fstat(t.get(), &st) == 0) e.target = st;
    }
    out.push_back(std::move(e));
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end(), [](const ConfinedEntry& a, const ConfinedEntry& b) { return a.name < b.name; });
  return out;
}

bool ConfinedDir::make_dir(const std::string& relative, const std::string& what) const {
  const std::string normal = check(relative, what);
  if (normal == ".") return false;
  auto [parent, name] = parent_of(normal, relative, what);
  if (!parent) fail(ENOENT, relative, what, label_);
  if (::mkdirat(parent.get(), name.c_str(), 0777) == 0) return true;
  const int err = errno;
  struct stat st{};
  if (err == EEXIST && ::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
    return false;
  if (err == EEXIST) throw Conflict(what + " '" + relative + "' exists in " + label_ + " and is not a folder.");
  fail(err, relative, what, label_);
}

void ConfinedDir::make_dirs(const std::string& relative, const std::string& what) const {
  const std::string normal = check(relative, what);
  auto parts = split(normal);
  if (normal == ".") return;
  for (std::size_t i = 1; i <= parts.size(); ++i) {
    UniqueFd existing(open_beneath(fd_.get(), join(parts, i), O_RDONLY | O_DIRECTORY));
    if (existing) continue;
    if (errno != ENOENT) fail(errno, relative, what, label_);
    make_dir(join(parts, i), what);
  }
}

void ConfinedDir::replace_file(const std::string& relative, const std::string& what, int source_fd, mode_t mode) const {
  const std::string normal = check(relative, what);
  auto [parent, name] = parent_of(normal, relative, what);
  if (!parent) fail(ENOENT, relative, what, label_);
  std::string tmp;
  UniqueFd out;
  for (int attempt = 0; !out && attempt < 16; ++attempt) {
    tmp = "." + name.substr(0, 200) + ".batchai-upload." + random_string(12, "abcdefghijklmnopqrstuvwxyz0123456789");
    out = UniqueFd(::openat(parent.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!out && errno != EEXIST) fail(errno, relative, what, label_);
  }
  if (!out) throw SystemError("Cannot create a temporary file for " + what + " '" + relative + "' in " + label_ + ".");
  const auto discard = [&] { ::unlinkat(parent.get(), tmp.c_str(), 0); };
  try {
    copy_fd(source_fd, out.get());
    if (::fsync(out.get()) != 0 || ::close(out.release()) != 0)
      throw SystemError(std::string("Cannot write: ") + std::strerror(errno));
  } catch (const SystemError& e) {
    discard();
    throw SystemError(what + " '" + relative + "' in " + label_ + " was not written: " + e.what());
  } catch (...) {
    discard();
    throw;
  }
  if (::renameat(parent.get(), tmp.c_str(), parent.get(), name.c_str()) != 0) {
    const int err = errno;
    discard();
    if (err == EISDIR || err == ENOTEMPTY || err == EEXIST)
      throw Conflict(what + " '" + relative + "' is a folder in " + label_ + "; give a file path.");
    throw SystemError(what + " '" + relative + "' in " + label_ + " was not written: " + std::strerror(err));
  }
  ::fsync(parent.get());  // the rename itself survives a crash
}

bool ConfinedDir::make_symlink(const std::string& relative, const std::string& what,
                               const std::filesystem::path& target) const {
  const std::string normal = check(relative, what);
  auto [parent, name] = parent_of(normal, relative, what);
  if (!parent) fail(ENOENT, relative, what, label_);
  if (::symlinkat(target.c_str(), parent.get(), name.c_str()) == 0) return true;
  if (errno == EEXIST) return false;
  fail(errno, relative, what, label_);
}

bool ConfinedDir::remove_file(const std::string& relative, const std::string& what) const {
  const std::string normal = check(relative, what);
  auto [parent, name] = parent_of(normal, relative, what);
  if (!parent) return false;
  if (::unlinkat(parent.get(), name.c_str(), 0) == 0) return true;
  if (errno == ENOENT) return false;
  if (errno == EISDIR) throw Conflict(what + " '" + relative + "' is a folder in " + label_ + ".");
  fail(errno, relative, what, label_);
}

bool ConfinedDir::remove_dir(const std::string& relative, const std::string& what) const {
  const std::string normal = check(relative, what);
  auto [parent, name] = parent_of(normal, relative, what);
  if (!parent) return false;
  if (::unlinkat(parent.get(), name.c_str(), AT_REMOVEDIR) == 0) return true;
  if (errno == ENOENT) return false;
  if (errno == ENOTEMPTY || errno == EEXIST) throw Conflict(what + " '" + relative + "' is not empty in " + label_ + ".");
  if (errno == ENOTDIR) throw Conflict(what + " '" + relative + "' is not a folder in " + label_ + ".");
  fail(errno, relative, what, label_);
}

namespace {

// Empties the folder open as `fd`: subfolders are entered with O_NOFOLLOW, links are unlinked.
void remove_contents(int fd, const std::string& where) {
  const int list_fd = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* dir = list_fd < 0 ? nullptr : ::fdopendir(list_fd);
  if (!dir) {
    if (list_fd >= 0) ::close(list_fd);
    throw SystemError("Cannot list '" + where + "': " + std::strerror(errno));
  }
  std::vector<std::string> names;
  while (const dirent* d = ::readdir(dir))
    if (std::strcmp(d->d_name, ".") != 0 && std::strcmp(d->d_name, "..") != 0) names.emplace_back(d->d_name);
  ::closedir(dir);
  for (const auto& name : names) {
    struct stat st{};
    if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      UniqueFd sub(::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub) throw SystemError("Cannot remove '" + where + "/" + name + "': " + std::strerror(errno));
      remove_contents(sub.get(), where + "/" + name);
    }
    if (::unlinkat(fd, name.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0 && errno != ENOENT)
      throw SystemError("Cannot remove '" + where + "/" + name + "': " + std::strerror(errno));
  }
}

}  // namespace

bool ConfinedDir::remove_tree(const std::string& relative, const std::string& what) const {
  const std::string normal = check(relative, what);
  auto [parent, name] = parent_of(normal, relative, what);
  if (!parent) return false;
  struct stat st{};
  if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return false;
    fail(errno, relative, what, label_);
  }
  if (S_ISDIR(st.st_mode)) {
    UniqueFd sub(::openat(parent.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub) fail(errno, relative, what, label_);
    remove_contents(sub.get(), normal);
  }
  if (::unlinkat(parent.get(), name.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0 && errno != ENOENT)
    fail(errno, relative, what, label_);
  return true;
}

bool is_within(const std::filesystem::path& candidate, const std::filesystem::path& root) {
  auto c = candidate.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++c) {
    if (r->empty()) continue;  // trailing separator
    if (c == candidate.end() || *c != *r) return false;
  }
  return true;
}

}  // namespace batchai
