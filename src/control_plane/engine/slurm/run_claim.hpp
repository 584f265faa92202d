// A job's run starts once (docs/slurm.md, "A job's run starts once"): the first runner of a Slurm
// job's batch script takes the run's lock and claims the run by an exclusive create in the job's
// exchange folder (run_exchange.hpp), and holds the lock while the run goes on. A batch script
// Slurm starts again (a restarted controller that lost the allocation shows the job PENDING and
// schedules it anew) finds the run taken: it runs nothing and waits for the first run to end.
// The login host copies the claim into the store's `run_claim` column when it folds the records.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "store/jobs.hpp"

namespace batchai::control_plane::jobs_detail {

// The claim as the store records it: record_run_claim and run_claim (store/jobs.hpp).

// The lock a runner holds while the job's run goes on (flock on run.lock in the job's exchange
// folder): one that can be taken means no runner of the job is alive.
class RunLock {
 public:
  explicit RunLock(const std::filesystem::path& file);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  // Takes the lock if it is free (never waits); true while this process holds it.
  bool try_take();

 private:
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace batchai::control_plane::jobs_detail
