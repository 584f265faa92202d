#include "http/private_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "batchai/common/errors.hpp"
#include "http/encoding.hpp"

namespace batchai::serve {

void make_private_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir.parent_path(), ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw SystemError("Cannot create the folder " + dir.string() + ": " + std::strerror(errno));
  if (!std::filesystem::is_directory(dir, ec)) throw SystemError(dir.string() + " is not a folder.");
}

void write_private_file(const std::filesystem::path& path, const std::string& content) {
  const std::filesystem::path tmp = path.string() + ".tmp-" + hex_encode(random_bytes(6));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw SystemError("Cannot write " + tmp.string() + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw SystemError("Cannot write " + tmp.string() + ": " + std::strerror(saved));
    }
    done += static_cast<std::size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    throw SystemError("Cannot write " + path.string() + ": " + std::strerror(saved));
  }
}

}  // namespace batchai::serve
