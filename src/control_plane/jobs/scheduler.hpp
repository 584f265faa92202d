// The job scheduler (run by every ControlPlane::reconcile, through Jobs::schedule): dead supervisors fail their jobs (their processes killed and
// confirmed gone first), nodes still held by ended jobs are freed once their processes are gone,
// queued jobs get nodeCount idle nodes of their cluster at once (priority, then creation order),
// and auto-scale clusters are told how many nodes their queued and running jobs need.
// A job's supervisor process is started when the job gets its nodes, or earlier when it is among
// the first of its cluster's queue (as many as the cluster has nodes: they start on a wake-up, and
// the head's reconciles keep the simulation's clock going); the other queued jobs hold no process,
// so a queue of thousands costs rows, not processes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace batchai::control_plane {

class Backends;
class ClusterDocs;
class Context;

class Scheduler {
 public:
  Scheduler(const Context& cx, const Backends& backends, const ClusterDocs& docs)
      : cx_(cx), backends_(backends), docs_(docs) {}
  void step();

 private:
  struct Pending;
  Pending read_pending(std::int64_t now);
  void fail_dead_supervisors(Pending& pending, std::int64_t now);
  void free_held_nodes(Pending& pending);
  // Gives queued jobs of the cluster their nodes (gang, in order); returns the keys started.
  std::vector<std::string> place_queued(std::int64_t cluster, std::int64_t now);
  // Starts a supervisor for each job where none holds the job's lock (or is being started), and
  // with `wake` wakes the ones there are; a job whose supervisor cannot be started fails (its
  // nodes freed).
  void supervise(const std::vector<std::string>& job_keys, std::int64_t now, bool wake);
  bool still_unfinished(const std::string& job_key);
  void update_auto_scale_demand();

  const Context& cx_;
  const Backends& backends_;
  const ClusterDocs& docs_;
};

}  // namespace batchai::control_plane
