// The claim of a job's run as the store records it, and the run's lock (run_claim.hpp).
#include "run_claim.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "batchai/common/errors.hpp"

namespace batchai::control_plane::jobs_detail {

bool record_run_claim(Store& store, const std::string& job_key, const std::string& who) {
  store.prepare("UPDATE jobs SET run_claim = ? WHERE job_key = ? AND run_claim IS NULL")
      .bind(1, who.substr(0, 4000))
      .bind(2, job_key)
      .run();
  return store.changes() == 1;
}

std::optional<std::string> run_claim(Store& store, const std::string& job_key) {
  auto st = store.prepare("SELECT run_claim FROM jobs WHERE job_key = ?");
  st.bind(1, job_key);
  return st.step() ? st.optional_text(0) : std::nullopt;
}

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
