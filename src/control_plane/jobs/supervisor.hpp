// The detached per-job supervisor (`batchai _supervise --job-key K`): holds the job's lock for
// its lifetime, waits until the scheduler gives the job its nodes, links the job-level mounts,
// runs the launch plan with runtime::supervise_job inside the job's containment (cgroup or
// child subreaper, marker variable) while a watcher thread stops every job process on
// terminate/delete/lost nodes, kills what is left, records the outcome (even on a full disk),
// frees the nodes and places the cluster's queue on them in the same transaction. Then it lets
// the job's lock go and, up to a bound, supervises one of the jobs it placed itself.
#pragma once
#include <string>

namespace batchai::control_plane {

class ClusterDocs;
class Context;
class Reconciler;
class Scheduler;

class Supervisor {
 public:
  Supervisor(const Context& cx, Reconciler& reconciler, Scheduler& scheduler, const ClusterDocs& docs)
      : cx_(cx), reconciler_(reconciler), scheduler_(scheduler), docs_(docs) {}
  // Returns the process exit code (0 unless the supervisor itself could not work).
  int run(const std::string& job_key);

 private:
  const Context& cx_;
  Reconciler& reconciler_;
  Scheduler& scheduler_;
  const ClusterDocs& docs_;
};

}  // namespace batchai::control_plane
