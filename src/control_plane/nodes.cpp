// `batchai cluster node list|exec` and `cluster file list`: the service side; each node command
// goes to the engine of the cluster's engine.
#include "batchai/control_plane/nodes.hpp"

#include <algorithm>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/utf8.hpp"
#include "context.hpp"
#include "engine/cluster_engine.hpp"
#include "store/rows.hpp"
#include "mount_rules.hpp"
#include "reconciler.hpp"
#include "store/store.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

using namespace detail;

namespace {

constexpr const char* kUnsupportedFileList =
    "List files is supported only for clusters with startup task configure to store its output on Azure File Share "
    "or Azure Blob Container";

// The setup task's output prefix below $AZ_BATCHAI_MOUNT_ROOT, without its slashes at either end.
std::string output_below_mount_root(const Json& task) {
  const std::string prefix = value_or<std::string>(task, "stdOutErrPathPrefix", "");
  std::optional<std::string> rest;
  for (const std::string token : {"${AZ_BATCHAI_MOUNT_ROOT}", "$AZ_BATCHAI_MOUNT_ROOT"})
    if (prefix.rfind(token, 0) == 0 && (prefix.size() == token.size() || prefix[token.size()] == '/')) {
      rest = prefix.substr(token.size());
      break;
    }
  if (!rest) throw InvalidArgument(kUnsupportedFileList);
  if (task["stdOutErrPathSuffix"].is_null()) throw InvalidArgument("List files is not supported for this cluster");
  while (!rest->empty() && rest->front() == '/') rest->erase(0, 1);
  while (!rest->empty() && rest->back() == '/') rest->pop_back();
  return *rest;
}

}  // namespace

Json Nodes::list(const WorkspaceRef& ref, const std::string& cluster) {
  reconciler_.reconcile(ClusterScope::of_cluster(cx_.store(), ref, cluster));
  const ClusterRow row = cx_.store().read([&] { return require_cluster(cx_.store(), ref, cluster); });
  return engines_.of(row).list_nodes(row);
}

void Nodes::exec(const WorkspaceRef& ref, const std::string& cluster, const NodeExecOptions& options) {
  if (!options.exec && options.forwards.empty()) return;
  reconciler_.reconcile(ClusterScope::of_cluster(cx_.store(), ref, cluster));
  const ClusterRow row = cx_.store().read([&] { return require_cluster(cx_.store(), ref, cluster); });
  engines_.of(row).exec(row, options, nullptr);
}

Json Nodes::file_list(const WorkspaceRef& ref, const std::string& cluster, const std::string& path,
                                     int expiry_minutes) {
  // Local file:// URLs do not expire, but the service takes 5 to 600 minutes only.
  checked_integer(Json(expiry_minutes), "linkexpiryinminutes", 5, 600);
  if (!is_valid_utf8(path)) throw InvalidArgument("The path must be valid UTF-8.", "InvalidResourceName");
  const ClusterRow row = cx_.store().read([&] { return require_cluster(cx_.store(), ref, cluster); });
  engines_.of(row).check_supported(row, "cluster file list");
  reconciler_.reconcile();
  auto c = cx_.store().read([&] { return require_cluster(cx_.store(), ref, cluster); });
  const Json& setup = c.doc["nodeSetup"];
  if (!setup.is_object() || !setup["setupTask"].is_object()) return Json::array();
  const Json& task = setup["setupTask"];
  const std::string rest = output_below_mount_root(task);
  // Find the cluster-level share, then container, whose mount path holds the prefix.
  std::optional<fs::path> root;
  std::string remainder;
  auto match = [&](const Json& m) -> std::optional<std::string> {
    std::string mp = value_or<std::string>(m, "relativeMountPath", "");
    while (!mp.empty() && mp.back() == '/') mp.pop_back();
    while (!mp.empty() && mp.front() == '/') mp.erase(0, 1);
    if (mp.empty()) return std::nullopt;
    if (rest == mp) return std::string();
    if (rest.rfind(mp + "/", 0) == 0) return rest.substr(mp.size() + 1);
    return std::nullopt;
  };
  const Json& mv = setup["mountVolumes"];
  if (mv.is_object() && mv["azureFileShares"].is_array())
    for (const auto& m : mv["azureFileShares"])
      if (auto r = match(m); r && !root) {
        auto parsed = parse_azure_file_url(value_or<std::string>(m, "azureFileUrl", ""));
        if (!parsed) continue;
        root = cx_.layout().share(value_or<std::string>(m, "accountName", parsed->first), parsed->second);
        remainder = *r;
      }
  if (!root && mv.is_object() && mv["azureBlobFileSystems"].is_array())
    for (const auto& m : mv["azureBlobFileSystems"])
      if (auto r = match(m); r && !root) {
        std::string account = value_or<std::string>(m, "accountName", "");
        std::string container = value_or<std::string>(m, "containerName", "");
        root = cx_.layout().container(account, container);
        remainder = *r;
      }
  if (!root) throw InvalidArgument(kUnsupportedFileList);
  // Confined to the share or container: a link the setup task left there is listed, never followed out.
  auto storage = ConfinedDir::open(*root, "the setup task output of cluster '" + cluster + "'");
  if (!storage) return Json::array();
  std::string relative = storage->check((fs::path(remainder) / task["stdOutErrPathSuffix"].get<std::string>()).generic_string(),
                                        "The setup task output path");
  if (storage->check(path, "The path") != ".") relative += "/" + storage->check(path, "The path");
  auto folder = storage->open_dir(relative, "The path");
  Json out = Json::array();
  if (!folder) return out;
  for (const auto& e : folder->list()) {
    // A name that is not UTF-8 (the setup task made it) is listed with U+FFFD and no URL.
    const bool utf8 = is_valid_utf8(e.name);
    const std::string name = utf8 ? e.name : to_valid_utf8(e.name);
    if (e.is_dir()) {
      out.push_back({{"download_url", nullptr}, {"is_directory", true}, {"name", name}, {"size", nullptr}});
    } else {
      // A URL that works here, as `job file list` gives (an Azure SAS URL would lead nowhere);
      // a link that leads out or dangles gets neither URL nor size.
      const bool file = e.is_file();
      out.push_back({{"download_url", file && utf8 ? Json("file://" + fs::absolute(folder->path() / e.name).string()) : Json()},
                     {"is_directory", false},
                     {"name", name},
                     {"size", file ? Json(static_cast<std::uint64_t>(e.target->st_size)) : Json()}});
    }
  }
  return out;
}

}  // namespace batchai::control_plane
