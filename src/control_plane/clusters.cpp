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
#include "batchai/control_plane/control_plane.hpp"
#include "storage_paths.hpp"
#include "store.hpp"
#include "cluster_quota.hpp"
#include "internal.hpp"
#include "slurm_clusters.hpp"
#include "slurm_reconcile.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

using namespace detail;

namespace {

constexpr const char* kAutoStorageGroup = "batchaiautostorage";

Json get(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? Json(nullptr) : *it;
}

// Wire-form scaleSettings of a config file → output shape (null when absent). Counts are
// checked here, where they enter: int32, not negative, minimum <= maximum.
Json scale_from_config(const Json& wire) {
  if (!wire.is_object()) return nullptr;
  Json manual = get(wire, "manual"), autos = get(wire, "autoScale");
  auto count = [](const Json& parent, const char* key, const std::string& path, bool required) -> std::int64_t {
    const Json value = get(parent, key);
    if (value.is_null()) {
      if (required) throw InvalidArgument(path + "." + key + " is required in the cluster configuration file.");
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

}  // namespace

// A function-try-block: a value of the wrong JSON type in the configuration file (a number
// where text belongs, ...) surfaces from nlohmann wherever the value is read.
Json Clusters::create(const ClusterCreateOptions& o) try {
  validate_resource_name(o.where.workspace, "workspace_name");
  validate_resource_name(o.name, "cluster_name");
  if (o.slurm_partition) requested_slurm_partition(o.slurm_partition, nullptr);  // checked before anything runs
  cp_.reconcile();
  const std::string home = user_home();
  // 1. --generate-ssh-keys
  const AdminOptions admin = o.admin.generate_ssh_keys ? with_generated_ssh_keys(cp_.launcher(), o.admin, home) : o.admin;
  // 2. refuse an existing cluster
  auto ws = cp_.store().read([&] { return require_workspace_for_new(cp_.store(), o.where, "clusters", o.name); });
  // 3./4. --nfs and --subnet
  std::optional<NfsTarget> nfs;
  if (o.mounts.nfs) nfs = resolve_nfs(*o.mounts.nfs, o.where);
  if (o.subnet) {
    if (!looks_like_arm_id(*o.subnet)) throw InvalidArgument("Ill-formed subnet resource id");
    if (nfs) {
      std::optional<Json> server;
      try {
        server = cp_.store().read([&] { return require_file_server_doc(cp_.store(), nfs->where, nfs->name); });
      } catch (const NotFound&) {
      }
      if (server && server->contains("subnet") && (*server)["subnet"].is_object() &&
          !iequals(value_or<std::string>((*server)["subnet"], "id", ""), *o.subnet))
        throw InvalidArgument("Cluster and mounted NFS must be in the same subnet.");
    }
  }
  // 5. config file
  Json props = Json::object();
  if (o.config_file) {
    Json file = load_json_file(*o.config_file);
    if (file.is_object() && file.contains("properties") && file["properties"].is_object()) props = file["properties"];
  }
  const std::optional<std::string> partition = requested_slurm_partition(o.slurm_partition, props);
  KeyLookup lookup = [this](const std::string& account) { return account_key(cp_.store(), account); };
  // 6. patch the config's mount volumes
  Json node_setup_wire = get(props, "nodeSetup");
  if (node_setup_wire.is_object() && node_setup_wire.contains("mountVolumes") &&
      node_setup_wire["mountVolumes"].is_object())
    patch_mount_volumes(node_setup_wire["mountVolumes"], effective_storage(o.mounts, lookup), lookup);
  // 7. admin account
  Json user = resolve_admin_account(admin, get(props, "userAccountSettings"), home, os_user_name());
  user["adminUserPassword"] = nullptr;  // never echoed
  // 8. nodes: VM size, priority, image, scale
  std::string vm_size = o.vm_size.value_or(value_or<std::string>(props, "vmSize", ""));
  if (vm_size.empty()) throw InvalidArgument("Please provide VM size");
  std::string priority = o.vm_priority && !o.vm_priority->empty() ? *o.vm_priority
                                                                  : value_or<std::string>(props, "vmPriority", "dedicated");
  Json image = default_image_reference();
  if (Json cfg = get(get(props, "virtualMachineConfiguration"), "imageReference"); cfg.is_object())
    image = {{"offer", get(cfg, "offer")},
             {"publisher", get(cfg, "publisher")},
             {"sku", get(cfg, "sku")},
             {"version", get(cfg, "version")},
             {"virtualMachineImageId", get(cfg, "virtualMachineImageId")}};
  if (o.custom_image && !o.image)
    throw InvalidArgument("You need to specify --image argument with information about the custom image");
  if (o.image) image = parse_image(*o.image, o.custom_image);
  Json scale = scale_settings_from_options(o.target, o.min_nodes, o.max_nodes, scale_from_config(get(props, "scaleSettings")));
  const bool is_auto = scale["autoScale"].is_object();
  // Room the cluster takes in the regional quota: its target, or its auto-scale maximum. Checked
  // now, before auto-storage makes anything, and again where the row is stored.
  const std::int64_t room = is_auto ? scale["autoScale"]["maximumNodeCount"].get<std::int64_t>()
                                    : scale["manual"]["targetNodeCount"].get<std::int64_t>();
  cp_.store().read([&] { check_vcpu_quota(cp_.store(), 0, ws.location, vm_size, priority, room); });
  // A Slurm cluster: the controller and the partition are asked now, before auto-storage or the
  // row makes anything; their error ends the create with nothing made.
  std::vector<slurm::NodeInfo> slurm_nodes;
  if (partition) slurm_nodes = probe_slurm_partition(cp_, *partition);
  // 9. command-line mounts: --nfs, --afs-name, --bfs-name, then auto-storage
  Json mounts = node_setup_wire.is_object() ? get(node_setup_wire, "mountVolumes") : Json(nullptr);
  if (!mounts.is_object()) mounts = Json::object();
  auto append = [&](const char* list, Json entry) {
    if (!mounts.contains(list) || !mounts[list].is_array()) mounts[list] = Json::array();
    mounts[list].push_back(std::move(entry));
  };
  append_command_line_mounts(mounts, o.mounts,
                             nfs ? cp_.store().read([&] { return require_file_server_doc(cp_.store(), nfs->where, nfs->name); })["id"].get<std::string>()
                                 : std::string(),
                             lookup);
  // A wrong storage account key fails the create, as the storage commands do.
  check_mount_account_keys(mounts, [this](const std::string& account) { return account_keys(cp_.store(), account); });
  if (o.use_auto_storage) {
    std::string account;
    if (cp_.store().read([&] { return find_group(cp_.store(), kAutoStorageGroup).has_value(); })) {
      log::warning("BatchAI will use existing batchaiautostorage resource group for auto-storage account");
    } else {
      log::warning("Creating batchaiautostorage resource group for auto-storage account");
      cp_.groups().create(kAutoStorageGroup, ws.location, std::nullopt);
    }
    account = cp_.store().read([&] {
      auto st = cp_.store().prepare(
          "SELECT name_lc FROM storage_accounts WHERE rg_lc = ? AND location = ? ORDER BY name_lc LIMIT 1");
      st.bind(1, std::string(kAutoStorageGroup)).bind(2, ws.location);
      return st.step() ? st.text(0) : std::string();
    });
    if (!account.empty()) log::warning("Using existing " + account + " storage account as an auto-storage account");
    while (account.empty()) {
      std::string candidate = "bai" + random_string(12);
      try {
        cp_.storage_accounts().create(kAutoStorageGroup, candidate, ws.location, "Standard_LRS", "Storage");
        account = candidate;
        log::warning("Created auto storage account " + account);
      } catch (const AlreadyExists&) {
      }
    }
    std::string key = *lookup(account);
    cp_.storage().share_create({account, key}, "batchaishare");
    cp_.storage().container_create({account, key}, "batchaicontainer");
    append("azureFileShares", {{"accountName", account},
                               {"azureFileUrl", "https://" + account + ".file.core.windows.net/batchaishare"},
                               {"credentials", {{"accountKey", key}}},
                               {"relativeMountPath", "autoafs"}});
    append("azureBlobFileSystems", {{"accountName", account},
                                    {"containerName", "batchaicontainer"},
                                    {"credentials", {{"accountKey", key}}},
                                    {"relativeMountPath", "autobfs"}});
  }
  validate_mount_volumes(mounts);  // names, file-server ids and mount paths of every volume
  // 10. subnet
  Json subnet = get(props, "subnet");
  if (o.subnet) subnet = {{"id", *o.subnet}};
  if (subnet.is_object()) subnet = {{"id", get(subnet, "id")}};
  // 11. setup task
  Json setup_task = node_setup_wire.is_object() ? get(node_setup_wire, "setupTask") : Json(nullptr);
  if (o.setup_task) {
    if (!o.setup_task_output) throw InvalidArgument("--setup-task requires providing of --setup-task-output");
    setup_task = {{"commandLine", *o.setup_task}, {"stdOutErrPathPrefix", *o.setup_task_output}};
  }
  Json private_data = {{"setupSecrets", Json::array()}};
  if (partition) private_data["slurm"] = slurm_private_entry(*partition, slurm_nodes);
  if (setup_task.is_object()) check_setup_output_prefix(value_or<std::string>(setup_task, "stdOutErrPathPrefix", ""));
  if (setup_task.is_object()) {
    setup_task["stdOutErrPathSuffix"] = subscription_id() + "/" + ws.resource_group + "/workspaces/" + ws.name +
                                        "/clusters/" + o.name + "/" + new_uuid();
    if (setup_task.contains("secrets") && setup_task["secrets"].is_array())
      for (const auto& s : setup_task["secrets"])
        private_data["setupSecrets"].push_back({{"name", get(s, "name")}, {"value", get(s, "value")}});
  }
  Json node_setup_out;
  if (node_setup_wire.is_object() || !mounts.empty() || setup_task.is_object()) {
    Json wire = node_setup_wire.is_object() ? node_setup_wire : Json::object();
    wire["mountVolumes"] = mounts.empty() ? Json(nullptr) : mounts;
    wire["setupTask"] = setup_task;
    node_setup_out = normalize_node_setup(wire);
  }
  // 12. PUT: one transaction; folders appear when reconcile allocates nodes.
  const auto now = to_us(cp_.clock().now());
  const int target = is_auto ? scale["autoScale"]["initialNodeCount"].get<int>()
                             : scale["manual"]["targetNodeCount"].get<int>();
  const int min_nodes = is_auto ? scale["autoScale"]["minimumNodeCount"].get<int>() : 0;
  const int max_nodes = is_auto ? scale["autoScale"]["maximumNodeCount"].get<int>() : 0;
  ClusterRow sim;
  sim.scale_mode = is_auto ? "auto" : "manual";
  sim.target = target;
  sim.min_nodes = min_nodes;
  sim.max_nodes = max_nodes;
  // A Slurm cluster's nodes are the partition's: no simulated nodes to allocate, so steady now.
  const int desired = partition ? 0 : desired_nodes(sim);
  std::string vm_upper = vm_size;
  for (auto& ch : vm_upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  Json doc = {{"allocationState", desired > 0 ? "resizing" : "steady"},
              {"allocationStateTransitionTime", iso_us(now)},
              {"creationTime", iso_us(now)},
              {"currentNodeCount", 0},
              {"errors", nullptr},
              {"id", arm_id(subscription_id(), ws.resource_group, {{"workspaces", ws.name}, {"clusters", o.name}})},
              {"name", o.name},
              {"nodeSetup", node_setup_out},
              {"nodeStateCounts",
               {{"idleNodeCount", 0}, {"leavingNodeCount", 0}, {"preparingNodeCount", 0}, {"runningNodeCount", 0},
                {"unusableNodeCount", 0}}},
              {"provisioningState", "succeeded"},
              {"provisioningStateTransitionTime", iso_us(now)},
              {"scaleSettings", scale},
              {"subnet", subnet},
              {"type", "Microsoft.BatchAI/workspaces/clusters"},
              {"userAccountSettings", user},
              {"virtualMachineConfiguration", {{"imageReference", image}}},
              {"vmPriority", priority},
              {"vmSize", vm_upper}};
  if (partition) {
    apply_slurm_counts(doc, slurm_nodes);
    ClusterRow shape;  // what slurm_gpus_per_node reads: the VM size and the partition's nodes
    shape.name = o.name;
    shape.doc = doc;
    shape.private_data = private_data;
    warn_if_no_gpus(shape);
  }
  inject_resource_group(doc);
  const fs::path folder = cp_.layout().cluster(ws.resource_group, ws.name, o.name);
  cp_.store().write([&] {
    require_workspace_for_new(cp_.store(), o.where, "clusters", o.name);  // a concurrent create since step 2
    check_vcpu_quota(cp_.store(), 0, ws.location, vm_size, priority, room);
    cp_.store().prepare("DELETE FROM trash WHERE path = ?").bind(1, folder.string()).run();
    cp_.store().prepare(
              "INSERT INTO clusters(workspace_id, name_lc, name, doc, location, vm_size, vm_priority, scale_mode, "
              "target, min_nodes, max_nodes, alloc_started_us, alloc_state, alloc_changed_us, pending, node_prefix, "
              "public_ip, private) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
        .bind(1, ws.id).bind(2, to_lower(o.name)).bind(3, o.name).bind(4, dump_doc(doc)).bind(5, ws.location)
        .bind(6, vm_upper).bind(7, priority).bind(8, sim.scale_mode).bind(9, target).bind(10, min_nodes)
        .bind(11, max_nodes).bind(12, now).bind(13, desired > 0 ? "resizing" : "steady").bind(14, now)
        .bind(15, desired > 0 ? 1 : 0).bind(16, "tvm-" + random_digits(10)).bind(17, random_public_ip())
        .bind(18, dump_doc(private_data)).run();
  });
  std::error_code ec;
  fs::remove_all(folder, ec);  // leftovers of an earlier cluster of this name
  if (!partition) fs::create_directories(folder / "nodes", ec);
  return doc;
} catch (const Json::exception& e) {
  if (!o.config_file) throw;
  throw InvalidArgument("The cluster configuration file '" + *o.config_file + "' has a value of the wrong type: " +
                        json_error_text(e) + ".");
}

void Clusters::set_auto_scale_demand(std::int64_t cluster_row_id, int nodes) {
  cp_.store().write([&] {
    auto st = cp_.store().prepare(
        "UPDATE clusters SET auto_demand = ?, pending = 1 WHERE id = ? AND scale_mode = 'auto' AND "
        "(auto_demand IS NULL OR auto_demand <> ?)");
    st.bind(1, nodes).bind(2, cluster_row_id).bind(3, nodes).run();
  });
}

void Clusters::refresh(std::int64_t cluster_row_id) {
  cp_.store().write([&] {
    auto c = load_cluster(cp_.store(), cluster_row_id);
    if (!c) return;
    const bool on_slurm = slurm_partition(c->private_data).has_value();
    std::map<std::string, int> counts;
    Json errors = Json::array();
    int total = 0;
    {
      auto st = cp_.store().prepare(
          "SELECT state, node_id, setup, setup_exit FROM nodes WHERE cluster_id = ? ORDER BY ordinal");
      st.bind(1, cluster_row_id);
      while (st.step()) {
        ++counts[st.text(0)];
        ++total;
        std::string mount_error;  // a volume that could not be mounted (nodes.cpp, mount_node)
        if (st.text(2) == "failed" && st.is_null(3) &&
            std::getline(std::ifstream(cp_.layout().node(c->resource_group, c->workspace, c->name, st.text(1)) / ".mount_error"),
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
    if (!on_slurm) {  // a Slurm cluster's counts and errors are sinfo's (refresh_slurm_clusters)
      doc["nodeStateCounts"] = {{"idleNodeCount", counts["idle"]},
                                {"leavingNodeCount", counts["leaving"]},
                                {"preparingNodeCount", counts["preparing"]},
                                {"runningNodeCount", counts["running"]},
                                {"unusableNodeCount", counts["unusable"]}};
      doc["currentNodeCount"] = total;
      doc["errors"] = errors.empty() ? Json(nullptr) : errors;
      doc["allocationState"] = c->alloc_state;
      doc["allocationStateTransitionTime"] = iso_us(c->alloc_changed_us);
    }
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
    cp_.store().prepare("UPDATE clusters SET doc = ? WHERE id = ?").bind(1, dump_doc(doc)).bind(2, cluster_row_id).run();
  });
}

Json Clusters::show(const WorkspaceRef& ref, const std::string& name) {
  cp_.reconcile(slurm_scope_of_cluster(cp_.store(), ref, name));
  return document(ref, name);
}

Json Clusters::document(const WorkspaceRef& ref, const std::string& name) {
  return cp_.store().read([&] {
    auto st = cp_.store().prepare(
        "SELECT c.doc FROM clusters c JOIN workspaces w ON w.id = c.workspace_id "
        "WHERE w.rg_lc = ? AND w.name_lc = ? AND c.name_lc = ?");
    st.bind(1, to_lower(ref.resource_group)).bind(2, to_lower(ref.workspace)).bind(3, to_lower(name));
    if (!st.step()) cluster_not_found();
    return parse_doc(st.text(0));
  });
}

Json Clusters::list(const WorkspaceRef& ref) {
  cp_.reconcile(slurm_scope_of_workspace(cp_.store(), ref));
  return cp_.store().read([&] {
    auto ws = require_workspace(cp_.store(), ref);
    Json out = Json::array();
    auto st = cp_.store().prepare("SELECT doc FROM clusters WHERE workspace_id = ? ORDER BY name_lc");
    st.bind(1, ws.id);
    while (st.step()) out.push_back(parse_doc(st.text(0)));
    return out;
  });
}

Json Clusters::resize(const WorkspaceRef& ref, const std::string& name, int target) {
  if (target < 0) throw InvalidArgument("--target must be 0 or more nodes, got " + std::to_string(target) + ".");
  cp_.reconcile(slurm_scope_of_cluster(cp_.store(), ref, name));
  const auto now = to_us(cp_.clock().now());
  std::int64_t id = cp_.store().write([&] {
    auto c = require_cluster(cp_.store(), ref, name);
    check_vcpu_quota(cp_.store(), c.id, target);
    cp_.store().prepare(
              "UPDATE clusters SET scale_mode = 'manual', target = ?, min_nodes = 0, max_nodes = 0, "
              "auto_demand = NULL, pending = 1 WHERE id = ?")
        .bind(1, target).bind(2, c.id).run();
    return c.id;
  });
  // The resize starts now: the reconcile step moves allocationState to resizing and picks leavers.
  cp_.nodes().reconcile(now);
  cp_.clusters().refresh(id);
  return document(ref, name);
}

Json Clusters::auto_scale(const WorkspaceRef& ref, const std::string& name, int min_nodes, int max_nodes) {
  if (min_nodes < 0 || max_nodes < 0)
    throw InvalidArgument("--min and --max must be 0 or more nodes, got " + std::to_string(min_nodes) + " and " +
                          std::to_string(max_nodes) + ".");
  if (min_nodes > max_nodes) throw InvalidArgument("Maximum nodes count must be greater or equal to minimum nodes count");
  cp_.reconcile(slurm_scope_of_cluster(cp_.store(), ref, name));
  const auto now = to_us(cp_.clock().now());
  std::int64_t id = cp_.store().write([&] {
    auto c = require_cluster(cp_.store(), ref, name);
    check_vcpu_quota(cp_.store(), c.id, max_nodes);
    // Without demand information yet, keep the current size within the new bounds.
    std::int64_t current = 0;
    {
      auto st = cp_.store().prepare("SELECT count(*) FROM nodes WHERE cluster_id = ? AND state <> 'leaving'");
      st.bind(1, c.id);
      if (st.step()) current = st.integer(0);
    }
    std::optional<std::int64_t> demand = c.scale_mode == "auto" ? c.auto_demand : std::nullopt;
    cp_.store().prepare(
              "UPDATE clusters SET scale_mode = 'auto', target = ?, min_nodes = ?, max_nodes = ?, auto_demand = ?, "
              "pending = 1 WHERE id = ?")
        .bind(1, current).bind(2, min_nodes).bind(3, max_nodes).bind(4, demand).bind(5, c.id).run();
    return c.id;
  });
  cp_.nodes().reconcile(now);
  cp_.clusters().refresh(id);
  return document(ref, name);
}

void Clusters::remove(const WorkspaceRef& ref, const std::string& name) {
  cp_.store().write([&] {
    auto c = require_cluster(cp_.store(), ref, name);
    cp_.jobs().end_jobs_under(Jobs::Deleted::kCluster, c.id, "cluster '" + c.name + "' was deleted");
    const fs::path dir = cp_.layout().cluster(c.resource_group, c.workspace, c.name);
    std::error_code ec;
    for (const auto& node : fs::directory_iterator(dir / "nodes", ec)) cp_.nodes().stop_setup_task(node.path());
    trash(cp_.store(), dir);
    cp_.store().prepare("DELETE FROM clusters WHERE id = ?").bind(1, c.id).run();  // nodes cascade
  });
  cp_.empty_trash();
}

Json Clusters::list_usages(const std::string& location) {
  bool ok = !location.empty() && std::all_of(location.begin(), location.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
  if (!ok)
    throw InvalidArgument("validation error: Parameter 'location' must conform to the following pattern: '^[-\\\\w\\\\._]+$'.");
  cp_.reconcile();
  std::map<std::string, int> dedicated, low;
  int total_dedicated = 0, total_low = 0;
  cp_.store().read([&] {
    auto st = cp_.store().prepare(
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
