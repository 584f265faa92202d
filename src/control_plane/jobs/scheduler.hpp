// The job scheduler (run by every ControlPlane::reconcile, through Jobs::schedule): dead supervisors fail their jobs (their processes killed and
// confirmed gone first), nodes still held by ended jobs are freed once their processes are gone,
// queued jobs get nodeCount idle nodes of their cluster at once (priority, then creation order),
// and auto-scale clusters are told how many nodes their queued and running jobs need.
// A job's supervisor process is started when the job gets its nodes, unless the supervisor of
// the job that freed them runs it (it places the queue on the nodes it frees, in the same
// transaction, and goes on with the next job itself); a cluster's queue head waits with a
// supervisor only where nothing else would start it (no supervised job runs there, or its nodes
// change with time). The other queued jobs hold no process: a queue of thousands costs rows.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace batchai::control_plane {

class Engines;
class ClusterDocs;
class Context;

class Scheduler {
 public:
  Scheduler(const Context& cx, const Engines& engines, const ClusterDocs& docs)
      : cx_(cx), engines_(engines), docs_(docs) {}
  void step();
  // Gives queued jobs of the cluster their nodes (gang, in order); returns the keys placed. A
  // supervisor calls it inside the write transaction that frees its job's nodes, so no other
  // process sees them idle (and starts a supervisor for the job it could run itself).
  std::vector<std::string> place_queued(std::int64_t cluster, std::int64_t now);
  // Starts or wakes the supervisors of jobs placed on the cluster (as a step does for the jobs
  // it places), or hands them to a supervisor waiting for the cluster's next job.
  void start_placed(std::int64_t cluster, const std::vector<std::string>& job_keys, std::int64_t now) {
    supervise(job_keys, now, true, cluster);
  }

 private:
  struct Pending;
  Pending read_pending(std::int64_t now);
  void fail_dead_supervisors(Pending& pending, std::int64_t now);
  void free_held_nodes(Pending& pending);
  // Starts a supervisor for each job where none holds the job's lock (or is being started), and
  // with `wake` wakes the ones there are; a job whose supervisor cannot be started fails (its
  // nodes freed). Jobs placed on `placed_on` go to a supervisor waiting for that cluster's next
  // job when one waits (idle_supervisors.hpp).
  void supervise(const std::vector<std::string>& job_keys, std::int64_t now, bool wake,
                 std::optional<std::int64_t> placed_on = std::nullopt);
  bool still_unfinished(const std::string& job_key);
  void update_auto_scale_demand();

  const Context& cx_;
  const Engines& engines_;
  const ClusterDocs& docs_;
};

}  // namespace batchai::control_plane
