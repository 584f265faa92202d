// The resource_groups table (store/rows.hpp, store/resources.hpp).
#include "store/columns.hpp"
#include "store/resources.hpp"

#include "batchai/common/ids.hpp"

namespace batchai::control_plane::detail {

std::optional<GroupRow> find_group(Store& store, const std::string& name) {
  auto st = store.prepare("SELECT name, location FROM resource_groups WHERE name_lc = ?");
  st.bind(1, to_lower(name));
  if (!st.step()) return std::nullopt;
  return GroupRow{st.text(0), st.text(1)};
}

GroupRow require_group(Store& store, const std::string& name) {
  auto g = find_group(store, name);
  if (!g)
    throw NotFound("Resource group '" + name + "' could not be found. Create it with 'batchai group create'.",
                   "ResourceGroupNotFound");
  return *g;
}

std::optional<Json> group_doc(Store& store, const std::string& name) {
  auto st = store.prepare("SELECT doc FROM resource_groups WHERE name_lc = ?");
  st.bind(1, to_lower(name));
  if (!st.step()) return std::nullopt;
  return parse_doc(st.text(0));
}

void save_group_doc(Store& store, const std::string& name, const Json& doc) {
  store.prepare("UPDATE resource_groups SET doc = ? WHERE name_lc = ?").bind(1, dump_doc(doc)).bind(2, to_lower(name)).run();
}

void insert_group(Store& store, const std::string& name, const std::string& location, const Json& doc) {
  store.prepare("INSERT INTO resource_groups(name_lc, name, location, doc) VALUES (?, ?, ?, ?)")
      .bind(1, to_lower(name)).bind(2, name).bind(3, location).bind(4, dump_doc(doc)).run();
}

Json group_docs(Store& store) {
  auto st = store.prepare("SELECT doc FROM resource_groups ORDER BY name_lc");
  return column_docs(st);
}

void delete_group(Store& store, const std::string& name) {
  // Workspaces, clusters, nodes, experiments, file servers and accounts go by ON DELETE CASCADE.
  store.prepare("DELETE FROM resource_groups WHERE name_lc = ?").bind(1, to_lower(name)).run();
}

}  // namespace batchai::control_plane::detail
