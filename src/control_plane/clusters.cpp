// `batchai cluster ...` and `list-usages`: create in the exact processing order of
// docs/behaviour.md §4.3 (steps numbered below), show/list/resize/auto-scale/delete, the cluster
// document refresh from its node rows, and the usages.
#include "batchai/control_plane/clusters.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <random>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/common/log.hpp"
#include "cluster_rules.hpp"
#include "mount_rules.hpp"
#include "vm_sizes.hpp"
#include "context.hpp"
#include "reconciler.hpp"
#include "jobs/job_ending.hpp"
#include "node_mounts.hpp"
#include "store/store.hpp"
#include "cluster_quota.hpp"
#include "store/clusters.hpp"
#include "auto_storage.hpp"
#include "cluster_docs.hpp"
#include "engine/cluster_engine.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

using namespace detail;

namespace {

// Wire-form scaleSettings of a config file → output shape (null when absent). Counts are
// checked here, where they enter: int32, not negative, minimum <= maximum.
Json scale_from_config(const Json& wire) {
  if (!wire.is_object()) return nullptr;
  Json manual = member_or_null(wire, "manual"), autos = member_or_null(wire, "autoScale");
  auto count = [](const Json& parent, const char* key, const std::string& path, bool required) -> std::int64_t {
    const Json value = member_or_null(parent, key);
    if (value.is_null()) {
      if (required) throw InvalidArgument(path + "." + key + " is required in the cluster configuration.");
      return 0;
    }
    return checked_integer(value, path + "." + key, 0);
  };
  if (manual.is_object())
    return {{"autoScale", nullptr},
            {"manual",
             {{"nodeDeallocationOption", manual.value("nodeDeallocationOption", Json("requeue"))},
              {"targetNodeCount", count(manual, "targetNodeCount", "scaleSettings.manual", false)}}}};
  if (autos.is_object()) {
    const std::int64_t min = count(autos, "minimumNodeCount", "scaleSettings.autoScale", true);
    const std::int64_t max = count(autos, "maximumNodeCount", "scaleSettings.autoScale", true);
    if (min > max)
      throw InvalidArgument("scaleSettings.autoScale.maximumNodeCount (" + std::to_string(max) +
                            ") must be greater or equal to minimumNodeCount (" + std::to_string(min) + ").");
    return {{"autoScale",
             {{"initialNodeCount", count(autos, "initialNodeCount", "scaleSettings.autoScale", false)},
              {"maximumNodeCount", max},
              {"minimumNodeCount", min}}},
            {"manual", nullptr}};
  }
  return nullptr;
}

std::string random_digits(std::size_t n) { return random_string(n, "0123456789"); }

std::string random_public_ip() {
  std::random_device rd;
  return "13." + std::to_string(64 + rd() % 128) + "." + std::to_string(rd() % 256) + "." +
         std::to_string(1 + rd() % 254);
}

struct NfsTarget {
  WorkspaceRef where;
  std::string name;
};

NfsTarget resolve_nfs(const std::string& nfs, const WorkspaceRef& where) {
  if (auto id = parse_arm_id(nfs)) {
    auto ws = id->name_of("workspaces");
    if (!ws || id->path.empty()) throw InvalidArgument("Ill-formed file server resource id: " + nfs);
    return {{id->resource_group, *ws}, id->path.back().second};
  }
  return {where, nfs};
}

// The setup task writes its logs on the node: only beneath the node's mount root, never a
// folder of this machine named outright ("/tmp/x") or reached with "..".
void check_setup_output_prefix(const std::string& prefix) {
  for (const std::string var : {"$AZ_BATCHAI_MOUNT_ROOT", "${AZ_BATCHAI_MOUNT_ROOT}"}) {
    if (prefix.rfind(var, 0) != 0 || (prefix.size() > var.size() && prefix[var.size()] != '/')) continue;
    const std::size_t rest = prefix.find_first_not_of('/', var.size());
    confine_relative(rest == std::string::npos ? std::string() : prefix.substr(rest), "The setup task output path",
                     "$AZ_BATCHAI_MOUNT_ROOT");
    return;
  }
  throw InvalidArgument("The setup task output path '" + prefix +
                        "' must start with $AZ_BATCHAI_MOUNT_ROOT (e.g. $AZ_BATCHAI_MOUNT_ROOT/afs): the setup task "
                        "writes only inside the node's mounts.");
}

// --nfs and --subnet (steps 3 and 4): the cluster and a mounted file server share one subnet.
std::optional<NfsTarget> check_nfs_and_subnet(Store& store, const ClusterCreateOptions& o) {
  std::optional<NfsTarget> nfs;
  if (o.mounts.nfs) nfs = resolve_nfs(*o.mounts.nfs, o.where);
  if (!o.subnet) return nfs;
  if (!looks_like_arm_id(*o.subnet)) throw InvalidArgument("Ill-formed subnet resource id");
  if (!nfs) return nfs;
  std::optional<Json> server;
  try {
    server = store.read([&] { return require_file_server_doc(store, nfs->where, nfs->name); });
  } catch (const NotFound&) {
  }
  if (server && server->contains("subnet") && (*server)["subnet"].is_object() &&
      !iequals(value_or<std::string>((*server)["subnet"], "id", ""), *o.subnet))
    throw InvalidArgument("Cluster and mounted NFS must be in the same subnet.");
  return nfs;
}

// Step 8: VM size, priority, image and scale settings of the new cluster.
struct NodeShape {
  std::string vm_size, priority;
  Json image, scale;
  bool is_auto = false;
  int target = 0, min_nodes = 0, max_nodes = 0;
  // Room the cluster takes in the regional quota: its target, or its auto-scale maximum.
  std::int64_t room = 0;
};

NodeShape node_shape(const ClusterCreateOptions& o, const Json& props) {
  NodeShape n;
  n.vm_size = o.vm_size.value_or(value_or<std::string>(props, "vmSize", ""));
  if (n.vm_size.empty()) throw InvalidArgument("Please provide VM size");
  n.priority = o.vm_priority && !o.vm_priority->empty() ? *o.vm_priority : value_or<std::string>(props, "vmPriority", "dedicated");
  n.image = default_image_reference();
  if (Json cfg = member_or_null(member_or_null(props, "virtualMachineConfiguration"), "imageReference"); cfg.is_object())
    n.image = {{"offer", member_or_null(cfg, "offer")},
               {"publisher", member_or_null(cfg, "publisher")},
               {"sku", member_or_null(cfg, "sku")},
               {"version", member_or_null(cfg, "version")},
               {"virtualMachineImageId", member_or_null(cfg, "virtualMachineImageId")}};
  if (o.custom_image && !o.image)
    throw InvalidArgument(
        "properties.virtualMachineConfiguration.virtualMachineImageId needs the imageReference (publisher, offer, sku) "
        "the custom image was made from.");
  if (o.image) n.image = parse_image(*o.image, o.custom_image);
  n.scale = scale_settings_from_options(o.target, o.min_nodes, o.max_nodes, scale_from_config(member_or_null(props, "scaleSettings")));
  n.is_auto = n.scale["autoScale"].is_object();
  const Json& s = n.is_auto ? n.scale["autoScale"] : n.scale["manual"];
  n.target = s[n.is_auto ? "initialNodeCount" : "targetNodeCount"].get<int>();
  n.min_nodes = n.is_auto ? s["minimumNodeCount"].get<int>() : 0;
  n.max_nodes = n.is_auto ? s["maximumNodeCount"].get<int>() : 0;
  n.room = n.is_auto ? n.max_nodes : n.target;
  for (auto& ch : n.vm_size) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return n;
}

// Step 11: the setup task (command line or document) with its output suffix; its secrets go
// to the private data.
Json setup_task_of(const ClusterCreateOptions& o, const Json& node_setup_wire, const WorkspaceRow& ws,
                   Json& private_data) {
  Json task = node_setup_wire.is_object() ? member_or_null(node_setup_wire, "setupTask") : Json(nullptr);
  if (o.setup_task) {
    if (!o.setup_task_output)
      throw InvalidArgument("properties.nodeSetup.setupTask.stdOutErrPathPrefix is required with a setup task.");
    task = {{"commandLine", *o.setup_task}, {"stdOutErrPathPrefix", *o.setup_task_output}};
  }
  if (!task.is_object()) return task;
  check_setup_output_prefix(value_or<std::string>(task, "stdOutErrPathPrefix", ""));
  task["stdOutErrPathSuffix"] = subscription_id() + "/" + ws.resource_group + "/workspaces/" + ws.name + "/clusters/" +
                                o.name + "/" + new_uuid();
  if (task.contains("secrets") && task["secrets"].is_array())
    for (const auto& s : task["secrets"])
      private_data["setupSecrets"].push_back({{"name", member_or_null(s, "name")}, {"value", member_or_null(s, "value")}});
  return task;
}

Json new_cluster_doc(const ClusterCreateOptions& o, const WorkspaceRow& ws, const NodeShape& n, const Json& node_setup,
                     const Json& subnet, const Json& user, std::int64_t now) {
  return {{"allocationState", "steady"},
          {"allocationStateTransitionTime", iso_us(now)},
          {"creationTime", iso_us(now)},
          {"currentNodeCount", 0},
          {"errors", nullptr},
          {"id", arm_id(subscription_id(), ws.resource_group, {{"workspaces", ws.name}, {"clusters", o.name}})},
          {"name", o.name},
          {"nodeSetup", node_setup},
          {"nodeStateCounts",
           {{"idleNodeCount", 0}, {"leavingNodeCount", 0}, {"preparingNodeCount", 0}, {"runningNodeCount", 0},
            {"unusableNodeCount", 0}}},
          {"provisioningState", "succeeded"},
          {"provisioningStateTransitionTime", iso_us(now)},
          {"scaleSettings", n.scale},
          {"subnet", subnet},
          {"type", "Microsoft.BatchAI/workspaces/clusters"},
          {"userAccountSettings", user},
          {"virtualMachineConfiguration", {{"imageReference", n.image}}},
          {"vmPriority", n.priority},
          {"vmSize", n.vm_size}};
}

// `quota`: the engines that tell which clusters take room in the quota; null for a cluster whose
// engine makes no nodes. The engine's own rows of the cluster go into the same transaction.
void store_new(const Context& cx_, const Engines* quota, const ClusterCreateOptions& o, const WorkspaceRow& ws,
               const NodeShape& shape, const Json& doc, const Json& private_data, ClusterEngine& engine,
               const EnginePlacement* placement, bool pending, std::int64_t now) {
  Store& store = cx_.store();
  const fs::path folder = cx_.layout().cluster(ws.resource_group, ws.name, o.name);
  store.write([&] {
    require_workspace_for_new(store, o.where, "clusters", o.name);  // a concurrent create since step 2
    if (quota) check_vcpu_quota(store, *quota, 0, ws.location, shape.vm_size, shape.priority, shape.room);
    untrash(store, folder);
    const std::int64_t id =
        insert_cluster(store, {ws.id, o.name, doc, ws.location, shape.vm_size, shape.priority, shape.is_auto,
                               shape.target, shape.min_nodes, shape.max_nodes, now, pending, "tvm-" + random_digits(10),
                               random_public_ip(), private_data, engine.kind()});
    engine.store_placement(id, placement);
  });
  std::error_code ec;
  fs::remove_all(folder, ec);  // leftovers of an earlier cluster of this name; node folders come with nodes
}

}  // namespace

