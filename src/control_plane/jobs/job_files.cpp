// `job file list` / the folder `job file stream` follows (docs/behaviour.md §2.2.6, §4.10.2) and
// `job node list|exec` (docs/behaviour.md §1.3.5, §4.10.6) over the nodes that ran the job.
#include <algorithm>

#include "batchai/common/ids.hpp"
#include "jobs_internal.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

using namespace detail;
using namespace jobs_detail;

namespace {

std::string iso_of(const struct stat& st) {
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(st.st_mtim.tv_sec)) +
                 std::chrono::microseconds(st.st_mtim.tv_nsec / 1000);
  return format_iso(std::chrono::time_point_cast<Micros>(t));
}

bool is_within(const fs::path& candidate, const fs::path& root) {
  auto [r, c] = std::mismatch(root.begin(), root.end(), candidate.begin(), candidate.end());
  return r == root.end() || (r->empty() && std::next(r) == root.end());
}

// Where an opened folder really is (the kernel's name for its descriptor).
fs::path real_path_of(const ConfinedDir& dir) {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/fd/" + std::to_string(dir.fd()), ec);
  return ec ? fs::weakly_canonical(dir.path(), ec) : p;
}

}  // namespace

std::optional<ConfinedDir> Jobs::output_folder(const JobRef& ref, const std::string& directory_id, const std::string& path) {
  cp_.reconcile();
  JobRow job = cp_.store().read([&] { return require_job(cp_.store(), ref); });
  std::vector<std::string> known = {"stdouterr"};
  if (job.doc["outputDirectories"].is_array())
    for (const auto& d : job.doc["outputDirectories"]) known.push_back(value_or<std::string>(d, "id", ""));
  auto it = std::find_if(known.begin(), known.end(), [&](const std::string& k) { return iequals(k, directory_id); });
  if (it == known.end()) {
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw InvalidArgument("The job " + ref.name + " has no output directory with id '" + directory_id +
                          "'; use one of: " + list + ".");
  }
  const std::string label = "the output directory '" + *it + "' of job '" + ref.name + "'";
  confine_relative(path, "The path", label);  // refused before anything is looked up
  const Json& folders = job.private_data.value("folders", Json());
  if (!folders.is_object()) return std::nullopt;  // the job has not started yet
  std::string root;
  if (iequals(*it, "stdouterr")) {
    root = value_or<std::string>(folders, "stdouterr", "");
  } else {
    root = value_or<std::string>(folders["outputs"], it->c_str(), "");
  }
  if (root.empty()) return std::nullopt;
  // The folder was built from the job's fields: no '..' (a pathSuffix stored before the rule),
  // and it must lie in the job's storage or nodes.
  const fs::path folder(root);
  if (std::any_of(folder.begin(), folder.end(), [](const fs::path& p) { return p == ".."; }))
    throw InvalidArgument("The " + label.substr(4) + " leaves its folder ('..' in '" + root + "'); nothing is listed.");
  auto dir = ConfinedDir::open(folder, label);
  if (!dir) return std::nullopt;
  const fs::path home = fs::weakly_canonical(cp_.layout().home());
  const fs::path real = real_path_of(*dir);
  if (!is_within(real, home / "storage") && !is_within(real, home / "fileservers") && !is_within(real, home / "clusters"))
    throw InvalidArgument("The " + label.substr(4) + " leads out of the job's mounts (to '" + real.string() +
                          "'); nothing there is listed.");
  return dir->open_dir(path, "The path");
}

Json Jobs::file_list(const JobRef& ref, const std::string& directory_id, const std::string& path, int expiry_minutes) {
  if (expiry_minutes < 5 || expiry_minutes > 600)
    throw InvalidArgument("--expiry must be between 5 and 600 minutes, got " + std::to_string(expiry_minutes) + ".");
  Json out = Json::array();
  auto folder = output_folder(ref, directory_id, path);
  if (!folder) return out;
  // Entries as they are (byte-wise name order, as the storage listing returns it): a link that
  // leads out of the folder, or dangles, is a file with no size and no URL.
  for (const auto& e : folder->list()) {
    if (e.is_dir()) {
      out.push_back({{"contentLength", nullptr}, {"downloadUrl", nullptr}, {"fileType", "directory"},
                     {"lastModified", nullptr}, {"name", e.name}});
    } else if (e.is_file()) {
      out.push_back({{"contentLength", static_cast<std::uint64_t>(e.target->st_size)},
                     {"downloadUrl", "file://" + fs::absolute(folder->path() / e.name).string()},
                     {"fileType", "file"},
                     {"lastModified", iso_of(*e.target)},
                     {"name", e.name}});
    } else {
      out.push_back({{"contentLength", nullptr}, {"downloadUrl", nullptr}, {"fileType", "file"},
                     {"lastModified", iso_of(e.link)}, {"name", e.name}});
    }
  }
  return out;
}

Json Jobs::node_list(const JobRef& ref) {
  cp_.reconcile();
  Store& store = cp_.store();
  return store.read([&] {
    JobRow job = require_job(store, ref);
    Json out = Json::array();
    if (!job.cluster_id || !job.private_data.contains("nodes")) return out;
    auto cluster = load_cluster(store, *job.cluster_id);
    if (!cluster) return out;
    for (const auto& id : job.private_data["nodes"]) {
      auto st = store.prepare("SELECT ordinal FROM nodes WHERE node_id = ? AND cluster_id = ? AND state <> 'leaving'");
      st.bind(1, id.get<std::string>()).bind(2, *job.cluster_id);
      if (!st.step()) continue;  // the node is gone: only still-allocated nodes are listed
      out.push_back({{"ipAddress", cluster->public_ip},
                     {"nodeId", id},
                     {"port", static_cast<double>(50000 + st.integer(0))}});
    }
    return out;
  });
}

void Jobs::node_exec(const JobRef& ref, const NodeExecOptions& options) {
  if (!options.exec && options.forwards.empty()) return;
  Json nodes = node_list(ref);
  auto [where, cluster_name] = cp_.store().read([&] {
    JobRow job = require_job(cp_.store(), ref);
    auto c = job.cluster_id ? load_cluster(cp_.store(), *job.cluster_id) : std::nullopt;
    if (!c) cluster_not_found();
    return std::make_pair(WorkspaceRef{c->resource_group, c->workspace}, c->name);
  });
  if (nodes.empty()) throw InvalidArgument("No nodes available in the cluster");
  NodeExecOptions chosen = options;
  if (options.node_id) {
    auto it = std::find_if(nodes.begin(), nodes.end(), [&](const Json& n) { return n["nodeId"] == *options.node_id; });
    if (it == nodes.end()) throw InvalidArgument("Cannot find a node with id=" + *options.node_id);
  } else {
    chosen.node_id = nodes[0]["nodeId"].get<std::string>();
  }
  cp_.cluster_node_exec(where, cluster_name, chosen);
}

}  // namespace batchai::control_plane
