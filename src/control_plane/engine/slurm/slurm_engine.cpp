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

// The stored partition of a cluster this engine made (its row's engine entry).
std::string partition_of(const ClusterRow& cluster) { return slurm_partition(cluster.private_data).value_or(""); }

}  // namespace

bool SlurmEngine::claims(const ClusterCreateOptions& options, const Json& properties) const {
  return options.slurm_partition.has_value() || (properties.is_object() && properties.contains("slurm"));
}

void SlurmEngine::check_request(const ClusterCreateOptions& options, const Json& properties) const {
  requested_slurm_partition(options.slurm_partition, properties);
}

Json SlurmEngine::place(const NewCluster& cluster) {
  // The controller and the partition are asked now, before auto-storage or the row makes
  // anything; their error ends the create with nothing made.
  const std::string partition = *requested_slurm_partition(cluster.options.slurm_partition, cluster.properties);
  return {{"slurm", slurm_private_entry(partition, probe_slurm_partition(env_, partition))}};
}

bool SlurmEngine::describe_new(Json& doc, const Json& private_data, const NewCluster& cluster) {
  apply_slurm_counts(doc, private_data["slurm"]);
  ClusterRow shape;  // what slurm_gpus_per_node reads: the VM size and the partition's nodes
  shape.name = cluster.options.name;
  shape.doc = doc;
  shape.private_data = private_data;
  warn_if_no_gpus(shape);
  return false;  // Slurm's nodes are there already: nothing to allocate
}

void SlurmEngine::step(const ClusterRow& cluster, std::int64_t) {
  // Slurm's nodes: a resize or auto-scale changed the cluster's bound only.
  mark_cluster_settled(env_.store(), cluster.id);
}

Json SlurmEngine::list_nodes(const ClusterRow& cluster) { return slurm_node_list(cluster); }

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
  const Json& slurm = cluster.private_data.is_object() ? cluster.private_data.value("slurm", Json()) : Json();
  if (!slurm.is_object() || !slurm.contains("nodes") || !slurm["nodes"].is_array()) return out;
  for (const auto& n : slurm["nodes"]) {  // Slurm's node names and states as the last sinfo saw them
    if (out.size() >= limit) break;
    EngineNode node{value_or<std::string>(n, "name", ""), value_or<std::string>(n, "state", ""), std::nullopt};
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
                        "' stands on Slurm partition '" + partition_of(cluster) + "' (docs/slurm.md).");
}

Json SlurmEngine::new_job_entry(const ClusterRow& cluster) {
  return {{"slurm", new_slurm_job_entry(partition_of(cluster))}};
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
Json allocation_nodes(const JobRow& job) {
  Json names = job.private_data.value("nodes", Json());
  if (names.is_array()) return names;
  names = Json::array();
  const Json s = job.private_data.value("slurm", Json());
  if (!s.is_object() || !s.contains("nodeList") || !s["nodeList"].is_string()) return names;
  try {
    for (auto& name : slurm::expand_hostlist(s["nodeList"].get<std::string>())) names.push_back(std::move(name));
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
  const Json cluster_data = cluster != nullptr ? cluster->private_data : Json::object();
  for (const auto& name : allocation_nodes(job)) {
    if (!name.is_string()) continue;
    const std::string node = name.get<std::string>();
    out.push_back({{"ipAddress", slurm_node_address(cluster_data, node)}, {"nodeId", node}, {"port", 22.0}});
  }
  return out;
}

std::optional<std::int64_t> SlurmEngine::engine_job_id(const JobRow& job) const { return job.engine_job_id; }

std::vector<EngineQueuePlace> SlurmEngine::queue_places(const ClusterRow& cluster, const std::vector<JobRow>& jobs) const {
  return slurm_queue_places(env_.store(), cluster, jobs);
}

void SlurmEngine::reconcile(const std::vector<std::int64_t>& clusters) { reconcile_slurm(env_, clusters); }

}  // namespace batchai::control_plane::detail
