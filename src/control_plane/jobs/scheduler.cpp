// The scheduler (run by every ControlPlane::reconcile): dead supervisors fail their jobs (their processes killed and
// confirmed gone first), nodes still held by ended jobs are freed once their processes are gone,
// queued jobs get nodeCount idle nodes of their cluster at once (priority, then creation order),
// and auto-scale clusters are told how many nodes their queued and running jobs need.
#include "scheduler.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "batchai/common/clock.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/log.hpp"
#include "jobs/idle_supervisors.hpp"
#include "jobs/job_wake.hpp"
#include "cluster_docs.hpp"
#include "context.hpp"
#include "engine/cluster_engine.hpp"
#include "job_processes.hpp"
#include "store/jobs.hpp"

namespace batchai::control_plane {

using namespace detail;
using namespace jobs_detail;

namespace {

// A supervisor that never took its lock within this time of its job's start is taken as never started.
constexpr std::int64_t kSupervisorStartGraceUs = 60LL * 1000 * 1000;
// A placed job's supervisor (started, or a waiting one woken) holds its lock within milliseconds;
// one still without any after this gets a supervisor started (its waiter died, say).
constexpr std::int64_t kHandOffUs = 2LL * 1000 * 1000;

// What the scheduler reads of a queued job on each step: from the jobs_schedule index alone (a
// queue of hundreds of documents parsed each time was most of a `job create`).
using QueuedEntry = QueuedJob;

// The scheduler's order: priority, then creation, then row id (as place_queued reads the queue).
bool comes_first(const QueuedEntry& a, const QueuedEntry& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.created_us != b.created_us) return a.created_us < b.created_us;
  return a.id < b.id;
}

}  // namespace

struct Scheduler::Pending {
  std::vector<std::string> dead;  // keys of running jobs whose supervisor is gone
  std::vector<std::string> unsupervised;  // placed a while ago, never supervised, within the grace
  // The first queued job of each cluster batchai schedules where nothing else would start it:
  // its supervisor waits ready, reconciling (a resize's nodes come with time).
  std::vector<std::string> heads;
  std::vector<std::string> held;  // keys of ended (or deleted) jobs whose nodes are not free yet
  std::vector<std::int64_t> clusters_with_queue;
};

void Scheduler::step() {
  const std::int64_t now = cx_.now_us();
  Pending pending = read_pending(now);
  if (!pending.dead.empty()) fail_dead_supervisors(pending, now);
  if (!pending.held.empty()) free_held_nodes(pending);
  auto& queued = pending.clusters_with_queue;
  std::sort(queued.begin(), queued.end());
  queued.erase(std::unique(queued.begin(), queued.end()), queued.end());
  std::set<std::string> placed;
  for (std::int64_t cluster : queued) {
    if (cluster == 0) continue;
    auto keys = place_queued(cluster, now);
    supervise(keys, now, true, cluster);  // their nodes are committed
    placed.insert(keys.begin(), keys.end());
  }
  // Heads placed just now were handled above (perhaps handed to a waiting supervisor).
  auto& heads = pending.heads;
  heads.erase(std::remove_if(heads.begin(), heads.end(), [&](const std::string& k) { return placed.count(k) != 0; }),
              heads.end());
  supervise(heads, now, false);  // waiting ones are not woken: nothing changed for them
  supervise(pending.unsupervised, now, false);
  update_auto_scale_demand();
}

// A read first: most calls find nothing to change and never take the write lock.
Scheduler::Pending Scheduler::read_pending(std::int64_t now) {
  Store& store = cx_.store();
  return store.read([&] {
    Pending p;
    std::map<std::int64_t, std::vector<QueuedEntry>> queued;  // cluster -> its queued jobs
    std::set<std::int64_t> busy;                                // clusters with a supervised running job
    for (QueuedEntry& j : queued_jobs(store)) {
      // An engine with its own queue runs its jobs without a supervisor here.
      if (engines_.of(j.engine).schedules_itself()) continue;
      queued[j.cluster_id].push_back(std::move(j));  // needs no supervisor, except a head (below)
    }
    for (ActiveJob& j : active_jobs(store)) {
      if (engines_.of(j.engine).schedules_itself()) continue;
      if (j.cluster_id) busy.insert(*j.cluster_id);
      // A running job with no supervisor pid yet is given time for its supervisor to start
      // (counted from when it got its nodes, its last state change).
      std::int64_t started_us = j.created_us;
      if (j.state_changed)
        if (auto t = parse_iso(*j.state_changed)) started_us = to_us(*t);
      if (!j.sup_pid) {
        if (now - started_us <= kHandOffUs || supervisor_alive(cx_.layout(), j.key)) continue;
        // Never supervised: started again while the grace lasts (the claim keeps a start in
        // progress from doubling), failed after it.
        (now - started_us > kSupervisorStartGraceUs ? p.dead : p.unsupervised).push_back(std::move(j.key));
      } else if (!supervisor_alive(cx_.layout(), j.key)) {
        p.dead.push_back(std::move(j.key));
      }
    }
    // The head of a cluster's queue waits with a supervisor only where no supervisor of a running
    // job will place the queue when its job ends, or where the cluster's nodes change with time
    // (someone must keep reconciling for them to come).
    for (auto& [cluster, jobs] : queued) {
      if (busy.count(cluster) != 0 && !cluster_pending(store, cluster)) continue;
      p.heads.push_back(std::min_element(jobs.begin(), jobs.end(), comes_first)->key);
    }
    // release_nodes keeps a job's nodes while one of its processes survives SIGKILL: retried here.
    p.held = keys_holding_nodes_while_not_running(store);
    p.clusters_with_queue = clusters_with_queue_and_idle_node(store);
    return p;
  });
}

