// The experiments table (store/resources.hpp).
#include "batchai/common/ids.hpp"
#include "store/resources.hpp"
#include "store/dashboard.hpp"

namespace batchai::control_plane::detail {

std::optional<Json> experiment_doc(Store& store, std::int64_t workspace_id, const std::string& name) {
  auto st = store.prepare("SELECT doc FROM experiments WHERE workspace_id = ? AND name_lc = ?");
  st.bind(1, workspace_id).bind(2, to_lower(name));
  if (!st.step()) return std::nullopt;
  return parse_doc(st.text(0));
}

std::optional<Json> experiment_doc(Store& store, const WorkspaceRef& ref, const std::string& name) {
  auto st = store.prepare(
      "SELECT e.doc FROM experiments e JOIN workspaces w ON w.id = e.workspace_id "
      "WHERE w.rg_lc = ? AND w.name_lc = ? AND e.name_lc = ?");
  st.bind(1, to_lower(ref.resource_group)).bind(2, to_lower(ref.workspace)).bind(3, to_lower(name));
  if (!st.step()) return std::nullopt;
  return parse_doc(st.text(0));
}

void insert_experiment(Store& store, std::int64_t workspace_id, const std::string& name, const Json& doc) {
  store.prepare("INSERT INTO experiments(workspace_id, name_lc, name, doc) VALUES (?, ?, ?, ?)")
      .bind(1, workspace_id).bind(2, to_lower(name)).bind(3, name).bind(4, dump_doc(doc)).run();
}

std::optional<std::pair<std::int64_t, std::string>> find_experiment(Store& store, std::int64_t workspace_id,
                                                                    const std::string& name) {
  auto st = store.prepare("SELECT id, name FROM experiments WHERE workspace_id = ? AND name_lc = ?");
  st.bind(1, workspace_id).bind(2, to_lower(name));
  if (!st.step()) return std::nullopt;
  return std::pair(st.integer(0), st.text(1));
}

void delete_experiment(Store& store, std::int64_t id) {
  store.prepare("DELETE FROM experiments WHERE id = ?").bind(1, id).run();
}

std::vector<ExperimentSummary> experiment_summaries(Store& store, std::int64_t workspace_id, const std::string& after,
                                                    std::int64_t limit) {
  // Hot path (10,000 experiments): one indexed query, keyset on name_lc; SQLite's JSON reader is
  // much faster than parsing every document here.
  auto st = store.prepare(
      "SELECT name, json_extract(doc, '$.creationTime'), json_extract(doc, '$.provisioningState'), "
      "json_extract(doc, '$.provisioningStateTransitionTime'), name_lc FROM experiments "
      "WHERE workspace_id = ? AND name_lc > ? ORDER BY name_lc LIMIT ?");
  st.bind(1, workspace_id).bind(2, after).bind(3, limit + 1);
  std::vector<ExperimentSummary> out;
  while (st.step()) out.push_back({st.text(0), st.text(4), st.text(1), st.text(2), st.text(3)});
  return out;
}

std::vector<ExperimentName> experiment_names(Store& store, std::size_t limit) {
  auto st = store.prepare(
      "SELECT e.id, g.name, w.name, e.name FROM experiments e JOIN workspaces w ON w.id = e.workspace_id "
      "JOIN resource_groups g ON g.name_lc = w.rg_lc ORDER BY w.rg_lc, w.name_lc, e.name_lc LIMIT ?");
  st.bind(1, static_cast<std::int64_t>(limit));
  std::vector<ExperimentName> out;
  while (st.step()) out.push_back({st.integer(0), st.text(1), st.text(2), st.text(3)});
  return out;
}

}  // namespace batchai::control_plane::detail
