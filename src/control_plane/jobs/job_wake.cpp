// A FIFO per waiting supervisor (see job_wake.hpp).
#include "jobs/job_wake.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace batchai::control_plane {

JobWake::JobWake(const std::filesystem::path& path) {
  if (::mkfifo(path.c_str(), 0600) != 0 && errno != EEXIST) return;
  // O_RDWR: the FIFO always has a writer (this one), so poll() reports data, never a hang-up.
  const int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) {
    ::close(fd);
    return;
  }
  fd_ = fd;
}

JobWake::~JobWake() {
  if (fd_ >= 0) ::close(fd_);
}

void JobWake::wait(std::chrono::milliseconds timeout) {
  if (fd_ < 0) {
    std::this_thread::sleep_for(timeout);
    return;
  }
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) > 0 && (p.revents & POLLIN) != 0) {
    char drain[64];
    while (::read(fd_, drain, sizeof drain) > 0) {
    }
  }
}

long write_without_sigpipe(int fd, const void* data, std::size_t size) {
  sigset_t pipe_only, before, pending;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &before);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;  // someone else's: left alone
  const ssize_t written = ::write(fd, data, size);
  const int write_errno = errno;
  if (written < 0 && write_errno == EPIPE && !was_pending) {
    const timespec now{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &now) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  errno = write_errno;
  return static_cast<long>(written);
}

void wake_job(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;  // no FIFO (the supervisor polls only), or no reader (ENXIO)
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
    const char byte = 1;
    (void)write_without_sigpipe(fd, &byte, 1);  // a full FIFO already holds a wake-up
  }
  ::close(fd);
}

}  // namespace batchai::control_plane
