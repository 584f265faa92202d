#include "slurm_engine.hpp"

#include <map>

#include "batchai/slurm/parsers.hpp"
#include "batchai/slurm/states.hpp"
#include "store/jobs.hpp"
#include "slurm_clusters.hpp"
#include "slurm_jobs.hpp"
#include "slurm_reconcile.hpp"

namespace batchai::control_plane::detail {

using namespace jobs_detail;

namespace {

// The partition a cluster of this engine stands on, as stored.
std::string partition_of(Store& store, const ClusterRow& cluster) {
  return store.read([&] { return slurm_partition_of(store, cluster.id); }).value_or("");
}

// What place() found: the partition and its nodes, stored with the new cluster's row.
struct SlurmPlacement final : EnginePlacement {
  SlurmClusterRow cluster;
};

const SlurmClusterRow& placed(const EnginePlacement* placement) {
  const auto* p = dynamic_cast<const SlurmPlacement*>(placement);
  if (p == nullptr) throw Error("The Slurm engine was handed a cluster it did not place.");
  return p->cluster;
}

}  // namespace

bool SlurmEngine::claims(const ClusterCreateOptions& options, const Json& properties) const {
  return options.slurm_partition.has_value() || (properties.is_object() && properties.contains("slurm"));
}

void SlurmEngine::check_request(const ClusterCreateOptions& options, const Json& properties) const {
  requested_slurm_partition(options.slurm_partition, properties);
}

std::unique_ptr<EnginePlacement> SlurmEngine::place(const NewCluster& cluster) {
  // The controller and the partition are asked now, before auto-storage or the row makes
  // anything; their error ends the create with nothing made.
  auto out = std::make_unique<SlurmPlacement>();
  out->cluster.partition = *requested_slurm_partition(cluster.options.slurm_partition, cluster.properties);
  out->cluster.nodes = slurm_node_rows(probe_slurm_partition(env_, out->cluster.partition));
  return out;
}

bool SlurmEngine::describe_new(Json& doc, const EnginePlacement* placement, const NewCluster& cluster) {
  const SlurmClusterRow& found = placed(placement);
  apply_slurm_counts(doc, found.nodes);
  warn_if_no_gpus(cluster.options.name, cluster.vm_size, found);
  return false;  // Slurm's nodes are there already: nothing to allocate
}

void SlurmEngine::store_placement(std::int64_t cluster_id, const EnginePlacement* placement) {
  save_slurm_cluster(env_.store(), cluster_id, placed(placement));
}

void SlurmEngine::step(const ClusterRow& cluster, std::int64_t) {
  // Slurm's nodes: a resize or auto-scale changed the cluster's bound only.
  mark_cluster_settled(env_.store(), cluster.id);
}

Json SlurmEngine::list_nodes(const ClusterRow& cluster) {
  Store& store = env_.store();
  return slurm_node_list(store.read([&] { return slurm_cluster_nodes(store, cluster.id); }));
}

std::vector<EngineNode> SlurmEngine::nodes_with_jobs(const ClusterRow& cluster, std::size_t limit) const {
  // Which node runs which job: the allocations the runners recorded (a job's "nodes").
  std::map<std::string, std::string> job_on;
  for (const auto& [key, private_data] : running_jobs_private(env_.store(), cluster.id)) {
    const Json nodes = private_data.value("nodes", Json());
    if (!nodes.is_array()) continue;
    for (const auto& n : nodes)
      if (n.is_string()) job_on.emplace(n.get<std::string>(), key);
  }
  std::vector<EngineNode> out;
  for (const auto& n : slurm_cluster_nodes(env_.store(), cluster.id)) {  // as the last sinfo saw them
    if (out.size() >= limit) break;
    EngineNode node{n.name, n.state, std::nullopt};
    if (auto it = job_on.find(node.name); it != job_on.end()) node.job_key = it->second;
    out.push_back(std::move(node));
  }
  return out;
}

void SlurmEngine::exec(const ClusterRow& cluster, const NodeExecOptions& options, const JobRow* job) {
  // A job's node: a step in its allocation (its node list is empty unless it runs).
  slurm_node_exec(env_, cluster, options, job != nullptr ? slurm_job_id(*job) : std::nullopt);
}

void SlurmEngine::check_supported(const ClusterRow& cluster, const std::string& what) const {
  throw InvalidArgument(what + " is not supported on Slurm clusters yet: cluster '" + cluster.name +
                        "' stands on Slurm partition '" + partition_of(env_.store(), cluster) + "' (docs/slurm.md).");
}

void SlurmEngine::start_job(const std::string&, const ClusterRow& cluster) {
  reconcile_slurm(env_, {cluster.id});  // sbatch now, when the cluster's bound has room (docs/slurm.md)
}

bool SlurmEngine::may_start_any_moment(const JobRow& job) const { return slurm_job_id(job).has_value(); }

void SlurmEngine::stop_job(const JobRow& job) { cancel_slurm_job(env_, job, false); }  // Slurm ends its processes

void SlurmEngine::terminate(const JobRow& job) { terminate_slurm_job(env_, job); }

namespace {

// The allocation's node names: as the job's runner recorded them, or, when squeue already says
// the job runs but its runner has not started yet, Slurm's node list for it (as squeue gave it).
Json allocation_nodes(Store& store, const JobRow& job) {
  Json names = job.private_data.value("nodes", Json());
  if (names.is_array()) return names;
  names = Json::array();
  const auto seen = load_slurm_job(store, job.id);
  if (!seen || seen->node_list.empty()) return names;
  try {
    for (auto& name : slurm::expand_hostlist(seen->node_list)) names.push_back(std::move(name));
  } catch (const std::exception&) {
    // not a host list this version can read: no nodes until the runner records them
  }
  return names;
}

}  // namespace

Json SlurmEngine::job_nodes(const JobRow& job, const ClusterRow* cluster) {
  // The allocation's nodes while the job runs, at the address they were last seen with (NodeAddr).
  Json out = Json::array();
  if (job.state != JobState::kRunning && job.state != JobState::kTerminating) return out;
  Store& store = env_.store();
  store.read([&] {
    const std::vector<SlurmNodeRow> nodes =
        cluster != nullptr ? slurm_cluster_nodes(store, cluster->id) : std::vector<SlurmNodeRow>();
    for (const auto& name : allocation_nodes(store, job)) {
      if (!name.is_string()) continue;
      const std::string node = name.get<std::string>();
      out.push_back({{"ipAddress", slurm_node_address(nodes, node)}, {"nodeId", node}, {"port", 22.0}});
    }
  });
  return out;
}

std::optional<std::int64_t> SlurmEngine::engine_job_id(const JobRow& job) const { return job.engine_job_id; }

std::vector<EngineQueuePlace> SlurmEngine::queue_places(const ClusterRow& cluster, const std::vector<JobRow>& jobs) const {
  return slurm_queue_places(env_.store(), cluster, jobs);
}

void SlurmEngine::reconcile(const std::vector<std::int64_t>& clusters) { reconcile_slurm(env_, clusters); }

}  // namespace batchai::control_plane::detail