// A function-try-block: a value of the wrong JSON type in the document (a number where text
// belongs, ...) surfaces from nlohmann wherever the value is read.
Json Clusters::create(const ClusterCreateOptions& o) try {
  validate_resource_name(o.where.workspace, "workspace_name");
  validate_resource_name(o.name, "cluster_name");
  const Json props = o.config && o.config->is_object() && o.config->contains("properties") &&
                             (*o.config)["properties"].is_object()
                         ? (*o.config)["properties"]
                         : Json::object();
  ClusterEngine& engine = engines_.for_new(o, props);
  engine.check_request(o, props);  // before anything runs
  reconciler_.reconcile();
  Store& store = cx_.store();
  const std::string home = cx_.settings().user_home.string();
  // 1. --generate-ssh-keys
  const AdminOptions admin = o.admin.generate_ssh_keys ? with_generated_ssh_keys(cx_.launcher(), o.admin, home) : o.admin;
  // 2. refuse an existing cluster; 3./4. --nfs and --subnet
  auto ws = store.read([&] { return require_workspace_for_new(store, o.where, "clusters", o.name); });
  const std::optional<NfsTarget> nfs = check_nfs_and_subnet(store, o);
  KeyLookup lookup = [&store](const std::string& account) { return account_key(store, account); };
  // 6. patch the document's mount volumes
  Json node_setup_wire = member_or_null(props, "nodeSetup");
  if (node_setup_wire.is_object() && node_setup_wire.contains("mountVolumes") && node_setup_wire["mountVolumes"].is_object())
    patch_mount_volumes(node_setup_wire["mountVolumes"], effective_storage(o.mounts, lookup), lookup);
  // 7. admin account (a password or key only where batchai makes the nodes that carry it)
  const Engines* quota = engine.makes_nodes() ? &engines_ : nullptr;
  Json user = resolve_admin_account(admin, member_or_null(props, "userAccountSettings"), home, cx_.settings().user_name,
                                    engine.makes_nodes());
  user["adminUserPassword"] = nullptr;  // never echoed
  // 8. nodes; the quota checked now, before auto-storage makes anything, and again with the row
  const NodeShape shape = node_shape(o, props);
  if (quota) store.read([&] { check_vcpu_quota(store, *quota, 0, ws.location, shape.vm_size, shape.priority, shape.room); });
  ClusterRow wanted;
  wanted.scale_mode = shape.is_auto ? "auto" : "manual";
  wanted.target = shape.target;
  wanted.min_nodes = shape.min_nodes;
  wanted.max_nodes = shape.max_nodes;
  const NewCluster request{o, props, shape.vm_size, desired_nodes(wanted)};
  const std::unique_ptr<EnginePlacement> placement = engine.place(request);  // the engine's refusal makes nothing
  // 9. command-line mounts: --nfs, --afs-name, --bfs-name, then auto-storage
  Json mounts = node_setup_wire.is_object() ? member_or_null(node_setup_wire, "mountVolumes") : Json(nullptr);
  if (!mounts.is_object()) mounts = Json::object();
  append_command_line_mounts(
      mounts, o.mounts,
      nfs ? store.read([&] { return require_file_server_doc(store, nfs->where, nfs->name); })["id"].get<std::string>() : std::string(),
      lookup);
  // A wrong storage account key fails the create, as the storage commands do.
  check_mount_account_keys(mounts, [&store](const std::string& account) { return account_keys(store, account); });
  if (o.use_auto_storage) auto_storage_.add_mounts(ws.location, mounts);
  validate_mount_volumes(mounts);  // names, file-server ids and mount paths of every volume
  // 10. subnet
  Json subnet = member_or_null(props, "subnet");
  if (o.subnet) subnet = {{"id", *o.subnet}};
  if (subnet.is_object()) subnet = {{"id", member_or_null(subnet, "id")}};
  // 11. setup task
  Json private_data = {{"setupSecrets", Json::array()}};
  const Json setup_task = setup_task_of(o, node_setup_wire, ws, private_data);
  Json node_setup_out;
  if (node_setup_wire.is_object() || !mounts.empty() || setup_task.is_object()) {
    Json wire = node_setup_wire.is_object() ? node_setup_wire : Json::object();
    wire["mountVolumes"] = mounts.empty() ? Json(nullptr) : mounts;
    wire["setupTask"] = setup_task;
    node_setup_out = normalize_node_setup(wire);
  }
  // 12. PUT: one transaction; folders appear when reconcile allocates nodes.
  const auto now = cx_.now_us();
  Json doc = new_cluster_doc(o, ws, shape, node_setup_out, subnet, user, now);
  const bool pending = engine.describe_new(doc, placement.get(), request);
  inject_resource_group(doc);
  store_new(cx_, quota, o, ws, shape, doc, private_data, engine, placement.get(), pending, now);
  return doc;
} catch (const Json::exception& e) {
  throw InvalidArgument("The cluster configuration has a value of the wrong type: " + json_error_text(e) + ".",
                        "InvalidRequestContent");
}

