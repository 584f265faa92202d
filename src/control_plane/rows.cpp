// Row lookups and the trash (rows.hpp).
#include "rows.hpp"


#include <algorithm>
#include <cstdlib>

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

namespace {
constexpr const char* kClusterColumns =
    "SELECT c.id, c.workspace_id, g.name, w.name, c.name, c.scale_mode, c.target, c.min_nodes, c.max_nodes, "
    "c.auto_demand, c.alloc_started_us, c.alloc_state, c.alloc_changed_us, c.next_ordinal, c.node_prefix, "
    "c.public_ip, c.doc, c.private, c.engine FROM clusters c JOIN workspaces w ON w.id = c.workspace_id "
    "JOIN resource_groups g ON g.name_lc = w.rg_lc ";

ClusterRow read_cluster(const Statement& st) {
  ClusterRow c;
  c.id = st.integer(0);
  c.workspace_id = st.integer(1);
  c.resource_group = st.text(2);
  c.workspace = st.text(3);
  c.name = st.text(4);
  c.scale_mode = st.text(5);
  c.target = static_cast<int>(st.integer(6));
  c.min_nodes = static_cast<int>(st.integer(7));
  c.max_nodes = static_cast<int>(st.integer(8));
  c.auto_demand = st.optional_integer(9);
  c.alloc_started_us = st.integer(10);
  c.alloc_state = parse_allocation_state(st.text(11)).value_or(AllocationState::kSteady);
  c.alloc_changed_us = st.integer(12);
  c.next_ordinal = st.integer(13);
  c.node_prefix = st.text(14);
  c.public_ip = st.text(15);
  c.doc = parse_doc(st.text(16));
  c.private_data = parse_doc(st.text(17));
  c.kind = kind_of_engine_column(st.text(18));
  return c;
}
}  // namespace

std::optional<ClusterRow> load_cluster(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare(std::string(kClusterColumns) + "WHERE c.id = ?");
  st.bind(1, cluster_id);
  if (!st.step()) return std::nullopt;
  return read_cluster(st);
}

void cluster_not_found() {
  throw NotFound("The specified managed compute cluster is not found", "ClusterNotFound");
}

ClusterRow require_cluster(Store& store, const WorkspaceRef& ref, const std::string& name) {
  auto st = store.prepare(std::string(kClusterColumns) + "WHERE w.rg_lc = ? AND w.name_lc = ? AND c.name_lc = ?");
  st.bind(1, to_lower(ref.resource_group)).bind(2, to_lower(ref.workspace)).bind(3, to_lower(name));
  if (!st.step()) cluster_not_found();
  return read_cluster(st);
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

void file_server_not_found(const std::string& name) {
  throw NotFound("The specified file server " + name + " is not found", "FileServerNotFound");
}

Json require_file_server_doc(Store& store, const WorkspaceRef& ref, const std::string& name) {
  auto st = store.prepare(
      "SELECT f.doc FROM file_servers f JOIN workspaces w ON w.id = f.workspace_id "
      "WHERE w.rg_lc = ? AND w.name_lc = ? AND f.name_lc = ?");
  st.bind(1, to_lower(ref.resource_group)).bind(2, to_lower(ref.workspace)).bind(3, to_lower(name));
  if (!st.step()) file_server_not_found(name);
  return parse_doc(st.text(0));
}

std::optional<std::string> account_key(Store& store, const std::string& account) {
  return store.read([&]() -> std::optional<std::string> {
    auto st = store.prepare("SELECT key1 FROM storage_accounts WHERE name_lc = ?");
    st.bind(1, to_lower(account));
    if (!st.step()) return std::nullopt;
    return st.text(0);
  });
}

std::vector<std::string> account_keys(Store& store, const std::string& account) {
  return store.read([&] {
    auto st = store.prepare("SELECT key1, key2 FROM storage_accounts WHERE name_lc = ?");
    st.bind(1, to_lower(account));
    return st.step() ? std::vector<std::string>{st.text(0), st.text(1)} : std::vector<std::string>{};
  });
}

void trash(Store& store, const std::filesystem::path& folder) {
  store.prepare("INSERT OR IGNORE INTO trash(path) VALUES (?)").bind(1, folder.string()).run();
}

int desired_nodes(const ClusterRow& c) {
  if (c.scale_mode == "manual") return c.target;
  int want = c.auto_demand ? static_cast<int>(*c.auto_demand) : c.target;
  return std::clamp(want, c.min_nodes, std::max(c.min_nodes, c.max_nodes));
}

}  // namespace batchai::control_plane::detail
