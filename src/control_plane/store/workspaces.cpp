// The workspaces table (store/rows.hpp, store/resources.hpp).
#include "store/columns.hpp"
#include "store/resources.hpp"
#include "store/dashboard.hpp"

#include "batchai/common/ids.hpp"

namespace batchai::control_plane::detail {

std::optional<WorkspaceRow> find_workspace(Store& store, const WorkspaceRef& ref) {
  auto st = store.prepare(
      "SELECT w.id, g.name, w.name, w.location FROM workspaces w JOIN resource_groups g ON g.name_lc = w.rg_lc "
      "WHERE w.rg_lc = ? AND w.name_lc = ?");
  st.bind(1, to_lower(ref.resource_group)).bind(2, to_lower(ref.workspace));
  if (!st.step()) return std::nullopt;
  return WorkspaceRow{st.integer(0), st.text(1), st.text(2), st.text(3)};
}

WorkspaceRow require_workspace(Store& store, const WorkspaceRef& ref) {
  auto w = find_workspace(store, ref);
  if (!w) throw NotFound("The specified workspace " + ref.workspace + " is not found", "WorkspaceNotFound");
  return *w;
}

WorkspaceRow require_workspace_for_new(Store& store, const WorkspaceRef& ref, const char* table, const std::string& name) {
  const std::string t = table;
  if (t != "clusters" && t != "file_servers") throw Error("require_workspace_for_new: not a workspace table: " + t);
  WorkspaceRow w = require_workspace(store, ref);
  auto st = store.prepare("SELECT 1 FROM " + t + " WHERE workspace_id = ? AND name_lc = ?");
  st.bind(1, w.id).bind(2, to_lower(name));
  if (st.step())
    throw AlreadyExists("\"" + name + "\" already exists in \"" + ref.resource_group + "\" resource group under " +
                        ref.workspace + " resource group.");
  return w;
}

std::optional<Json> workspace_doc(Store& store, const WorkspaceRef& ref) {
  auto st = store.prepare("SELECT doc FROM workspaces WHERE rg_lc = ? AND name_lc = ?");
  st.bind(1, to_lower(ref.resource_group)).bind(2, to_lower(ref.workspace));
  if (!st.step()) return std::nullopt;
  return parse_doc(st.text(0));
}

void save_workspace_doc(Store& store, const WorkspaceRef& ref, const Json& doc) {
  store.prepare("UPDATE workspaces SET doc = ? WHERE rg_lc = ? AND name_lc = ?")
      .bind(1, dump_doc(doc)).bind(2, to_lower(ref.resource_group)).bind(3, to_lower(ref.workspace)).run();
}

void insert_workspace(Store& store, const std::string& group, const std::string& name, const std::string& location,
                      const Json& doc) {
  store.prepare("INSERT INTO workspaces(rg_lc, name_lc, name, location, doc) VALUES (?, ?, ?, ?, ?)")
      .bind(1, to_lower(group)).bind(2, to_lower(name)).bind(3, name).bind(4, location).bind(5, dump_doc(doc)).run();
}

Json workspace_docs(Store& store, const std::optional<std::string>& group) {
  auto st = store.prepare("SELECT doc FROM workspaces WHERE ?1 IS NULL OR rg_lc = ?1 ORDER BY rg_lc, name_lc");
  st.bind(1, group ? std::optional<std::string>(to_lower(*group)) : std::nullopt);
  return column_docs(st);
}

void delete_workspace(Store& store, std::int64_t id) {
  store.prepare("DELETE FROM workspaces WHERE id = ?").bind(1, id).run();
}

std::vector<std::pair<std::int64_t, std::string>> workspaces_of_group(Store& store, const std::string& group) {
  auto st = store.prepare("SELECT id, name FROM workspaces WHERE rg_lc = ?");
  st.bind(1, to_lower(group));
  std::vector<std::pair<std::int64_t, std::string>> out;
  while (st.step()) out.emplace_back(st.integer(0), st.text(1));
  return out;
}

std::vector<std::pair<std::string, std::string>> workspace_names(Store& store, std::size_t limit) {
  auto st = store.prepare(
      "SELECT g.name, w.name FROM workspaces w JOIN resource_groups g ON g.name_lc = w.rg_lc "
      "ORDER BY g.name_lc, w.name_lc LIMIT ?");
  st.bind(1, static_cast<std::int64_t>(limit));
  std::vector<std::pair<std::string, std::string>> out;
  while (st.step()) out.emplace_back(st.text(0), st.text(1));
  return out;
}

}  // namespace batchai::control_plane::detail
