// `batchai file-server ...` (docs/behaviour.md §4.6): a simulated NFS server whose export is a folder under
// $BATCHAI_HOME/fileservers/; it becomes `succeeded` with mountSettings after the provisioning delay.
#include "batchai/control_plane/file_servers.hpp"

#include <random>

#include "batchai/common/ids.hpp"
#include "cluster_rules.hpp"
#include "context.hpp"
#include "file_server_steps.hpp"
#include "reconciler.hpp"
#include "store/store.hpp"
#include "store/file_servers.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

using namespace detail;

namespace {

constexpr std::int64_t kMaxDiskSizeGb = 4095;
constexpr std::int64_t kMaxDiskCount = 64;

Json mount_settings() {
  std::random_device rd;
  return {{"fileServerInternalIp", "10.0.0.4"},
          {"fileServerPublicIp", "13." + std::to_string(64 + rd() % 128) + "." + std::to_string(rd() % 256) + "." +
                                     std::to_string(1 + rd() % 254)},
          {"mountPoint", "/mnt/data"}};
}

}  // namespace

// A function-try-block: a value of the wrong JSON type in the configuration file surfaces from
// nlohmann wherever the value is read.
std::optional<Json> FileServers::create(const FileServerCreateOptions& o) try {
  validate_resource_name(o.where.workspace, "workspace_name");
  validate_resource_name(o.name, "file_server_name");
  const std::string home = cx_.settings().user_home.string();
  // 1. --generate-ssh-keys
  const AdminOptions admin = o.admin.generate_ssh_keys ? with_generated_ssh_keys(cx_.launcher(), o.admin, home) : o.admin;
  // 2. refuse an existing file server
  auto ws = cx_.store().read([&] { return require_workspace_for_new(cx_.store(), o.where, "file_servers", o.name); });
  // 3. the document's properties
  Json props = Json::object();
  if (o.config && o.config->is_object() && o.config->contains("properties") && (*o.config)["properties"].is_object())
    props = (*o.config)["properties"];
  // 4. admin account (5. location is the workspace's; the 2018-05-01 model prints none)
  Json ssh = member_or_null(props, "sshConfiguration");
  Json user = resolve_admin_account(admin, member_or_null(ssh, "userAccountSettings"), home, cx_.settings().user_name,
                                    /*credential_required=*/true);
  user["adminUserPassword"] = nullptr;
  Json ips = member_or_null(ssh, "publicIPsToAllow");
  // 6. disks
  Json disks = member_or_null(props, "dataDisks");
  // Counts are checked as 64-bit before narrowing, then against the service's bounds: a disk is
  // 1 to 4095 GB (the largest managed data disk of the 2018-05-01 API), a VM attaches at most 64.
  const Json size_json = o.disk_size ? Json(*o.disk_size) : member_or_null(disks, "diskSizeInGB");
  const Json count_json = o.disk_count ? Json(*o.disk_count) : member_or_null(disks, "diskCount");
  const char* size_name = o.disk_size ? "--disk-size" : "dataDisks.diskSizeInGB";
  const char* count_name = o.disk_count ? "--disk-count" : "dataDisks.diskCount";
  std::string caching = o.caching_type.value_or(value_or<std::string>(disks, "cachingType", "none"));
  std::string sku = o.storage_sku.value_or(value_or<std::string>(disks, "storageAccountType", ""));
  if (size_json.is_null()) throw InvalidArgument("Please provide disk size in Gb.");
  if (count_json.is_null() || (count_json.is_number() && count_json.get<double>() < 1))
    throw InvalidArgument("Please provide number of data disks (at least one disk is required).");
  const std::int64_t size = checked_integer(size_json, size_name, 1, kMaxDiskSizeGb);
  const std::int64_t count = checked_integer(count_json, count_name, 1, kMaxDiskCount);
  if (sku.empty()) throw InvalidArgument("Please provide storage account type (storage sku).");
  // 7. VM size
  std::string vm_size = o.vm_size.value_or(value_or<std::string>(props, "vmSize", ""));
  if (vm_size.empty()) throw InvalidArgument("Please provide VM size.");
  // 8. subnet (the service makes a vnet of its own when none is given)
  std::string subnet = value_or<std::string>(member_or_null(props, "subnet"), "id", "");
  if (o.subnet) subnet = *o.subnet;
  if (!subnet.empty() && !looks_like_arm_id(subnet)) throw InvalidArgument("Ill-formed subnet resource id");
  if (subnet.empty())
    subnet = arm_id(subscription_id(), ws.resource_group,
                    {{"virtualNetworks", to_lower(o.name) + "vnet"}, {"subnets", "Subnet-1"}}, "Microsoft.Network");
  // 9. PUT
  const auto now = to_us(cx_.clock().now());
  const bool wait = !o.no_wait;
  const std::int64_t ready = wait ? now : now + cx_.settings().provisioning_delay.count();
  const bool done = ready <= now;
  std::string vm_upper = vm_size;
  for (auto& ch : vm_upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  Json doc = {{"creationTime", iso_us(now)},
              {"dataDisks",
               {{"cachingType", caching}, {"diskCount", count}, {"diskSizeInGb", size}, {"storageAccountType", sku}}},
              {"id", arm_id(subscription_id(), ws.resource_group, {{"workspaces", ws.name}, {"fileServers", o.name}})},
              {"mountSettings", done ? mount_settings() : Json(nullptr)},
              {"name", o.name},
              {"provisioningState", done ? "succeeded" : "creating"},
              {"provisioningStateTransitionTime", iso_us(now)},
              {"sshConfiguration", {{"publicIpsToAllow", ips}, {"userAccountSettings", user}}},
              {"subnet", {{"id", subnet}}},
              {"type", "Microsoft.BatchAI/workspaces/fileservers"},
              {"vmSize", vm_upper}};
  inject_resource_group(doc);
  cx_.store().write([&] {
    require_workspace_for_new(cx_.store(), o.where, "file_servers", o.name);  // a concurrent create since step 2
    insert_file_server(cx_.store(), ws.id, o.name, doc, ready, !done);
  });
  std::error_code ec;
  fs::create_directories(cx_.layout().file_server_export(ws.resource_group, ws.name, o.name), ec);
  if (o.no_wait) return std::nullopt;
  return doc;
} catch (const Json::exception& e) {
  throw InvalidArgument("The file server configuration has a value of the wrong type: " +
                        json_error_text(e) + ".");
}

void step_file_servers(const Context& cx_, std::int64_t now_us) {
  cx_.store().write([&] {
    for (auto& server : ready_file_servers(cx_.store(), now_us)) {
      server.doc["provisioningState"] = "succeeded";
      server.doc["provisioningStateTransitionTime"] = iso_us(server.ready_us);
      server.doc["mountSettings"] = mount_settings();
      settle_file_server(cx_.store(), server.id, server.doc);
    }
  });
}

Json FileServers::show(const WorkspaceRef& ref, const std::string& name) {
  reconciler_.reconcile();
  return cx_.store().read([&] { return require_file_server_doc(cx_.store(), ref, name); });
}

Json FileServers::list(const WorkspaceRef& ref) {
  reconciler_.reconcile();
  return cx_.store().read([&] {
    auto ws = require_workspace(cx_.store(), ref);
    return file_server_docs(cx_.store(), ws.id);
  });
}

void FileServers::remove(const WorkspaceRef& ref, const std::string& name) {
  cx_.store().write([&] {
    auto ws = require_workspace(cx_.store(), ref);
    const auto id = file_server_id(cx_.store(), ws.id, name);
    if (!id) file_server_not_found(name);
    trash(cx_.store(), cx_.layout().file_server(ws.resource_group, ws.name, name));
    delete_file_server(cx_.store(), *id);
  });
  cx_.empty_trash();
}

}  // namespace batchai::control_plane
