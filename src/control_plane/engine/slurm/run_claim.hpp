// A job's run starts once (docs/slurm.md, "A job's run starts once"): the first runner of a Slurm
// job's batch script claims the run by the job's key, atomically in the store, and holds a lock on
// the shared home while the run goes on. A batch script Slurm starts again (a restarted controller
// that lost the allocation shows the job PENDING and schedules it anew) finds the run taken: it
// runs nothing, waits while the first run holds the lock, and ends with the first run's status.
#pragma once
#include <signal.h>

#include <chrono>
#include <optional>
#include <string>

#include "batchai/control_plane/node_layout.hpp"
#include "store.hpp"

namespace batchai::control_plane::jobs_detail {

// Inside a write transaction: claims the job's run for `who`. True for the first claim of a job
// that is queued or running; false when the run was claimed before, or the job has ended.
bool claim_run(Store& store, const std::string& job_key, const std::string& who);
// Who claimed the job's run; nullopt while nobody did.
std::optional<std::string> run_claim(Store& store, const std::string& job_key);

// The lock a runner holds while the job's run goes on (flock on jobs/KEY/slurm-run.lock in the
// shared home): one that can be taken means no runner of the job is alive.
class RunLock {
 public:
  RunLock(const NodeLayout& layout, const std::string& job_key);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  // Takes the lock if it is free (never waits); true while this process holds it.
  bool try_take();

 private:
  int fd_ = -1;
  bool held_ = false;
};

// Waits until the job's runner recorded how the run ended, or `limit` passed; returns at once when
// no run was claimed (nothing runs that could record one).
void await_runner_outcome(Store& store, const std::string& job_key, std::chrono::milliseconds limit);

// The body of a batch script that found the run claimed by another: runs nothing, waits until the
// run's lock is free (or one of `stop_signals` comes: 143), then returns the run's exit status.
// A run that ended without recording how (its runner was killed) is recorded failed, JobRunLost.
int follow_claimed_run(Store& store, RunLock& lock, const std::string& job_key, const sigset_t& stop_signals);

}  // namespace batchai::control_plane::jobs_detail
