// `job create|show|list|delete|terminate` (docs/behaviour.md §4.4, §4.2), end_jobs_under, which
// ends the jobs of a deleted experiment, workspace or cluster, and `job file list` / the folder
// `job file stream` follows (§2.2.6, §4.10.2) and `job node list|exec` (§1.3.5, §4.10.6).
#include "batchai/control_plane/jobs.hpp"

#include <algorithm>
#include <thread>

#include "batchai/common/ids.hpp"
#include "batchai/common/log.hpp"
#include "batchai/common/utf8.hpp"
#include "context.hpp"
#include "reconciler.hpp"
#include "cluster_docs.hpp"
#include "engine/cluster_engine.hpp"
#include "job_processes.hpp"
#include "store/jobs.hpp"
#include "mount_rules.hpp"
#include "scheduler.hpp"
#include "vm_sizes.hpp"
#include "node_mounts.hpp"
#include "batchai/runtime/job_spec.hpp"
#include "batchai/runtime/podman.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

using namespace detail;
using namespace jobs_detail;

namespace {

int priority_rank(const std::string& priority) {
  if (priority == "high") return 2;
  if (priority == "low") return 0;
  return 1;
}

// --nfs/--afs-name/--bfs-name as job-level mounts (docs/behaviour.md §4.4 step 5), appended to the file's
// wire-form mountVolumes before validation and patching (their entries are complete already).
void add_command_line_mounts(const Context& cx, const JobCreateOptions& o, const KeyLookup& lookup, Json& props) {
  if (!o.mounts.nfs && !o.mounts.afs_name && !o.mounts.bfs_name) return;
  std::string file_server_id;
  if (o.mounts.nfs) {
    WorkspaceRef where = o.where;
    std::string name = *o.mounts.nfs;
    if (auto id = parse_arm_id(name); id && id->name_of("workspaces") && !id->path.empty()) {
      where = {id->resource_group, *id->name_of("workspaces")};
      name = id->path.back().second;
    }
    file_server_id = cx.store().read([&] { return require_file_server_doc(cx.store(), where, name); })["id"].get<std::string>();
  }
  append_command_line_mounts(props["mountVolumes"], o.mounts, file_server_id, lookup);
}

// The bounds of a job's counts that depend on its cluster's VM size (the int32 and lower
// bounds are checked when the job file is read): nodeCount no more than the cluster can ever
// have under the regional quota, processCount no more than one process per vCPU of the job's
// nodes, workerCount per GPU (per vCPU on VMs without GPUs, docs/behaviour.md §3.2), parameterServerCount
// no more than nodeCount.
void check_counts_fit_cluster(const runtime::Job& job, const ClusterRow& cluster) {
  const std::string vm_name = value_or<std::string>(cluster.doc, "vmSize", "");
  const VmSize vm = vm_size_info(vm_name);
  const std::int64_t nodes = job.node_count;
  const std::int64_t max_nodes = max_nodes_within_quota(vm_name);
  const std::string& cluster_name = cluster.name;
  if (nodes > max_nodes)
    throw InvalidArgument("nodeCount " + std::to_string(nodes) + " is more than cluster '" + cluster_name +
                          "' can ever have: the regional quota of " + std::to_string(kRegionalVcpuQuota) +
                          " vCPUs allows at most " + std::to_string(max_nodes) + " nodes of " + vm_name + " (" +
                          std::to_string(vm.vcpus) + " vCPUs each).");
  const std::string key = runtime::settings_key(job.tool_type());
  const std::string of_nodes = "nodeCount " + std::to_string(nodes) + " x ";
  auto at_most = [&](const char* field, std::optional<int> value, std::int64_t per_node, const std::string& why) {
    if (!value || *value <= nodes * per_node) return;
    throw InvalidArgument(key + "." + field + " must be at most " + std::to_string(nodes * per_node) + " (" + of_nodes +
                          std::to_string(per_node) + why + "), got " + std::to_string(*value) + ".");
  };
  std::visit(
      [&](const auto& t) {
        if constexpr (requires { t.process_count; }) at_most("processCount", t.process_count, vm.vcpus, " vCPUs of " + vm_name);
      },
      job.toolkit);
  if (const auto* tf = std::get_if<runtime::TensorFlowToolkit>(&job.toolkit)) {
    at_most("workerCount", tf->worker_count, vm.gpus > 0 ? vm.gpus : vm.vcpus,
            (vm.gpus > 0 ? " GPUs of " : " vCPUs of ") + vm_name);
    at_most("parameterServerCount", tf->parameter_server_count, 1, " per node");
  }
}

// The cluster a new job names: --cluster, else the document's cluster.id; a name in the job's
// workspace or an ARM id elsewhere.
ClusterRow cluster_of_new_job(Store& store, const JobCreateOptions& o, const Json& props) {
  std::string cluster_text = o.cluster.value_or("");
  if (cluster_text.empty() && props.contains("cluster") && props["cluster"].is_object())
    cluster_text = value_or<std::string>(props["cluster"], "id", "");
  if (cluster_text.empty()) throw InvalidArgument("Please provide cluster information via command line or configuration file.");
  WorkspaceRef where = o.where;
  std::string name = cluster_text;
  if (auto id = parse_arm_id(cluster_text)) {
    if (!id->name_of("workspaces") || id->path.empty()) cluster_not_found();
    where = {id->resource_group, *id->name_of("workspaces")};
    name = id->path.back().second;
  }
  return require_cluster(store, where, name);
}

}  // namespace

