// The user's own files on the way in and out of shares and containers, and the paths shown for them.
#include "local_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/errors.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

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

}  // namespace batchai::control_plane
