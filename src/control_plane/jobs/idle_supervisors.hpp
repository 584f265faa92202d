// Supervisors that wait a moment for their cluster's next job instead of exiting. When jobs end
// faster than they come, a supervisor finds nothing to place on the nodes it freed; the next
// job's `job create` would start a new supervisor process for it. Instead the supervisor takes
// one of a few waiting places of its cluster ($BATCHAI_HOME/supervisors/<cluster>-<n>.lock, with
// a FIFO beside it) for a short while. Whoever places a job of the cluster and finds a place held
// wakes it instead of starting a process. The waiter lets its place go *before* it looks for
// placed jobs without a supervisor and claims one (claim_supervisor_start): a placement that saw
// the place held was committed before the waiter let go, so the look finds it; one that saw it
// free starts a process as before, and the claim keeps the two from both running the job.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>

#include "batchai/control_plane/node_layout.hpp"
#include "jobs/job_wake.hpp"

namespace batchai::control_plane::jobs_detail {

// How long a supervisor with nothing to run waits for its cluster's next job.
inline constexpr std::chrono::milliseconds kIdleSupervisorWait{300};

class IdleSupervisorPlace {
 public:
  // Takes a free waiting place of the cluster; held() is false when every place is taken.
  IdleSupervisorPlace(const NodeLayout& layout, std::int64_t cluster);
  ~IdleSupervisorPlace();
  IdleSupervisorPlace(const IdleSupervisorPlace&) = delete;
  IdleSupervisorPlace& operator=(const IdleSupervisorPlace&) = delete;
  bool held() const { return lock_fd_ >= 0; }
  // Waits until woken or until `timeout`, then lets the place go.
  void wait_then_leave(std::chrono::milliseconds timeout);

 private:
  int lock_fd_ = -1;
  std::unique_ptr<JobWake> wake_;
};

// Whether a supervisor waits for the cluster's next job (a create then starts none of its own).
bool idle_supervisor_waits(const NodeLayout& layout, std::int64_t cluster);
// Wakes one supervisor waiting for the cluster's next job; false when none waits.
bool wake_idle_supervisor(const NodeLayout& layout, std::int64_t cluster);

}  // namespace batchai::control_plane::jobs_detail
