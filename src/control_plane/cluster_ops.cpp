// Cluster show/list/resize/auto-scale/delete, the cluster document refresh, and list-usages.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "batchai/common/ids.hpp"
#include "cluster_rules.hpp"
#include "batchai/control_plane/control_plane.hpp"
#include "batchai/control_plane/jobs.hpp"
#include "store.hpp"
#include "cluster_quota.hpp"
#include "internal.hpp"

namespace batchai::control_plane {

using namespace detail;
namespace fs = std::filesystem;

void detail::check_vcpu_quota(Store& store, std::int64_t cluster_id, const std::string& location,
                              const std::string& vm_size, const std::string& priority, std::int64_t nodes) {
  const bool low = priority == "lowpriority";  // as list-usages tells the two quotas apart
  std::int64_t others = 0, own = 0;
  auto st = store.prepare(
      "SELECT c.id, c.vm_size, c.scale_mode, c.target, c.max_nodes, "
      "(SELECT count(*) FROM nodes n WHERE n.cluster_id = c.id) FROM clusters c "
      "WHERE c.location = ? AND (c.vm_priority = 'lowpriority') = ?");
  st.bind(1, location).bind(2, low ? 1 : 0);
  while (st.step()) {
    const std::int64_t room = st.text(2) == "manual" ? st.integer(3) : st.integer(4);
    const std::int64_t vcpus = vm_size_info(st.text(1)).vcpus * std::max<std::int64_t>({st.integer(5), room, 0});
    (st.integer(0) == cluster_id ? own : others) += vcpus;
  }
  const std::int64_t wanted = static_cast<std::int64_t>(vm_size_info(vm_size).vcpus) * nodes;
  check_regional_vcpu_quota(location, low, others + own, wanted - own);
}

void detail::check_vcpu_quota(Store& store, std::int64_t cluster_id, std::int64_t nodes) {
  auto st = store.prepare("SELECT location, vm_size, vm_priority FROM clusters WHERE id = ?");
  st.bind(1, cluster_id);
  if (st.step()) check_vcpu_quota(store, cluster_id, st.text(0), st.text(1), st.text(2), nodes);
}

void ControlPlane::refresh_cluster(std::int64_t cluster_row_id) {
  store_->write([&] {
    auto c = load_cluster(*store_, cluster_row_id);
    if (!c) return;
    std::map<std::string, int> counts;
    Json errors = Json::array();
    int total = 0;
    {
      auto st = store_->prepare(
          "SELECT state, node_id, setup, setup_exit FROM nodes WHERE cluster_id = ? ORDER BY ordinal");
      st.bind(1, cluster_row_id);
      while (st.step()) {
        ++counts[st.text(0)];
        ++total;
        std::string mount_error;  // a volume that could not be mounted (nodes.cpp, mount_node)
        if (st.text(2) == "failed" && st.is_null(3) &&
            std::getline(std::ifstream(layout_.node(c->resource_group, c->workspace, c->name, st.text(1)) / ".mount_error"),
                         mount_error)) {
          errors.push_back({{"code", "NodeSetupFailed"},
                            {"details", Json::array({{{"name", "nodeId"}, {"value", st.text(1)}}})},
                            {"message", "The node " + st.text(1) + " could not be set up: " + mount_error}});
        } else if (st.text(2) == "failed") {
          std::string code = st.is_null(3) ? "unknown" : std::to_string(st.integer(3));
          errors.push_back({{"code", "SetupTaskFailed"},
                            {"details", Json::array({{{"name", "nodeId"}, {"value", st.text(1)}},
                                                     {{"name", "exitCode"}, {"value", code}}})},
                            {"message", "The node setup task failed on node " + st.text(1) + " with exit code " +
                                            code + ". See stderr-" + st.text(1) +
                                            ".txt in the setup task output folder ('batchai cluster file list')."}});
        }
      }
    }
    Json& doc = c->doc;
    doc["nodeStateCounts"] = {{"idleNodeCount", counts["idle"]},
                              {"leavingNodeCount", counts["leaving"]},
                              {"preparingNodeCount", counts["preparing"]},
                              {"runningNodeCount", counts["running"]},
                              {"unusableNodeCount", counts["unusable"]}};
    doc["currentNodeCount"] = total;
    doc["errors"] = errors.empty() ? Json(nullptr) : errors;
    doc["allocationState"] = c->alloc_state;
    doc["allocationStateTransitionTime"] = iso_us(c->alloc_changed_us);
    if (c->scale_mode == "manual") {
      Json manual = doc["scaleSettings"]["manual"].is_object() ? doc["scaleSettings"]["manual"] : Json::object();
      manual["targetNodeCount"] = c->target;
      if (!manual.contains("nodeDeallocationOption")) manual["nodeDeallocationOption"] = "requeue";
      doc["scaleSettings"] = {{"autoScale", nullptr}, {"manual", manual}};
    } else {
      doc["scaleSettings"] = {{"autoScale",
                               {{"initialNodeCount", c->target},
                                {"maximumNodeCount", c->max_nodes},
                                {"minimumNodeCount", c->min_nodes}}},
                              {"manual", nullptr}};
    }
    store_->prepare("UPDATE clusters SET doc = ? WHERE id = ?").bind(1, dump_doc(doc)).bind(2, cluster_row_id).run();
  });
}

Json ControlPlane::cluster_show(const WorkspaceRef& ref, const std::string& name) {
  reconcile();
  return store_->read([&] {
    auto st = store_->prepare(
        "SELECT c.doc FROM clusters c JOIN workspaces w ON w.id = c.workspace_id "
        "WHERE w.rg_lc = ? AND w.name_lc = ? AND c.name_lc = ?");
    st.bind(1, to_lower(ref.resource_group)).bind(2, to_lower(ref.workspace)).bind(3, to_lower(name));
    if (!st.step()) cluster_not_found();
    return parse_doc(st.text(0));
  });
}

Json ControlPlane::cluster_list(const WorkspaceRef& ref) {
  reconcile();
  return store_->read([&] {
    auto ws = require_workspace(*store_, ref);
    Json out = Json::array();
    auto st = store_->prepare("SELECT doc FROM clusters WHERE workspace_id = ? ORDER BY name_lc");
    st.bind(1, ws.id);
    while (st.step()) out.push_back(parse_doc(st.text(0)));
    return out;
  });
}

Json ControlPlane::cluster_resize(const WorkspaceRef& ref, const std::string& name, int target) {
  if (target < 0) throw InvalidArgument("--target must be 0 or more nodes, got " + std::to_string(target) + ".");
  reconcile();
  const auto now = to_us(clock_->now());
  std::int64_t id = store_->write([&] {
    auto c = require_cluster(*store_, ref, name);
    check_vcpu_quota(*store_, c.id, target);
    store_->prepare(
              "UPDATE clusters SET scale_mode = 'manual', target = ?, min_nodes = 0, max_nodes = 0, "
              "auto_demand = NULL, pending = 1 WHERE id = ?")
        .bind(1, target).bind(2, c.id).run();
    return c.id;
  });
  // The resize starts now: the reconcile step moves allocationState to resizing and picks leavers.
  reconcile_clusters(now);
  refresh_cluster(id);
  return cluster_show(ref, name);
}

Json ControlPlane::cluster_auto_scale(const WorkspaceRef& ref, const std::string& name, int min_nodes, int max_nodes) {
  if (min_nodes < 0 || max_nodes < 0)
    throw InvalidArgument("--min and --max must be 0 or more nodes, got " + std::to_string(min_nodes) + " and " +
                          std::to_string(max_nodes) + ".");
  if (min_nodes > max_nodes) throw InvalidArgument("Maximum nodes count must be greater or equal to minimum nodes count");
  reconcile();
  const auto now = to_us(clock_->now());
  std::int64_t id = store_->write([&] {
    auto c = require_cluster(*store_, ref, name);
    check_vcpu_quota(*store_, c.id, max_nodes);
    // Without demand information yet, keep the current size within the new bounds.
    std::int64_t current = 0;
    {
      auto st = store_->prepare("SELECT count(*) FROM nodes WHERE cluster_id = ? AND state <> 'leaving'");
      st.bind(1, c.id);
      if (st.step()) current = st.integer(0);
    }
    std::optional<std::int64_t> demand = c.scale_mode == "auto" ? c.auto_demand : std::nullopt;
    store_->prepare(
              "UPDATE clusters SET scale_mode = 'auto', target = ?, min_nodes = ?, max_nodes = ?, auto_demand = ?, "
              "pending = 1 WHERE id = ?")
        .bind(1, current).bind(2, min_nodes).bind(3, max_nodes).bind(4, demand).bind(5, c.id).run();
    return c.id;
  });
  reconcile_clusters(now);
  refresh_cluster(id);
  return cluster_show(ref, name);
}

void ControlPlane::cluster_delete(const WorkspaceRef& ref, const std::string& name) {
  store_->write([&] {
    auto c = require_cluster(*store_, ref, name);
    jobs_->end_jobs_under(Jobs::Deleted::kCluster, c.id, "cluster '" + c.name + "' was deleted");
    const fs::path dir = layout_.cluster(c.resource_group, c.workspace, c.name);
    std::error_code ec;
    for (const auto& node : fs::directory_iterator(dir / "nodes", ec)) stop_setup_task(*this, node.path());
    trash(*store_, dir);
    store_->prepare("DELETE FROM clusters WHERE id = ?").bind(1, c.id).run();  // nodes cascade
  });
  empty_trash();
}

Json ControlPlane::list_usages(const std::string& location) {
  bool ok = !location.empty() && std::all_of(location.begin(), location.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
  if (!ok)
    throw InvalidArgument("validation error: Parameter 'location' must conform to the following pattern: '^[-\\\\w\\\\._]+$'.");
  reconcile();
  std::map<std::string, int> dedicated, low;
  int total_dedicated = 0, total_low = 0;
  store_->read([&] {
    auto st = store_->prepare(
        "SELECT c.vm_size, c.vm_priority, count(n.id) FROM clusters c JOIN nodes n ON n.cluster_id = c.id "
        "WHERE c.location = ? GROUP BY c.id");
    st.bind(1, to_lower(location));
    while (st.step()) {
      auto info = vm_size_info(st.text(0));
      int vcpus = info.vcpus * static_cast<int>(st.integer(2));
      if (st.text(1) == "lowpriority") {
        low[info.family] += vcpus;
        total_low += vcpus;
      } else {
        dedicated[info.family] += vcpus;
        total_dedicated += vcpus;
      }
    }
  });
  auto usage = [](const std::string& value, const std::string& localized, int current, int limit) {
    return Json{{"currentValue", current},
                {"limit", limit},
                {"name", {{"localizedValue", localized}, {"value", value}}},
                {"unit", "Count"}};
  };
  Json out = Json::array();
  out.push_back(usage("Total Cluster Dedicated Regional vCPUs", "Total Cluster Dedicated Regional vCPUs",
                      total_dedicated, kRegionalVcpuQuota));
  out.push_back(usage("Total Cluster LowPriority Regional vCPUs", "Total Cluster Low Priority Regional vCPUs",
                      total_low, kRegionalVcpuQuota));
  std::vector<std::string> families = vm_families();
  for (const auto& [family, n] : dedicated)
    if (std::find(families.begin(), families.end(), family) == families.end()) families.push_back(family);
  for (const auto& [family, n] : low)
    if (std::find(families.begin(), families.end(), family) == families.end()) families.push_back(family);
  for (const auto& family : families) {
    std::string base = "Standard " + family + " Family Cluster ";
    out.push_back(usage(base + "Dedicated vCPUs", base + "Dedicated vCPUs", dedicated[family], kFamilyVcpuQuota));
    out.push_back(usage(base + "LowPriority vCPUs", base + "Low Priority vCPUs", low[family], kFamilyVcpuQuota));
  }
  return out;
}

}  // namespace batchai::control_plane
