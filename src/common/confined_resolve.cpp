// How confined paths are looked up (see confined_path.hpp): openat2(RESOLVE_BENEATH) where the
// kernel has it, else a walk that opens one component at a time with O_NOFOLLOW and expands
// symlinks itself under the same rule (no absolute target, no '..' above the root), so both
// paths accept and refuse the same things. Also the small fd helpers.
#include "confined_resolve.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/errors.hpp"

namespace batchai {
namespace confined_internal {

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string>& parts, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += (i ? "/" : "") + parts[i];
  return out.empty() ? "." : out;
}

}  // namespace confined_internal

namespace {

using confined_internal::split;

std::atomic<bool> g_force_walk{false};
std::atomic<bool> g_no_openat2{false};  // set once the kernel answers ENOSYS
constexpr int kMaxLinks = 40;           // as the kernel's ELOOP limit

// openat2 beneath `root`; -1 with errno ENOSYS when the kernel lacks it.
int openat2_beneath(int root, const char* path, int flags, mode_t mode) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
  how.mode = (flags & O_CREAT) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, root, path, &how, sizeof how));
}

// The fallback: one component at a time, symlinks expanded here under the same rule.
int walk_beneath(int root, const std::string& path, int flags, mode_t mode) {
  std::vector<UniqueFd> stack;  // folders entered below the root; empty = at the root
  auto cur = [&] { return stack.empty() ? root : stack.back().get(); };
  auto parts = split(path);
  std::deque<std::string> todo(parts.begin(), parts.end());
  int links = 0;
  const bool follow_last = !(flags & O_NOFOLLOW);
  while (!todo.empty()) {
    const std::string part = todo.front();
    todo.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      if (stack.empty()) {
        errno = EXDEV;  // above the root
        return -1;
      }
      stack.pop_back();
      continue;
    }
    const bool last = std::none_of(todo.begin(), todo.end(), [](const std::string& p) { return p != "."; });
    const int how = last ? (flags | O_NOFOLLOW | O_CLOEXEC) : (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int fd = ::openat(cur(), part.c_str(), how, mode);
    bool is_link = false;
    if (fd >= 0 && (how & O_PATH)) {  // O_PATH|O_NOFOLLOW opens the link itself
      struct stat st{};
      is_link = ::fstat(fd, &st) == 0 && S_ISLNK(st.st_mode);
      if (is_link) ::close(fd);
    } else if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
      const int saved = errno;
      struct stat st{};
      is_link = ::fstatat(cur(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
      errno = saved;
    }
    if (!is_link) {
      if (fd < 0) return -1;
      if (last) {
        stack.clear();
        return fd;
      }
      stack.emplace_back(fd);
      continue;
    }
    if (last && !follow_last) {
      errno = ELOOP;
      return -1;
    }
    if (++links > kMaxLinks) {
      errno = ELOOP;
      return -1;
    }
    char target[4096];
    const ssize_t n = ::readlinkat(cur(), part.c_str(), target, sizeof target - 1);
    if (n < 0) return -1;
    const std::string text(target, static_cast<std::size_t>(n));
    if (text.empty() || text.front() == '/') {
      errno = EXDEV;  // an absolute target leaves the root
      return -1;
    }
    auto expanded = split(text);
    todo.insert(todo.begin(), expanded.begin(), expanded.end());
  }
  // Only "." / ".." were left: what they name is the current folder.
  return ::openat(cur(), ".", (flags & ~(O_NOFOLLOW | O_CREAT | O_EXCL)) | O_CLOEXEC);
}

}  // namespace

int confined_internal::open_beneath(int root, const std::string& normal, int flags, mode_t mode) {
  if (!g_force_walk && !g_no_openat2) {
    const int fd = openat2_beneath(root, normal.c_str(), flags, mode);
    if (fd >= 0 || errno != ENOSYS) return fd;
    g_no_openat2 = true;
  }
  return walk_beneath(root, normal, flags, mode);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

bool is_upload_temporary(const std::string& name) {
  return (name.starts_with(".") && name.find(".batchai-upload.") != std::string::npos) ||
         name.ends_with(".batchai-upload");
}

void copy_fd(int in_fd, int out_fd) {
  std::vector<char> buffer(1 << 16);
  for (;;) {
    const ssize_t n = ::read(in_fd, buffer.data(), buffer.size());
    if (n == 0) return;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw SystemError(std::string("Cannot read: ") + std::strerror(errno));
    }
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(out_fd, buffer.data() + done, static_cast<std::size_t>(n - done));
      if (w < 0) {
        if (errno == EINTR) continue;
        throw SystemError(std::string("Cannot write: ") + std::strerror(errno));
      }
      done += w;
    }
  }
}

namespace confined_detail {
void force_walk(bool on) { g_force_walk = on; }
}  // namespace confined_detail

}  // namespace batchai
