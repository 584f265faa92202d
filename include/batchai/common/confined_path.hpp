// The one confinement rule for every path built from user or job data (file share paths, blob
// names, job output files, mount paths): a root folder opened once, and relative paths that may
// not leave it — no absolute path, no '..', no symbolic link that leads out. Resolution happens on
// file descriptors (openat2 RESOLVE_BENEATH, or an O_NOFOLLOW walk), so there is no check-then-use race.
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace batchai {

// An owned file descriptor (closed on destruction).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// One entry of a confined folder: `link` is its lstat (a symlink is listed as what it is);
// `target` is what a symlink leads to when it stays inside the root (nullopt when it leads out
// or dangles), else the entry itself.
struct ConfinedEntry {
  std::string name;
  struct stat link{};
  std::optional<struct stat> target;
  bool is_symlink() const { return S_ISLNK(link.st_mode); }
  bool is_dir() const { return target && S_ISDIR(target->st_mode); }
  bool is_file() const { return target && S_ISREG(target->st_mode); }
};

// A folder opened as a root: every path given to it resolves beneath it or is refused with a
// typed InvalidArgument whose message names the rule and the root (`label`, e.g. "the share 'data'").
// Paths use '/'; "" and "." name the root itself.
class ConfinedDir {
 public:
  // Opens a folder the program built (not user data); nullopt when it is not an existing folder.
  static std::optional<ConfinedDir> open(const std::filesystem::path& root, std::string label);

  const std::filesystem::path& path() const { return path_; }
  const std::string& label() const { return label_; }
  int fd() const { return fd_.get(); }

  // The rule itself: refuses absolute paths, '..' and NUL bytes; returns the normalised path
  // ("." for the root). `what` starts the message, e.g. "The file path".
  std::string check(const std::string& relative, const std::string& what) const;

  // A sub-folder (symlinks followed only while they stay inside); nullopt when missing or not a
  // folder. The result is a root of its own: its lookups stay beneath the sub-folder.
  std::optional<ConfinedDir> open_dir(const std::string& relative, const std::string& what) const;
  // A regular file for reading; nullopt when missing or not a regular file.
  std::optional<UniqueFd> open_file(const std::string& relative, const std::string& what) const;
  // stat of what `relative` resolves to inside the root; nullopt when missing.
  std::optional<struct stat> stat(const std::string& relative, const std::string& what) const;
  // lstat of the entry itself; nullopt when missing.
  std::optional<struct stat> lstat(const std::string& relative, const std::string& what) const;
  // Entries of this folder sorted by name (byte order); `hide` drops names (e.g. upload temporaries).
  std::vector<ConfinedEntry> list(const std::function<bool(const std::string&)>& hide = {}) const;

  // mkdir of the last component (its parent must exist): true when created, false when a folder was there.
  bool make_dir(const std::string& relative, const std::string& what) const;
  // mkdir -p beneath the root.
  void make_dirs(const std::string& relative, const std::string& what) const;
  // Writes `relative` atomically from `source_fd` (read to its end): a unique O_EXCL|O_NOFOLLOW
  // temporary beside it, fsync, renameat into place (the last writer wins); the temporary never
  // survives a failure. `mode` is the new file's permission bits.
  void replace_file(const std::string& relative, const std::string& what, int source_fd, mode_t mode = 0644) const;
  // A symbolic link at `relative` (its parent must exist) to `target`, a path the program built:
  // true when made, false when something already has that name.
  bool make_symlink(const std::string& relative, const std::string& what, const std::filesystem::path& target) const;
  // unlink of a file or symlink (never its target): false when missing.
  bool remove_file(const std::string& relative, const std::string& what) const;
  // rmdir: false when missing; SystemError with ENOTEMPTY when not empty.
  bool remove_dir(const std::string& relative, const std::string& what) const;
  // rm -r of `relative` without following any symlink: false when missing.
  bool remove_tree(const std::string& relative, const std::string& what) const;

 private:
  ConfinedDir(UniqueFd fd, std::filesystem::path path, std::string label)
      : fd_(std::move(fd)), path_(std::move(path)), label_(std::move(label)) {}
  // Resolves the parent of `normal` (checked) to a folder fd and returns it with the last name.
  std::pair<UniqueFd, std::string> parent_of(const std::string& normal, const std::string& relative,
                                             const std::string& what) const;

  UniqueFd fd_;
  std::filesystem::path path_;
  std::string label_;
};

// The rule on its own, for paths checked before any root exists (mount paths, job file fields):
// refuses absolute paths, '..' and NUL bytes, naming `label` ("the share 'data'") in the message;
// returns the normalised path ("." for the root itself).
std::string confine_relative(const std::string& relative, const std::string& what, const std::string& label);

// True for the temporaries replace_file leaves while it writes (listings hide them).
bool is_upload_temporary(const std::string& name);

// True when `candidate` is `root` or lies below it, comparing the words of the two paths as they are
// (no file system access: callers pass canonical or self-made paths).
bool is_within(const std::filesystem::path& candidate, const std::filesystem::path& root);

// Copies an open file from its current offset to its end into `out_fd`, in bounded memory.
void copy_fd(int in_fd, int out_fd);

namespace confined_detail {
// Forces the component-by-component walk instead of openat2 (tests cover both paths).
void force_walk(bool on);
}  // namespace confined_detail

}  // namespace batchai
