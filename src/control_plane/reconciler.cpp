#include "reconciler.hpp"

#include <map>

#include "batchai/common/log.hpp"
#include "cluster_docs.hpp"
#include "context.hpp"
#include "engine/cluster_backend.hpp"
#include "batchai/common/ids.hpp"
#include "file_server_steps.hpp"
#include "rows.hpp"
#include "jobs/job_rows.hpp"
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
  bool pending = store.read([&] {
    auto st = store.prepare(
        "SELECT EXISTS(SELECT 1 FROM clusters WHERE pending = 1) OR EXISTS(SELECT 1 FROM file_servers WHERE "
        "pending = 1) OR EXISTS(SELECT 1 FROM trash)");
    return st.step() && st.integer(0) != 0;
  });
  if (pending) {
    step_file_servers(cx_, now);
    step_clusters(now);
    cx_.empty_trash();
  }
  // Each engine is asked about its own clusters of the scope, bounded; nothing for an empty scope.
  std::map<ClusterKind, std::vector<std::int64_t>> by_kind;
  for (const auto& [id, kind] : scope.clusters) by_kind[kind].push_back(id);
  for (const auto& [kind, ids] : by_kind) backends_.of(kind).reconcile(ids);
}

void Reconciler::schedule() { scheduler_.step(); }

void Reconciler::step_clusters(std::int64_t now_us) {
  Store& store = cx_.store();
  std::vector<std::int64_t> ids = store.read([&] {
    std::vector<std::int64_t> out;
    auto st = store.prepare("SELECT id FROM clusters WHERE pending = 1");
    while (st.step()) out.push_back(st.integer(0));
    return out;
  });
  for (auto id : ids) {
    ClusterBackend* engine = nullptr;
    store.write([&] {
      auto c = load_cluster(store, id);
      if (!c) return;
      engine = &backends_.of(*c);
      engine->step(*c, now_us);
      docs_.refresh(id);
    });
    if (engine != nullptr) engine->start_work(id);
  }
}

// ---- scopes ----

namespace {

std::pair<std::int64_t, ClusterKind> scoped(const Statement& st) {
  return {st.integer(0), kind_of_engine_column(st.text(1))};
}

}  // namespace

ClusterScope ClusterScope::of_cluster(Store& store, const WorkspaceRef& ref, const std::string& name) {
  return store.read([&] {
    ClusterScope out;
    auto ws = find_workspace(store, ref);
    if (!ws) return out;
    auto st = store.prepare("SELECT id, engine FROM clusters WHERE workspace_id = ? AND name_lc = ?");
    st.bind(1, ws->id).bind(2, to_lower(name));
    if (st.step()) out.clusters.push_back(scoped(st));
    return out;
  });
}

ClusterScope ClusterScope::of_workspace(Store& store, const WorkspaceRef& ref) {
  return store.read([&] {
    ClusterScope out;
    auto ws = find_workspace(store, ref);
    if (!ws) return out;
    auto st = store.prepare("SELECT id, engine FROM clusters WHERE workspace_id = ?");
    st.bind(1, ws->id);
    while (st.step()) out.clusters.push_back(scoped(st));
    return out;
  });
}

ClusterScope ClusterScope::of_job(Store& store, const JobRef& ref) {
  return store.read([&] {
    ClusterScope out;
    auto job = jobs_detail::find_job(store, ref);
    if (!job || !job->cluster_id || !is_unfinished(job->state)) return out;
    auto st = store.prepare("SELECT id, engine FROM clusters WHERE id = ?");
    st.bind(1, *job->cluster_id);
    if (st.step()) out.clusters.push_back(scoped(st));
    return out;
  });
}

ClusterScope ClusterScope::of_experiment(Store& store, const WorkspaceRef& where, const std::string& experiment) {
  return store.read([&] {
    ClusterScope out;
    auto ws = find_workspace(store, where);
    if (!ws) return out;
    auto st = store.prepare(
        "SELECT c.id, c.engine FROM clusters c WHERE c.id IN (SELECT DISTINCT j.cluster_id FROM jobs j JOIN "
        "experiments e ON e.id = j.experiment_id WHERE e.workspace_id = ? AND e.name_lc = ? AND j.state IN "
        "('queued', 'running', 'terminating'))");
    st.bind(1, ws->id).bind(2, to_lower(experiment));
    while (st.step()) out.clusters.push_back(scoped(st));
    return out;
  });
}

ClusterScope ClusterScope::of_home(Store& store, std::size_t limit) {
  return store.read([&] {
    ClusterScope out;
    auto st = store.prepare("SELECT id, engine FROM clusters ORDER BY id LIMIT ?");
    st.bind(1, static_cast<std::int64_t>(limit));
    while (st.step()) out.clusters.push_back(scoped(st));
    return out;
  });
}

}  // namespace batchai::control_plane
