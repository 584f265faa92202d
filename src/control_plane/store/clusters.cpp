// The clusters table (store/rows.hpp, store/clusters.hpp).
#include "store/columns.hpp"
#include "store/cluster_nodes.hpp"
#include "store/clusters.hpp"

#include <algorithm>

#include "batchai/common/ids.hpp"

namespace batchai::control_plane::detail {

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

std::vector<std::pair<std::int64_t, std::string>> cluster_names_in(Store& store, std::int64_t workspace_id) {
  auto st = store.prepare("SELECT id, name FROM clusters WHERE workspace_id = ?");
  st.bind(1, workspace_id);
  std::vector<std::pair<std::int64_t, std::string>> out;
  while (st.step()) out.emplace_back(st.integer(0), st.text(1));
  return out;
}

std::vector<std::pair<std::int64_t, Json>> cluster_docs_of_engine(Store& store, ClusterKind engine) {
  auto st = store.prepare("SELECT id, doc FROM clusters WHERE engine = ?");
  st.bind(1, engine_column(engine));
  std::vector<std::pair<std::int64_t, Json>> out;
  while (st.step()) out.emplace_back(st.integer(0), parse_doc(st.text(1)));
  return out;
}

void save_cluster_doc(Store& store, std::int64_t cluster_id, const Json& doc) {
  store.prepare("UPDATE clusters SET doc = ? WHERE id = ?").bind(1, dump_doc(doc)).bind(2, cluster_id).run();
}

void mark_cluster_settled(Store& store, std::int64_t cluster_id) {
  store.prepare("UPDATE clusters SET pending = 0 WHERE id = ?").bind(1, cluster_id).run();
}

void set_auto_scale_demand(Store& store, std::int64_t cluster_id, int nodes) {
  store
      .prepare("UPDATE clusters SET auto_demand = ?, pending = 1 WHERE id = ? AND scale_mode = 'auto' AND "
               "(auto_demand IS NULL OR auto_demand <> ?)")
      .bind(1, nodes)
      .bind(2, cluster_id)
      .bind(3, nodes)
      .run();
}

std::optional<int> cluster_capacity(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare(
      "SELECT (SELECT count(*) FROM nodes WHERE cluster_id = c.id AND state <> 'leaving'), c.scale_mode, c.max_nodes "
      "FROM clusters c WHERE c.id = ?");
  st.bind(1, cluster_id);
  if (!st.step()) return std::nullopt;
  int capacity = static_cast<int>(st.integer(0));
  if (st.text(1) == "auto") capacity = std::max(capacity, static_cast<int>(st.integer(2)));
  return capacity;
}

bool cluster_pending(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare("SELECT pending FROM clusters WHERE id = ?");
  st.bind(1, cluster_id);
  return st.step() && st.integer(0) != 0;
}

std::int64_t insert_cluster(Store& store, const ClusterInsert& c) {
  store
      .prepare(
          "INSERT INTO clusters(workspace_id, name_lc, name, doc, location, vm_size, vm_priority, scale_mode, "
          "target, min_nodes, max_nodes, alloc_started_us, alloc_state, alloc_changed_us, pending, node_prefix, "
          "public_ip, private, engine) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
      .bind(1, c.workspace_id).bind(2, to_lower(c.name)).bind(3, c.name).bind(4, dump_doc(c.doc)).bind(5, c.location)
      .bind(6, c.vm_size).bind(7, c.vm_priority).bind(8, c.is_auto ? "auto" : "manual").bind(9, c.target)
      .bind(10, c.min_nodes).bind(11, c.max_nodes).bind(12, c.now_us)
      .bind(13, value_or<std::string>(c.doc, "allocationState", "steady")).bind(14, c.now_us)
      .bind(15, c.pending ? 1 : 0).bind(16, c.node_prefix).bind(17, c.public_ip).bind(18, dump_doc(c.private_data))
      .bind(19, engine_column(c.engine))
      .run();
  return store.last_insert_rowid();
}

std::optional<Json> cluster_doc(Store& store, const WorkspaceRef& ref, const std::string& name) {
  auto st = store.prepare(
      "SELECT c.doc FROM clusters c JOIN workspaces w ON w.id = c.workspace_id "
      "WHERE w.rg_lc = ? AND w.name_lc = ? AND c.name_lc = ?");
  st.bind(1, to_lower(ref.resource_group)).bind(2, to_lower(ref.workspace)).bind(3, to_lower(name));
  if (!st.step()) return std::nullopt;
  return parse_doc(st.text(0));
}

Json cluster_docs(Store& store, std::int64_t workspace_id) {
  auto st = store.prepare("SELECT doc FROM clusters WHERE workspace_id = ? ORDER BY name_lc");
  st.bind(1, workspace_id);
  return column_docs(st);
}

void set_manual_scale(Store& store, std::int64_t cluster_id, int target) {
  store
      .prepare("UPDATE clusters SET scale_mode = 'manual', target = ?, min_nodes = 0, max_nodes = 0, "
               "auto_demand = NULL, pending = 1 WHERE id = ?")
      .bind(1, target).bind(2, cluster_id).run();
}

void set_auto_scale(Store& store, std::int64_t cluster_id, std::int64_t current, int min_nodes, int max_nodes,
                    std::optional<std::int64_t> demand) {
  store
      .prepare("UPDATE clusters SET scale_mode = 'auto', target = ?, min_nodes = ?, max_nodes = ?, auto_demand = ?, "
               "pending = 1 WHERE id = ?")
      .bind(1, current).bind(2, min_nodes).bind(3, max_nodes).bind(4, demand).bind(5, cluster_id).run();
}

std::int64_t staying_node_count(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare("SELECT count(*) FROM nodes WHERE cluster_id = ? AND state <> 'leaving'");
  st.bind(1, cluster_id);
  return st.step() ? st.integer(0) : 0;
}

void delete_cluster(Store& store, std::int64_t cluster_id) {
  store.prepare("DELETE FROM clusters WHERE id = ?").bind(1, cluster_id).run();
}

std::vector<NodeUsage> node_usage_in(Store& store, const std::string& location) {
  auto st = store.prepare(
      "SELECT c.vm_size, c.vm_priority, count(n.id) FROM clusters c JOIN nodes n ON n.cluster_id = c.id "
      "WHERE c.location = ? GROUP BY c.id");
  st.bind(1, to_lower(location));
  std::vector<NodeUsage> out;
  while (st.step()) out.push_back({st.text(0), st.text(1), static_cast<int>(st.integer(2))});
  return out;
}

void save_allocation(Store& store, const ClusterRow& c, bool busy) {
  store
      .prepare("UPDATE clusters SET alloc_state = ?, alloc_started_us = ?, alloc_changed_us = ?, next_ordinal = ?, "
               "pending = ? WHERE id = ?")
      .bind(1, std::string(to_string(c.alloc_state))).bind(2, c.alloc_started_us).bind(3, c.alloc_changed_us)
      .bind(4, c.next_ordinal).bind(5, busy ? 1 : 0).bind(6, c.id)
      .run();
}

int desired_nodes(const ClusterRow& c) {
  if (c.scale_mode == "manual") return c.target;
  int want = c.auto_demand ? static_cast<int>(*c.auto_demand) : c.target;
  return std::clamp(want, c.min_nodes, std::max(c.min_nodes, c.max_nodes));
}

}  // namespace batchai::control_plane::detail
