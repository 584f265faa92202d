// Slurm-backed clusters: the partition check at create, the counts from sinfo at reconcile, and
// what the node commands show or refuse (docs/slurm.md, "Slurm-backed clusters").
#include "slurm_clusters.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>

#include "batchai/common/errors.hpp"
#include "batchai/common/log.hpp"
#include "node_folders.hpp"
#include "batchai/slurm/batch_script.hpp"
#include "batchai/slurm/client.hpp"
#include "batchai/slurm/srun_step.hpp"
#include "batchai/slurm/states.hpp"
#include "slurm_reconcile.hpp"
#include "store/store.hpp"
#include "vm_sizes.hpp"

namespace batchai::control_plane::detail {

std::optional<std::string> requested_slurm_partition(const std::optional<std::string>& option, const Json& props) {
  std::optional<std::string> partition = option;
  if (!partition && props.is_object() && props.contains("slurm")) {
    const Json& slurm = props["slurm"];
    if (!slurm.is_object() || !slurm.contains("partition") || !slurm["partition"].is_string())
      throw InvalidArgument("properties.slurm.partition in the cluster configuration must be the name of a Slurm "
                            "partition (text).");
    partition = slurm["partition"].get<std::string>();
  }
  if (partition) slurm::check_partition_name(*partition);
  return partition;
}

void check_shared_folder(const NodeLayout& layout) {
  const std::string dir = layout.shared().string();
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InvalidArgument("The shared folder '" + dir + "' (BATCHAI_SHARED_DIR) does not exist or is not a folder: "
                          "mount the folder that every node of the partition shares, at the same path, and set "
                          "BATCHAI_SHARED_DIR to it (docs/slurm.md).",
                          "SharedFolderMissing");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InvalidArgument("The shared folder '" + dir + "' (BATCHAI_SHARED_DIR) is not writable by this user: jobs "
                          "write their folders there (docs/slurm.md).",
                          "SharedFolderNotWritable");
}

std::vector<slurm::NodeInfo> probe_slurm_partition(const SlurmEnv& env, const std::string& partition) {
  check_shared_folder(env.layout());
  refuse_while_silent(env);
  SlurmBudget budget;
  try {
    slurm::SlurmClient client(env.launcher(), budget.options());
    client.check_version();
    return env.client(budget).partition_nodes(partition);
  } catch (const Error& e) {
    if (is_silent_controller(e)) record_silent_controller(env, e);
    throw;
  }
}

std::vector<SlurmNodeRow> slurm_node_rows(const std::vector<slurm::NodeInfo>& nodes) {
  std::vector<SlurmNodeRow> out;
  for (const auto& n : nodes)
    out.push_back({n.name, n.address, n.gpus, std::string(slurm::to_string(n.state)), n.slurm_state});
  return out;
}

void apply_slurm_counts(Json& doc, const std::vector<SlurmNodeRow>& nodes) {
  std::map<std::string, int> counts;
  for (const auto& n : nodes) ++counts[n.state];
  doc["nodeStateCounts"] = {{"idleNodeCount", counts["idle"]},
                            {"leavingNodeCount", 0},
                            {"preparingNodeCount", counts["preparing"]},
                            {"runningNodeCount", counts["running"]},
                            {"unusableNodeCount", counts["unusable"]}};
  doc["currentNodeCount"] = static_cast<int>(nodes.size());
  doc["allocationState"] = "steady";  // Slurm's nodes are there or not; batchai never resizes them
}

void refresh_slurm_clusters(const SlurmEnv& env, const std::vector<std::int64_t>& clusters, const SlurmBudget& budget) {
  // The partitions of the named clusters; several clusters on one partition share one sinfo.
  std::map<std::string, std::vector<std::int64_t>> partitions = env.store().read([&] {
    std::map<std::string, std::vector<std::int64_t>> out;
    for (std::int64_t id : clusters)
      if (auto partition = slurm_partition_of(env.store(), id)) out[*partition].push_back(id);
    return out;
  });
  for (const auto& [partition, ids] : partitions) {
    if (budget.spent()) return;  // the rest keep their last known counts
    std::optional<std::vector<slurm::NodeInfo>> nodes;
    Json error;
    try {
      nodes = env.client(budget).partition_nodes(partition);
    } catch (const Error& e) {
      if (is_silent_controller(e)) throw;  // reconcile_slurm records it for every process
      // Last known counts stay; the error says they are stale and why.
      error = {{"code", e.code().empty() ? std::string("SlurmError") : e.code()},
               {"details", Json::array({{{"name", "partition"}, {"value", partition}}})},
               {"message", "Slurm did not report the nodes of partition '" + partition +
                               "'; the node counts shown are the last known ones: " + e.what()}};
      log::warning(error["message"].get<std::string>());
    }
    env.store().write([&] {
      for (std::int64_t id : ids) {
        auto c = load_cluster(env.store(), id);
        const auto stored = load_slurm_cluster(env.store(), id);
        if (!c || !stored || stored->partition != partition) continue;  // deleted or replaced meanwhile
        if (nodes) {
          const SlurmClusterRow seen{partition, slurm_node_rows(*nodes)};
          if (seen.nodes != stored->nodes) save_slurm_cluster(env.store(), id, seen);
          apply_slurm_counts(c->doc, seen.nodes);
          c->doc["errors"] = nullptr;
        } else {
          c->doc["errors"] = Json::array({error});
        }
        save_cluster_doc(env.store(), id, c->doc);
      }
    });
  }
}

namespace {
// A stored node's address; its name for a node stored before addresses were read: the name is
// what Slurm itself falls back to when NodeAddr is not set.
std::string stored_address(const SlurmNodeRow& node) { return node.address.empty() ? node.name : node.address; }
}  // namespace

std::string slurm_node_address(const std::vector<SlurmNodeRow>& nodes, const std::string& node_name) {
  for (const auto& n : nodes)
    if (n.name == node_name) return stored_address(n);
  return node_name;
}

Json slurm_node_list(const std::vector<SlurmNodeRow>& nodes) {
  Json out = Json::array();
  // The address is Slurm's NodeAddr (sinfo %o) as last seen; port 22, as for a Batch AI node.
  for (const auto& n : nodes) out.push_back({{"ipAddress", stored_address(n)}, {"nodeId", n.name}, {"port", 22.0}});
  return out;
}

int slurm_gpus_per_node(const std::string& vm_size, const std::vector<SlurmNodeRow>& nodes) {
  const int wanted = vm_size_info(vm_size).gpus;
  if (wanted <= 0) return 0;
  for (const auto& n : nodes)
    if (n.gpus >= wanted) return wanted;
  return 0;
}

void warn_if_no_gpus(const std::string& cluster_name, const std::string& vm_size, const SlurmClusterRow& stored) {
  const int wanted = vm_size_info(vm_size).gpus;
  if (wanted > 0 && slurm_gpus_per_node(vm_size, stored.nodes) == 0)
    log::warning("No node of Slurm partition '" + stored.partition + "' has " + std::to_string(wanted) +
                 " GPU(s) among its generic resources (gres), as " + vm_size + " has: jobs on cluster '" +
                 cluster_name + "' run without GPUs (AZ_BATCHAI_NUM_GPUS=0).");
}

void slurm_node_exec(const SlurmEnv& env, const ClusterRow& cluster, const NodeExecOptions& options,
                     std::optional<slurm::JobId> job) {
  const SlurmClusterRow stored =
      env.store().read([&] { return load_slurm_cluster(env.store(), cluster.id); }).value_or(SlurmClusterRow{});
  if (!options.forwards.empty())
    throw InvalidArgument("-L port forwarding is not served on Slurm clusters: cluster '" + cluster.name +
                          "' stands on Slurm partition '" + stored.partition +
                          "'; forward with ssh -L to the node's address (`node list`).");
  if (!options.exec) return;
  std::vector<std::string> names;
  for (const auto& n : stored.nodes) names.push_back(n.name);
  if (names.empty()) throw InvalidArgument("No nodes available in the cluster");
  const std::string node = options.node_id.value_or(names.front());
  if (std::find(names.begin(), names.end(), node) == names.end())
    throw InvalidArgument("Cannot find a node with id=" + node);
  const std::filesystem::path folder = env.layout().node(cluster.resource_group, cluster.workspace, cluster.name, node);
  ensure_node_folder(env.layout(), cluster.doc, folder);
  ProcessSpec spec;
  spec.env = node_mount_environment(folder);
  spec.env["BATCHAI_EXEC_COMMAND"] = *options.exec;
  slurm::SrunStep step;
  step.node = node;
  step.job = job;
  step.overlap = job.has_value();
  if (!job) step.immediate_s = 30;  // a node another job holds: a clear refusal, not a wait in the queue
  step.cwd = folder;
  step.command = {"bash", "-c", "exec 2>&1; exec bash -lc \"$BATCHAI_EXEC_COMMAND\""};
  spec.argv = slurm::srun_argv(step);
  spec.new_session = false;  // Ctrl-C reaches srun, which ends the step
  env.launcher().run(spec);   // as in the simulation, the remote exit code is not propagated
}

}  // namespace batchai::control_plane::detail
