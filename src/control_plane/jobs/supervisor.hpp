// The detached per-job supervisor (`batchai _supervise --job-key K`): holds the job's lock for
// its lifetime, waits until the scheduler gives the job its nodes, links the job-level mounts,
// runs the launch plan with runtime::supervise_job inside the job's containment (cgroup or
// child subreaper, marker variable) while a watcher thread stops every job process on
// terminate/delete/lost nodes, kills what is left, records the outcome (even on a full disk),
// frees the nodes and reconciles.
#pragma once
#include <string>

namespace batchai::control_plane {

class ControlPlane;

class Supervisor {
 public:
  explicit Supervisor(ControlPlane& cp);
  // Returns the process exit code (0 unless the supervisor itself could not work).
  int run(const std::string& job_key);

 private:
  ControlPlane& cp_;
};

}  // namespace batchai::control_plane