Json Jobs::create(const JobCreateOptions& o) {
  reconciler_.reconcile_before_schedule();  // the scheduler's step runs once the job is written
  validate_resource_name(o.name, "job_name");
  Store& store = cx_.store();
  // 1. the job must not exist (the experiment must)
  store.read([&] {
    if (find_job(store, {o.where, o.experiment, o.name}))
      throw AlreadyExists("A job with given name, experiment, workspace and resource group already exists.");
  });
  // 2. the job's document
  Json file = o.config.is_object() ? o.config : Json::object();
  Json props = file.contains("properties") && file["properties"].is_object() ? file["properties"] : Json::object();
  // 3. the cluster: name in this workspace or an ARM id elsewhere
  const ClusterRow cluster = store.read([&] { return cluster_of_new_job(store, o, props); });
  ClusterEngine& engine = engines_.of(cluster);
  // 4./5. storage placeholders of the file's mounts, then the command-line mounts
  KeyLookup lookup = [&store](const std::string& account) { return account_key(store, account); };
  add_command_line_mounts(cx_, o, lookup, props);
  file["properties"] = props;
  runtime::JobIdentity identity;
  identity.subscription = subscription_id();
  identity.resource_group = o.where.resource_group;
  identity.workspace = o.where.workspace;
  identity.experiment = o.experiment;
  identity.name = o.name;
  identity.cluster_id = cluster.doc["id"].get<std::string>();
  const std::int64_t now = to_us(cx_.clock().now());
  identity.creation_time = iso_us(now);
  AccountKeys keys = [&store](const std::string& account) { return account_keys(store, account); };
  // The file as written is checked first; then the control plane's mount rules (docs/behaviour.md §4.5).
  runtime::JobSpec spec = runtime::build_job_spec(file, identity);
  if (props.contains("mountVolumes") && !props["mountVolumes"].is_null()) {
    Json mv = props["mountVolumes"];
    patch_mount_volumes(mv, effective_storage(o.mounts, lookup), lookup);
    check_mount_account_keys(mv, keys);  // a wrong key fails here, as the storage commands do
    validate_mount_volumes(mv);                  // names and mount paths, before they become folders
    runtime::set_mount_volumes(spec, mv);
  }
  check_counts_fit_cluster(spec.job, cluster);
  if (spec.job.container_settings) {
    runtime::require_podman("The job '" + o.name + "' runs in the container image '" + spec.job.container_settings->image + "'");
  }
  Json doc = spec.document;
  inject_resource_group(doc);
  const std::string key = new_uuid();
  Json private_data = {{"secrets", spec.secrets}};
  if (!spec.registry_password.empty()) private_data["registryPassword"] = spec.registry_password;
  store.write([&] {
    const std::int64_t exp = require_experiment(store, o.where, o.experiment);
    // Checked again under the write lock: two concurrent creates of one name, one wins.
    if (find_job(store, {o.where, o.experiment, o.name}))
      throw AlreadyExists("A job with given name, experiment, workspace and resource group already exists.");
    insert_job(store, {key, exp, cluster.id, o.name, priority_rank(spec.job.priority), spec.job.node_count, now, doc,
                       private_data, cluster.kind});
  });
  try {
    engine.start_job(key, cluster);
  } catch (const Error& e) {
    store.write([&] {
      if (auto job = load_job_by_key(store, key)) {
        finish_job(*job, false, std::nullopt,
                   job_error("SupervisorStartFailed", std::string("Could not start the job's supervisor: ") + e.what()), now);
        save_job(store, *job);
      }
    });
  }
  // Placed now (its supervisor, when start_job started one, finds it running).
  reconciler_.schedule();
  return doc;
}

