// Reads of the clusters table for the reconcile and the quota (store/clusters.hpp).
#include "batchai/common/ids.hpp"
#include "store/columns.hpp"
#include "store/clusters.hpp"
#include "store/dashboard.hpp"

namespace batchai::control_plane::detail {

namespace {

std::vector<ClusterIdKind> read_engines(Statement& st) {
  std::vector<ClusterIdKind> out;
  while (st.step()) out.emplace_back(st.integer(0), kind_of_engine_column(st.text(1)));
  return out;
}

}  // namespace

std::vector<ClusterIdKind> cluster_engine_named(Store& store, std::int64_t workspace_id, const std::string& name) {
  auto st = store.prepare("SELECT id, engine FROM clusters WHERE workspace_id = ? AND name_lc = ?");
  st.bind(1, workspace_id).bind(2, to_lower(name));
  return read_engines(st);
}

std::vector<ClusterIdKind> cluster_engines_of_workspace(Store& store, std::int64_t workspace_id) {
  auto st = store.prepare("SELECT id, engine FROM clusters WHERE workspace_id = ?");
  st.bind(1, workspace_id);
  return read_engines(st);
}

std::vector<ClusterIdKind> cluster_engine_of(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare("SELECT id, engine FROM clusters WHERE id = ?");
  st.bind(1, cluster_id);
  return read_engines(st);
}

std::vector<ClusterIdKind> cluster_engines_of_experiment(Store& store, std::int64_t workspace_id,
                                                         const std::string& experiment) {
  auto st = store.prepare(
      "SELECT c.id, c.engine FROM clusters c WHERE c.id IN (SELECT DISTINCT j.cluster_id FROM jobs j JOIN "
      "experiments e ON e.id = j.experiment_id WHERE e.workspace_id = ? AND e.name_lc = ? AND j.state IN "
      "('queued', 'running', 'terminating'))");
  st.bind(1, workspace_id).bind(2, to_lower(experiment));
  return read_engines(st);
}

std::vector<ClusterIdKind> cluster_engines_of_home(Store& store, std::size_t limit) {
  auto st = store.prepare("SELECT id, engine FROM clusters ORDER BY id LIMIT ?");
  st.bind(1, static_cast<std::int64_t>(limit));
  return read_engines(st);
}

bool anything_pending(Store& store) {
  auto st = store.prepare(
      "SELECT EXISTS(SELECT 1 FROM clusters WHERE pending = 1) OR EXISTS(SELECT 1 FROM file_servers WHERE "
      "pending = 1) OR EXISTS(SELECT 1 FROM trash)");
  return st.step() && st.integer(0) != 0;
}

std::vector<std::int64_t> pending_clusters(Store& store) {
  auto st = store.prepare("SELECT id FROM clusters WHERE pending = 1");
  return column_integers(st);
}

std::vector<QuotaCluster> quota_clusters(Store& store, const std::string& location, bool low_priority) {
  auto st = store.prepare(
      "SELECT c.id, c.vm_size, c.scale_mode, c.target, c.max_nodes, "
      "(SELECT count(*) FROM nodes n WHERE n.cluster_id = c.id), c.engine FROM clusters c WHERE c.location = ? "
      "AND (c.vm_priority = 'lowpriority') = ?");
  st.bind(1, location).bind(2, low_priority ? 1 : 0);
  std::vector<QuotaCluster> out;
  while (st.step())
    out.push_back({st.integer(0), st.text(1), st.text(2), st.integer(3), st.integer(4), st.integer(5),
                   kind_of_engine_column(st.text(6))});
  return out;
}

std::optional<ClusterSize> cluster_size(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare("SELECT location, vm_size, vm_priority, engine FROM clusters WHERE id = ?");
  st.bind(1, cluster_id);
  if (!st.step()) return std::nullopt;
  return ClusterSize{st.text(0), st.text(1), st.text(2), kind_of_engine_column(st.text(3))};
}

std::vector<std::int64_t> cluster_ids_by_name(Store& store, std::size_t limit) {
  auto st = store.prepare(
      "SELECT c.id FROM clusters c JOIN workspaces w ON w.id = c.workspace_id ORDER BY w.rg_lc, w.name_lc, c.name_lc "
      "LIMIT ?");
  st.bind(1, static_cast<std::int64_t>(limit));
  std::vector<std::int64_t> out;
  while (st.step()) out.push_back(st.integer(0));
  return out;
}

}  // namespace batchai::control_plane::detail