void Clusters::set_auto_scale_demand(std::int64_t cluster_row_id, int nodes) {
  docs_.set_auto_scale_demand(cluster_row_id, nodes);
}

Json Clusters::show(const WorkspaceRef& ref, const std::string& name) {
  reconciler_.reconcile(ClusterScope::of_cluster(cx_.store(), ref, name));
  return document(ref, name);
}

Json Clusters::document(const WorkspaceRef& ref, const std::string& name) {
  return cx_.store().read([&] {
    auto doc = cluster_doc(cx_.store(), ref, name);
    if (!doc) cluster_not_found();
    return *doc;
  });
}

Json Clusters::list(const WorkspaceRef& ref) {
  reconciler_.reconcile(ClusterScope::of_workspace(cx_.store(), ref));
  return cx_.store().read([&] {
    auto ws = require_workspace(cx_.store(), ref);
    return cluster_docs(cx_.store(), ws.id);
  });
}

Json Clusters::resize(const WorkspaceRef& ref, const std::string& name, int target) {
  if (target < 0)
    throw InvalidArgument("properties.scaleSettings.manual.targetNodeCount must be 0 or more nodes, got " +
                          std::to_string(target) + ".");
  reconciler_.reconcile(ClusterScope::of_cluster(cx_.store(), ref, name));
  const auto now = to_us(cx_.clock().now());
  std::int64_t id = cx_.store().write([&] {
    auto c = require_cluster(cx_.store(), ref, name);
    check_vcpu_quota(cx_.store(), engines_, c.id, target);
    set_manual_scale(cx_.store(), c.id, target);
    return c.id;
  });
  // The resize starts now: the reconcile step moves allocationState to resizing and picks leavers.
  reconciler_.step_clusters(now);
  docs_.refresh(id);
  return document(ref, name);
}

