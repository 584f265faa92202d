// Waiting places of idle supervisors (idle_supervisors.hpp).
#include "jobs/idle_supervisors.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <string>

namespace fs = std::filesystem;

namespace batchai::control_plane::jobs_detail {

namespace {

// A few places per cluster: enough for the supervisors of a burst's jobs that end together.
constexpr int kPlacesPerCluster = 4;

fs::path place_file(const NodeLayout& layout, std::int64_t cluster, int place, const char* suffix) {
  return layout.home() / "supervisors" / (std::to_string(cluster) + "-" + std::to_string(place) + suffix);
}

// The place a waiter holds, or -1.
int held_place(const NodeLayout& layout, std::int64_t cluster) {
  for (int place = 0; place < kPlacesPerCluster; ++place) {
    const int fd = ::open(place_file(layout, cluster, place, ".lock").c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0;
    ::close(fd);
    if (held) return place;
  }
  return -1;
}

}  // namespace

IdleSupervisorPlace::IdleSupervisorPlace(const NodeLayout& layout, std::int64_t cluster) {
  std::error_code ec;
  fs::create_directories(layout.home() / "supervisors", ec);
  for (int place = 0; place < kPlacesPerCluster; ++place) {
    const int fd = ::open(place_file(layout, cluster, place, ".lock").c_str(),
                          O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      continue;
    }
    lock_fd_ = fd;
    wake_ = std::make_unique<JobWake>(place_file(layout, cluster, place, ".wake"));
    wake_->wait(std::chrono::milliseconds(0));  // a wake-up meant for an earlier waiter
    return;
  }
}

IdleSupervisorPlace::~IdleSupervisorPlace() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void IdleSupervisorPlace::wait_then_leave(std::chrono::milliseconds timeout) {
  if (lock_fd_ < 0) return;
  wake_->wait(timeout);
  ::close(lock_fd_);
  lock_fd_ = -1;
}

bool idle_supervisor_waits(const NodeLayout& layout, std::int64_t cluster) { return held_place(layout, cluster) >= 0; }

bool wake_idle_supervisor(const NodeLayout& layout, std::int64_t cluster) {
  const int place = held_place(layout, cluster);
  if (place < 0) return false;
  wake_job(place_file(layout, cluster, place, ".wake"));
  return true;
}

}  // namespace batchai::control_plane::jobs_detail
