#include "reconciler.hpp"

#include <map>

#include "batchai/common/log.hpp"
#include "cluster_docs.hpp"
#include "context.hpp"
#include "engine/cluster_engine.hpp"
#include "batchai/common/ids.hpp"
#include "file_server_steps.hpp"
#include "jobs/job_containers.hpp"
#include "store/clusters.hpp"
#include "store/jobs.hpp"
#include "jobs/scheduler.hpp"

namespace batchai::control_plane {

using namespace detail;

void Reconciler::reconcile(const ClusterScope& scope) {
  try {
    reconcile_before_schedule(scope);
    scheduler_.step();
  } catch (const StateDiskFull& e) {
    // A full disk must not hide the state it holds: what is stored is still shown (a command that
    // changes state fails at its own write with the same message).
    log::warning(std::string("The state could not be brought up to date: ") + e.what());
  }
}

void Reconciler::reconcile_before_schedule(const ClusterScope& scope) {
  ++count_;
  const std::int64_t now = cx_.now_us();
  Store& store = cx_.store();
  // A cheap read first: most commands find nothing pending and never take the write lock.
  const bool pending = store.read([&] { return anything_pending(store); });
  if (pending) {
    step_file_servers(cx_, now);
    step_clusters(now);
    cx_.empty_trash();
  }
  // Each engine is asked about its own clusters of the scope, bounded; nothing for an empty scope.
  std::map<ClusterKind, std::vector<std::int64_t>> by_kind;
  for (const auto& [id, kind] : scope.clusters) by_kind[kind].push_back(id);
  for (const auto& [kind, ids] : by_kind) engines_.of(kind).reconcile(ids);
  // Containers of ended jobs whose runner died before removing them (a listing of an empty folder
  // when there are none).
  jobs_detail::sweep_ended_jobs_containers(cx_.layout(), [&](const std::string& key) {
    return store.read([&] {
      const auto job = jobs_detail::load_job_by_key(store, key);
      return job && is_unfinished(job->state);
    });
  });
}

void Reconciler::schedule() { scheduler_.step(); }

void Reconciler::step_clusters(std::int64_t now_us) {
  Store& store = cx_.store();
  const std::vector<std::int64_t> ids = store.read([&] { return pending_clusters(store); });
  for (auto id : ids) {
    ClusterEngine* engine = nullptr;
    store.write([&] {
      auto c = load_cluster(store, id);
      if (!c) return;
      engine = &engines_.of(*c);
      engine->step(*c, now_us);
      docs_.refresh(id);
    });
    if (engine != nullptr) engine->start_work(id);
  }
}

// ---- scopes ----

ClusterScope ClusterScope::of_cluster(Store& store, const WorkspaceRef& ref, const std::string& name) {
  return store.read([&] {
    ClusterScope out;
    auto ws = find_workspace(store, ref);
    if (!ws) return out;
    out.clusters = cluster_engine_named(store, ws->id, name);
    return out;
  });
}

ClusterScope ClusterScope::of_workspace(Store& store, const WorkspaceRef& ref) {
  return store.read([&] {
    ClusterScope out;
    auto ws = find_workspace(store, ref);
    if (!ws) return out;
    out.clusters = cluster_engines_of_workspace(store, ws->id);
    return out;
  });
}

ClusterScope ClusterScope::of_job(Store& store, const JobRef& ref) {
  return store.read([&] {
    ClusterScope out;
    auto job = jobs_detail::find_job(store, ref);
    if (!job || !job->cluster_id || !is_unfinished(job->state)) return out;
    out.clusters = cluster_engine_of(store, *job->cluster_id);
    return out;
  });
}

ClusterScope ClusterScope::of_experiment(Store& store, const WorkspaceRef& where, const std::string& experiment) {
  return store.read([&] {
    ClusterScope out;
    auto ws = find_workspace(store, where);
    if (!ws) return out;
    out.clusters = cluster_engines_of_experiment(store, ws->id, experiment);
    return out;
  });
}

ClusterScope ClusterScope::of_home(Store& store, std::size_t limit) {
  return store.read([&] {
    ClusterScope out;
    out.clusters = cluster_engines_of_home(store, limit);
    return out;
  });
}

}  // namespace batchai::control_plane
