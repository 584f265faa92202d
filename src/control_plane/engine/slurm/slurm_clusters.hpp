// Slurm-backed clusters (issue 15, docs/slurm.md "Slurm-backed clusters"): a cluster whose nodes
// are a Slurm partition's. Its partition and the nodes as the last sinfo saw them are Slurm's own
// rows (store/slurm.hpp); it has no simulated node rows, and its counts come from sinfo at reconcile.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/json_util.hpp"
#include "batchai/common/process.hpp"
#include "batchai/slurm/parsers.hpp"
#include "batchai/control_plane/options.hpp"
#include "store/rows.hpp"
#include "store/slurm.hpp"
#include "slurm_env.hpp"


namespace batchai::control_plane::detail {

class SlurmBudget;

// `--slurm-partition` or the config file's `properties.slurm.partition` (the option wins);
// nullopt when neither names one. The name is checked (Slurm's characters, 1 to 64) here.
std::optional<std::string> requested_slurm_partition(const std::optional<std::string>& option, const Json& props);

// Asks the controller for its version and the partition's nodes, within one SlurmBudget, and not
// at all while the controller backs off. Throws the client's error: NotFound partition, controller
// that does not answer (then every process backs off), Slurm too old.
std::vector<slurm::NodeInfo> probe_slurm_partition(const SlurmEnv& env, const std::string& partition);
// The shared folder (BATCHAI_SHARED_DIR) must be a folder this user can write (InvalidArgument
// SharedFolderMissing / SharedFolderNotWritable otherwise); checked before the probe's Slurm commands.
void check_shared_folder(const NodeLayout& layout);

// The nodes of sinfo's answer as they are stored.
std::vector<SlurmNodeRow> slurm_node_rows(const std::vector<slurm::NodeInfo>& nodes);

// Sets the document's nodeStateCounts, currentNodeCount and allocationState from the partition's
// nodes.
void apply_slurm_counts(Json& doc, const std::vector<SlurmNodeRow>& nodes);

// Part of reconcile_slurm: each partition of the named Slurm clusters asked once (sinfo, within
// `budget`). Another error than a silent controller (which is thrown, for reconcile_slurm to
// record) leaves the cluster's last known counts and an `errors` entry saying why.
void refresh_slurm_clusters(const SlurmEnv& env, const std::vector<std::int64_t>& clusters, const SlurmBudget& budget);

// `cluster node list` of a Slurm cluster: the partition's nodes as last seen, with their NodeAddr.
Json slurm_node_list(const std::vector<SlurmNodeRow>& nodes);

// The stored NodeAddr of node `node_name` among a Slurm cluster's nodes; the node's name when the
// node is not stored or was stored without an address (never a made-up 127.0.0.1).
std::string slurm_node_address(const std::vector<SlurmNodeRow>& nodes, const std::string& node_name);

// The GPUs a job asks each node for (sbatch --gres=gpu:N): those of the cluster's VM size
// (`vm_size`), when a node of the partition has that many among its generic resources as last
// seen; 0 otherwise (the job runs without GPUs: no node could give them, and Slurm would refuse).
int slurm_gpus_per_node(const std::string& vm_size, const std::vector<SlurmNodeRow>& nodes);
// At cluster create: a warning when the VM size has GPUs and slurm_gpus_per_node gives none.
void warn_if_no_gpus(const std::string& cluster_name, const std::string& vm_size, const SlurmClusterRow& stored);

// `cluster node exec` (job: nullopt) and `job node exec` (job: the running job's Slurm id) on a
// Slurm cluster: --exec runs through srun on the node (options.node_id, else the cluster's first
// node), in its node folder, as a step of the job's allocation (--overlap) or of a new one-node
// allocation that must start within 30 s. -L forwarding is refused: ssh -L to the node's NodeAddr.
void slurm_node_exec(const SlurmEnv& env, const ClusterRow& cluster, const NodeExecOptions& options,
                     std::optional<slurm::JobId> job);

}  // namespace batchai::control_plane::detail
