// The claim of a job's run and the follower a second batch script becomes (run_claim.hpp).
#include "run_claim.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <thread>

#include "batchai/common/log.hpp"
#include "jobs/job_processes.hpp"
#include "jobs/job_rows.hpp"

namespace batchai::control_plane::jobs_detail {

namespace {
bool has_outcome(const JobRow& job) {
  const Json& slurm = job.private_data.value("slurm", Json());
  return slurm.is_object() && slurm.value("outcome", Json()).is_object();
}
}  // namespace

bool claim_run(Store& store, const std::string& job_key, const std::string& who) {
  // One statement under the write lock: of two runners, exactly one changes the row.
  store
      .prepare("UPDATE jobs SET run_claim = ? WHERE job_key = ? AND run_claim IS NULL AND state IN ('queued', "
               "'running')")
      .bind(1, who)
      .bind(2, job_key)
      .run();
  return store.changes() == 1;
}

std::optional<std::string> run_claim(Store& store, const std::string& job_key) {
  auto st = store.prepare("SELECT run_claim FROM jobs WHERE job_key = ?");
  st.bind(1, job_key);
  return st.step() ? st.optional_text(0) : std::nullopt;
}

RunLock::RunLock(const NodeLayout& layout, const std::string& job_key) {
  const std::filesystem::path dir = state_dir(layout, job_key);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  fd_ = ::open((dir / "slurm-run.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) throw SystemError("Cannot open the run lock of job " + job_key + " in " + dir.string());
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

bool RunLock::try_take() {
  if (!held_) held_ = ::flock(fd_, LOCK_EX | LOCK_NB) == 0;
  return held_;
}

void await_runner_outcome(Store& store, const std::string& job_key, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const bool done = store.read([&] {
      auto job = load_job_by_key(store, job_key);
      return !job || !run_claim(store, job_key) || has_outcome(*job);
    });
    if (done || std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int follow_claimed_run(Store& store, RunLock& lock, const std::string& job_key, const sigset_t& stop_signals) {
  log::warning("Job " + job_key + ": its run was started before (" +
               store.read([&] { return run_claim(store, job_key).value_or("?"); }) +
               "); Slurm started its batch script again, which runs nothing and waits for that run to end.");
  while (!lock.try_take()) {
    const timespec wait{1, 0};
    if (sigtimedwait(&stop_signals, nullptr, &wait) > 0) return 143;  // scancel: nothing of ours runs here
  }
  // The first run is over: its word, or a record that it ended without one.
  return store.write([&] {
    auto job = load_job_by_key(store, job_key);
    if (!job) return 0;
    Json& slurm = job->private_data["slurm"];
    if (!has_outcome(*job)) {
      slurm["outcome"] = {{"succeeded", false},
                          {"exitCode", nullptr},
                          {"errors", job_error("JobRunLost", "The job's run ended without recording how (its runner "
                                                             "was killed); batchai does not start a run twice.")}};
      save_job(store, *job);
    }
    const Json& outcome = slurm["outcome"];
    if (outcome.value("succeeded", false)) return 0;
    const int code = outcome.value("exitCode", Json()).is_number_integer() ? outcome["exitCode"].get<int>() : 1;
    return code >= 1 && code <= 255 ? code : 1;
  });
}

}  // namespace batchai::control_plane::jobs_detail
