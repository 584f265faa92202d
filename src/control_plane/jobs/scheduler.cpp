// The scheduler (run by every ControlPlane::reconcile): dead supervisors fail their jobs (their processes killed and
// confirmed gone first), nodes still held by ended jobs are freed once their processes are gone,
// queued jobs get nodeCount idle nodes of their cluster at once (priority, then creation order),
// and auto-scale clusters are told how many nodes their queued and running jobs need.
#include "scheduler.hpp"

#include <algorithm>
#include <map>

#include "batchai/common/clock.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/log.hpp"
#include "jobs/job_wake.hpp"
#include "cluster_docs.hpp"
#include "context.hpp"
#include "engine/cluster_backend.hpp"
#include "job_processes.hpp"
#include "job_rows.hpp"

namespace batchai::control_plane {

using namespace detail;
using namespace jobs_detail;

namespace {

// A supervisor that never took its lock within this time of its job's start is taken as never started.
constexpr std::int64_t kSupervisorStartGraceUs = 60LL * 1000 * 1000;

// The scheduler's order: priority, then creation, then row id (as place_queued reads the queue).
bool comes_first(const JobRow& a, const JobRow& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.created_us != b.created_us) return a.created_us < b.created_us;
  return a.id < b.id;
}

// When the job got its nodes (its last state change), else when it was made.
std::int64_t since_started_us(const JobRow& job) {
  if (auto t = parse_iso(value_or<std::string>(job.doc, "executionStateTransitionTime", ""))) return to_us(*t);
  return job.created_us;
}

}  // namespace

struct Scheduler::Pending {
  std::vector<JobRow> dead;
  // The first queued jobs of each cluster batchai schedules, as many as it has nodes: the ones
  // that start next, whose supervisors wait ready (a job then starts on a wake-up, not a spawn).
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
  std::vector<std::string> started;  // woken once their nodes are committed
  for (std::int64_t cluster : queued) {
    if (cluster == 0) continue;
    for (auto& key : place_queued(cluster, now)) started.push_back(std::move(key));
  }
  supervise(started, now, true);
  supervise(pending.heads, now, false);  // waiting ones are not woken: nothing changed for them
  update_auto_scale_demand();
}

// A read first: most calls find nothing to change and never take the write lock.
Scheduler::Pending Scheduler::read_pending(std::int64_t now) {
  Store& store = cx_.store();
  return store.read([&] {
    Pending p;
    auto st = store.prepare(std::string(kJobColumns) + "WHERE state IN ('queued', 'running', 'terminating')");
    std::map<std::int64_t, std::vector<JobRow>> queued;  // cluster -> its queued jobs
    while (st.step()) {
      JobRow j = read_job(st);
      // An engine with its own queue runs its jobs without a supervisor here.
      if (backends_.of(j).schedules_itself()) continue;
      if (j.state == JobState::kQueued) {  // needs no supervisor, except the first few (below)
        if (!j.cluster_id) continue;
        queued[*j.cluster_id].push_back(std::move(j));
        continue;
      }
      const bool dead = j.sup_pid ? !supervisor_alive(cx_.layout(), j.key)
                                  : now - since_started_us(j) > kSupervisorStartGraceUs &&
                                        !supervisor_alive(cx_.layout(), j.key);
      if (dead) p.dead.push_back(std::move(j));
    }
    auto n = store.prepare("SELECT count(*) FROM nodes WHERE cluster_id = ? AND state <> 'leaving'");
    for (auto& [cluster, jobs] : queued) {
      n.bind(1, cluster);
      const auto nodes = static_cast<std::size_t>(n.step() ? n.integer(0) : 0);
      while (n.step()) {
      }
      const std::size_t ready = std::min(jobs.size(), std::max<std::size_t>(1, nodes));
      std::partial_sort(jobs.begin(), jobs.begin() + static_cast<std::ptrdiff_t>(ready), jobs.end(), comes_first);
      for (std::size_t i = 0; i < ready; ++i) p.heads.push_back(jobs[i].key);
    }
    // release_nodes keeps a job's nodes while one of its processes survives SIGKILL: retried here.
    auto h = store.prepare(
        "SELECT DISTINCT n.job_key FROM nodes n LEFT JOIN jobs j ON j.job_key = n.job_key WHERE n.job_key IS NOT NULL "
        "AND (j.id IS NULL OR j.state IN ('queued', 'succeeded', 'failed'))");
    while (h.step()) p.held.push_back(h.text(0));
    auto q = store.prepare(
        "SELECT DISTINCT j.cluster_id FROM jobs j WHERE j.state = 'queued' AND j.cluster_id IS NOT NULL AND EXISTS("
        "SELECT 1 FROM nodes n WHERE n.cluster_id = j.cluster_id AND n.state = 'idle' AND n.job_key IS NULL)");
    while (q.step()) p.clusters_with_queue.push_back(q.integer(0));
    return p;
  });
}