// Read again just before a supervisor is started: a short job may have been placed, run and
// ended by its own supervisor since the step read it (a start then would only find it done).
bool Scheduler::still_unfinished(const std::string& job_key) {
  Store& store = cx_.store();
  return store.read([&] {
    const auto state = job_state(store, job_key);
    return state.has_value() && is_unfinished(*state);
  });
}

void Scheduler::supervise(const std::vector<std::string>& job_keys, std::int64_t now, bool wake,
                          std::optional<std::int64_t> placed_on) {
  for (const std::string& key : job_keys) {
    const bool alive = supervisor_alive(cx_.layout(), key);
    // A supervisor waiting for the cluster's next job looks for it once it lets its place go.
    if (placed_on && !alive && wake_idle_supervisor(cx_.layout(), *placed_on)) continue;
    // Alive, or being started by another process (it reads the job's state once it holds its lock).
    if (alive || !still_unfinished(key) || !claim_supervisor_start(cx_.layout(), key)) {
      if (wake) wake_job(state_dir(cx_.layout(), key) / kJobWakeFile);
      continue;
    }
    try {
      spawn_supervisor(cx_, key);
    } catch (const Error& e) {
      Store& store = cx_.store();
      store.write([&] {
        auto j = load_job_by_key(store, key);
        if (!j || !is_unfinished(j->state)) return;
        finish_job(*j, false, std::nullopt,
                   job_error("SupervisorStartFailed", std::string("Could not start the job's supervisor: ") + e.what()), now);
        save_job(store, *j);
        for (auto cluster : release_nodes(store, key)) docs_.refresh(cluster);
      });
    }
  }
}

void Scheduler::fail_dead_supervisors(Pending& pending, std::int64_t now) {
  Store& store = cx_.store();
  store.write([&] {
    for (const auto& key : pending.dead) {
      auto j = load_job_by_key(store, key);
      // Re-checked under the write lock: the supervisor may have finished in between.
      if (!j || !is_unfinished(j->state)) continue;
      if (supervisor_alive(cx_.layout(), j->key)) continue;
      const std::string pid = j->sup_pid ? "pid " + std::to_string(*j->sup_pid) : std::string();
      finish_job(*j, false, std::nullopt, supervisor_died_error(pid, j->state), now);
      save_job(store, *j);
      // Kills what is left of the job (cgroup, marker) and confirms it before freeing the nodes.
      for (auto cluster : release_nodes(store, j->key)) docs_.refresh(cluster);
      pending.clusters_with_queue.push_back(j->cluster_id.value_or(0));
    }
  });
}

void Scheduler::free_held_nodes(Pending& pending) {
  Store& store = cx_.store();
  store.write([&] {
    for (const auto& key : pending.held) {
      // Re-checked under the write lock: a running job's processes are never touched here.
      auto j = load_job_by_key(store, key);
      if (j && j->state != JobState::kQueued && j->state != JobState::kSucceeded && j->state != JobState::kFailed) continue;
      for (auto cluster : release_nodes(store, key, std::chrono::milliseconds(200))) {
        docs_.refresh(cluster);
        pending.clusters_with_queue.push_back(cluster);
      }
    }
  });
}

std::vector<std::string> Scheduler::place_queued(std::int64_t cluster, std::int64_t now) {
  Store& store = cx_.store();
  std::vector<std::string> started;
  store.write([&] {
    const std::vector<std::int64_t> idle = free_idle_nodes(store, cluster);
    const std::optional<int> capacity = cluster_capacity(store, cluster);
    if (!capacity) return;
    // Keys and sizes only: the documents of the jobs that get nodes are read, not the whole queue's.
    const std::vector<std::pair<std::string, int>> queue = queued_keys_and_sizes(store, cluster);
    std::size_t next = 0;
    bool changed = false;
    for (const auto& [key, node_count] : queue) {
      // A job larger than the cluster can ever be waits without blocking the others.
      if (node_count > *capacity) continue;
      if (static_cast<std::size_t>(node_count) > idle.size() - next) break;  // gang: all at once, in order
      auto job = load_job_by_key(store, key);
      if (!job) continue;
      for (int i = 0; i < node_count; ++i)
        give_node(store, idle[next++], key);
      set_state(*job, JobState::kRunning, now);
      job->doc["executionInfo"] = {{"endTime", nullptr}, {"errors", nullptr}, {"exitCode", nullptr}, {"startTime", iso_us(now)}};
      save_job(store, *job);
      started.push_back(key);
      changed = true;
    }
    if (changed) docs_.refresh(cluster);
  });
  return started;
}

// Auto-scale demand: every node the queued and running jobs of each auto-scale cluster need.
void Scheduler::update_auto_scale_demand() {
  Store& store = cx_.store();
  const std::vector<std::pair<std::int64_t, int>> demand = store.read([&] { return changed_auto_scale_demands(store); });
  for (const auto& [cluster, nodes] : demand) docs_.set_auto_scale_demand(cluster, nodes);
}

}  // namespace batchai::control_plane