Json Jobs::show(const JobRef& ref) {
  reconciler_.reconcile(ClusterScope::of_job(cx_.store(), ref));
  return cx_.store().read([&] { return require_job(cx_.store(), ref).doc; });
}

Json Jobs::list(const WorkspaceRef& where, const std::string& experiment, const std::vector<std::string>& fields) {
  reconciler_.reconcile(ClusterScope::of_experiment(cx_.store(), where, experiment));
  Store& store = cx_.store();
  return store.read([&] { return experiment_job_docs(store, require_experiment(store, where, experiment), fields); });
}

void Jobs::terminate(const JobRef& ref) {
  reconciler_.reconcile(ClusterScope::of_job(cx_.store(), ref));
  end(ref);
  scheduler_.step();  // the freed nodes can take the next queued job now
}

void Jobs::end(const JobRef& ref) {
  Store& store = cx_.store();
  const std::int64_t now = to_us(cx_.clock().now());
  auto job = store.write([&] {
    JobRow j = require_job(store, ref);
    if (j.state == JobState::kQueued && engines_.of(j).may_start_any_moment(j)) {
      set_state(j, JobState::kTerminating, now);  // its engine may start it any moment: ended below
      save_job(store, j);
    } else if (j.state == JobState::kQueued) {
      finish_job(j, false, std::nullopt, job_error("JobTerminated", "The job was terminated before it started."), now);
      save_job(store, j);
    } else if (j.state == JobState::kRunning) {
      set_state(j, JobState::kTerminating, now);
      save_job(store, j);
    }
    return j;
  });
  if (job.state == JobState::kTerminating) engines_.of(job).terminate(job);
}

void Jobs::remove(const JobRef& ref) {
  reconciler_.reconcile(ClusterScope::of_job(cx_.store(), ref));
  end(ref);
  Store& store = cx_.store();
  store.write([&] {
    JobRow j = require_job(store, ref);
    for (auto cluster : release_nodes(store, j.key)) docs_.refresh(cluster);
    trash(store, state_dir(cx_.layout(), j.key));
    trash(store, cx_.layout().job_exchange(j.key));  // a Slurm job's, on the shared folder
    delete_job(store, j.id);
  });
  cx_.empty_trash();
  scheduler_.step();
}

// ---- job files and nodes ----

namespace {

std::string iso_of(const struct stat& st) {
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(st.st_mtim.tv_sec)) +
                 std::chrono::microseconds(st.st_mtim.tv_nsec / 1000);
  return format_iso(std::chrono::time_point_cast<Micros>(t));
}

// Where an opened folder really is (the kernel's name for its descriptor).
fs::path real_path_of(const ConfinedDir& dir) {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/fd/" + std::to_string(dir.fd()), ec);
  return ec ? fs::weakly_canonical(dir.path(), ec) : p;
}

}  // namespace