// Read again just before a supervisor is started: a short job may have been placed, run and
// ended by its own supervisor since the step read it (a start then would only find it done).
bool Scheduler::still_unfinished(const std::string& job_key) {
  Store& store = cx_.store();
  return store.read([&] {
    auto st = store.prepare("SELECT state FROM jobs WHERE job_key = ?");
    st.bind(1, job_key);
    if (!st.step()) return false;
    const auto state = parse_job_state(st.text(0));
    return state.has_value() && is_unfinished(*state);
  });
}

void Scheduler::supervise(const std::vector<std::string>& job_keys, std::int64_t now, bool wake) {
  for (const std::string& key : job_keys) {
    // Alive, or being started by another process (it reads the job's state once it holds its lock).
    if (supervisor_alive(cx_.layout(), key) || !still_unfinished(key) || !claim_supervisor_start(cx_.layout(), key)) {
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
    for (auto& seen : pending.dead) {
      auto j = load_job_by_key(store, seen.key);
      // Re-checked under the write lock: the supervisor may have finished in between.
      if (!j || !is_unfinished(j->state)) continue;
      if (supervisor_alive(cx_.layout(), j->key)) continue;
      const std::string pid = j->sup_pid ? " (pid " + std::to_string(*j->sup_pid) + ")" : std::string();
      finish_job(*j, false, std::nullopt,
                 job_error("SupervisorDied", "The job's supervisor process" + pid + " ended unexpectedly while the job was " +
                                                 std::string(to_string(j->state)) + "; its processes were stopped. Submit the job again."),
                 now);
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
    std::vector<std::int64_t> idle;
    {
      auto st = store.prepare("SELECT id FROM nodes WHERE cluster_id = ? AND state = 'idle' AND job_key IS NULL ORDER BY ordinal");
      st.bind(1, cluster);
      while (st.step()) idle.push_back(st.integer(0));
    }
    int capacity = 0;
    {
      auto st = store.prepare(
          "SELECT (SELECT count(*) FROM nodes WHERE cluster_id = c.id AND state <> 'leaving'), c.scale_mode, c.max_nodes "
          "FROM clusters c WHERE c.id = ?");
      st.bind(1, cluster);
      if (!st.step()) return;
      capacity = static_cast<int>(st.integer(0));
      if (st.text(1) == "auto") capacity = std::max(capacity, static_cast<int>(st.integer(2)));
    }
    std::vector<JobRow> queue;
    {
      auto st = store.prepare(std::string(kJobColumns) +
                              "WHERE cluster_id = ? AND state = 'queued' ORDER BY priority DESC, created_us, id");
      st.bind(1, cluster);
      while (st.step()) queue.push_back(read_job(st));
    }
    std::size_t next = 0;
    bool changed = false;
    for (auto& job : queue) {
      // A job larger than the cluster can ever be waits without blocking the others.
      if (job.node_count > capacity) continue;
      if (static_cast<std::size_t>(job.node_count) > idle.size() - next) break;  // gang: all at once, in order
      for (int i = 0; i < job.node_count; ++i)
        store.prepare("UPDATE nodes SET state = 'running', job_key = ? WHERE id = ?").bind(1, job.key).bind(2, idle[next++]).run();
      set_state(job, JobState::kRunning, now);
      job.doc["executionInfo"] = {{"endTime", nullptr}, {"errors", nullptr}, {"exitCode", nullptr}, {"startTime", iso_us(now)}};
      save_job(store, job);
      started.push_back(job.key);
      changed = true;
    }
    if (changed) docs_.refresh(cluster);
  });
  return started;
}

// Auto-scale demand: every node the queued and running jobs of each auto-scale cluster need.
void Scheduler::update_auto_scale_demand() {
  Store& store = cx_.store();
  std::vector<std::pair<std::int64_t, int>> demand = store.read([&] {
    std::vector<std::pair<std::int64_t, int>> out;
    auto st = store.prepare(
        "SELECT c.id, COALESCE(SUM(j.node_count), 0), c.auto_demand FROM clusters c LEFT JOIN jobs j ON j.cluster_id = c.id "
        "AND j.state IN ('queued', 'running', 'terminating') WHERE c.scale_mode = 'auto' GROUP BY c.id");
    while (st.step()) {
      const int want = static_cast<int>(st.integer(1));
      if (st.is_null(2) || st.integer(2) != want) out.emplace_back(st.integer(0), want);
    }
    return out;
  });
  for (const auto& [cluster, nodes] : demand) docs_.set_auto_scale_demand(cluster, nodes);
}

}  // namespace batchai::control_plane