Json Clusters::auto_scale(const WorkspaceRef& ref, const std::string& name, int min_nodes, int max_nodes) {
  if (min_nodes < 0 || max_nodes < 0)
    throw InvalidArgument(
        "properties.scaleSettings.autoScale.minimumNodeCount and maximumNodeCount must be 0 or more nodes, got " +
        std::to_string(min_nodes) + " and " + std::to_string(max_nodes) + ".");
  if (min_nodes > max_nodes) throw InvalidArgument("Maximum nodes count must be greater or equal to minimum nodes count");
  reconciler_.reconcile(ClusterScope::of_cluster(cx_.store(), ref, name));
  const auto now = to_us(cx_.clock().now());
  std::int64_t id = cx_.store().write([&] {
    auto c = require_cluster(cx_.store(), ref, name);
    check_vcpu_quota(cx_.store(), engines_, c.id, max_nodes);
    // Without demand information yet, keep the current size within the new bounds.
    const std::int64_t current = staying_node_count(cx_.store(), c.id);
    const std::optional<std::int64_t> demand = c.scale_mode == "auto" ? c.auto_demand : std::nullopt;
    set_auto_scale(cx_.store(), c.id, current, min_nodes, max_nodes, demand);
    return c.id;
  });
  reconciler_.step_clusters(now);
  docs_.refresh(id);
  return document(ref, name);
}

void Clusters::remove(const WorkspaceRef& ref, const std::string& name) {
  cx_.store().write([&] {
    auto c = require_cluster(cx_.store(), ref, name);
    ending_.end_jobs_under(JobEnding::Deleted::kCluster, c.id, "cluster '" + c.name + "' was deleted");
    engines_.of(c).remove(c);
    trash(cx_.store(), cx_.layout().cluster(c.resource_group, c.workspace, c.name));
    delete_cluster(cx_.store(), c.id);
  });
  cx_.empty_trash();
}

Json Clusters::list_usages(const std::string& location) {
  bool ok = !location.empty() && std::all_of(location.begin(), location.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
  if (!ok)
    throw InvalidArgument("validation error: Parameter 'location' must conform to the following pattern: '^[-\\\\w\\\\._]+$'.");
  reconciler_.reconcile();
  std::map<std::string, int> dedicated, low;
  int total_dedicated = 0, total_low = 0;
  cx_.store().read([&] {
    for (const NodeUsage& u : node_usage_in(cx_.store(), location)) {
      auto info = vm_size_info(u.vm_size);
      int vcpus = info.vcpus * u.nodes;
      if (u.vm_priority == "lowpriority") {
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
