// The job scheduler (run by every ControlPlane::reconcile, through Jobs::schedule): dead supervisors fail their jobs (their processes killed and
// confirmed gone first), nodes still held by ended jobs are freed once their processes are gone,
// queued jobs get nodeCount idle nodes of their cluster at once (priority, then creation order),
// and auto-scale clusters are told how many nodes their queued and running jobs need.
#pragma once

namespace batchai::control_plane {

class ControlPlane;

class Scheduler {
 public:
  explicit Scheduler(ControlPlane& cp);
  void step();

 private:
  ControlPlane& cp_;
};

}  // namespace batchai::control_plane