std::optional<ConfinedDir> Jobs::output_folder(const JobRef& ref, const std::string& directory_id, const std::string& path) {
  reconciler_.reconcile(ClusterScope::of_job(cx_.store(), ref));
  JobRow job = cx_.store().read([&] { return require_job(cx_.store(), ref); });
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
  const fs::path home = fs::weakly_canonical(cx_.layout().shared());
  const fs::path real = real_path_of(*dir);
  if (!is_within(real, home / "storage") && !is_within(real, home / "fileservers") && !is_within(real, home / "clusters"))
    throw InvalidArgument("The " + label.substr(4) + " leads out of the job's mounts (to '" + real.string() +
                          "'); nothing there is listed.");
  return dir->open_dir(path, "The path");
}

Json Jobs::file_list(const JobRef& ref, const std::string& directory_id, const std::string& path, int expiry_minutes) {
  if (expiry_minutes < 5 || expiry_minutes > 600)
    throw InvalidArgument("linkexpiryinminutes must be between 5 and 600 minutes, got " +
                          std::to_string(expiry_minutes) + ".");
  if (!is_valid_utf8(directory_id) || !is_valid_utf8(path))
    throw InvalidArgument("The output directory id and path must be valid UTF-8.", "InvalidResourceName");
  Json out = Json::array();
  auto folder = output_folder(ref, directory_id, path);
  if (!folder) return out;
  // Entries as they are (byte-wise name order, as the storage listing returns it): a link that
  // leads out of the folder, or dangles, is a file with no size and no URL. A name a job made
  // that is not UTF-8 is listed with U+FFFD for its bad bytes and no URL (it names no file).
  for (const auto& e : folder->list()) {
    const bool utf8 = is_valid_utf8(e.name);
    const std::string name = utf8 ? e.name : to_valid_utf8(e.name);
    if (e.is_dir()) {
      out.push_back({{"contentLength", nullptr}, {"downloadUrl", nullptr}, {"fileType", "directory"},
                     {"lastModified", nullptr}, {"name", name}});
    } else if (e.is_file()) {
      out.push_back({{"contentLength", static_cast<std::uint64_t>(e.target->st_size)},
                     {"downloadUrl", utf8 ? Json("file://" + fs::absolute(folder->path() / e.name).string()) : Json()},
                     {"fileType", "file"},
                     {"lastModified", iso_of(*e.target)},
                     {"name", name}});
    } else {
      out.push_back({{"contentLength", nullptr}, {"downloadUrl", nullptr}, {"fileType", "file"},
                     {"lastModified", iso_of(e.link)}, {"name", name}});
    }
  }
  return out;
}

Json Jobs::node_list(const JobRef& ref) {
  reconciler_.reconcile(ClusterScope::of_job(cx_.store(), ref));
  Store& store = cx_.store();
  return store.read([&] {
    JobRow job = require_job(store, ref);
    if (!job.cluster_id) return Json::array();
    const auto cluster = load_cluster(store, *job.cluster_id);
    return engines_.of(job).job_nodes(job, cluster ? &*cluster : nullptr);
  });
}

void Jobs::node_exec(const JobRef& ref, const NodeExecOptions& options) {
  if (!options.exec && options.forwards.empty()) return;
  Json nodes = node_list(ref);
  auto [job, cluster] = cx_.store().read([&] {
    JobRow j = require_job(cx_.store(), ref);
    auto c = j.cluster_id ? load_cluster(cx_.store(), *j.cluster_id) : std::nullopt;
    if (!c) cluster_not_found();
    return std::make_pair(std::move(j), std::move(*c));
  });
  if (nodes.empty()) throw InvalidArgument("No nodes available in the cluster");
  NodeExecOptions chosen = options;
  if (options.node_id) {
    auto it = std::find_if(nodes.begin(), nodes.end(), [&](const Json& n) { return n["nodeId"] == *options.node_id; });
    if (it == nodes.end()) throw InvalidArgument("Cannot find a node with id=" + *options.node_id);
  } else {
    chosen.node_id = nodes[0]["nodeId"].get<std::string>();
  }
  engines_.of(job).exec(cluster, chosen, &job);
}

}  // namespace batchai::control_plane
