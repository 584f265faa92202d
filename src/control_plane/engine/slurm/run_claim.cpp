// The run's lock (run_claim.hpp); the claim itself is recorded in the jobs table (store/jobs.cpp).
#include "run_claim.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "batchai/common/errors.hpp"

namespace batchai::control_plane::jobs_detail {

RunLock::RunLock(const std::filesystem::path& file) {
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd_ < 0) throw SystemError("Cannot open the run lock " + file.string() + " of the job.");
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

bool RunLock::try_take() {
  if (!held_) held_ = ::flock(fd_, LOCK_EX | LOCK_NB) == 0;
  return held_;
}

}  // namespace batchai::control_plane::jobs_detail
