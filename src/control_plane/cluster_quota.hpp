// The regional vCPU quota of list-usages as the control plane enforces it: a cluster counts
// its nodes, or its manual target, or its auto-scale maximum (whichever is largest) against the
// quota of its location and priority, so no later reconcile can grow past it. Only clusters
// whose engine makes their nodes count (ClusterEngine::makes_nodes): a Slurm partition's nodes
// are under Slurm's limits, not this quota.
#pragma once
#include <cstdint>
#include <string>

#include "engine/cluster_engine.hpp"
#include "store/store.hpp"

namespace batchai::control_plane::detail {

// Throws Conflict (code OperationNotAllowed) when giving cluster `cluster_id` (0: a cluster not
// stored yet) room for `nodes` nodes of `vm_size` would take the clusters of `location` and
// `priority` past the regional quota. Call inside the write transaction that stores the count,
// and only for a cluster whose engine makes its nodes.
void check_vcpu_quota(Store& store, const Engines& engines, std::int64_t cluster_id, const std::string& location,
                      const std::string& vm_size, const std::string& priority, std::int64_t nodes);

// The same for a stored cluster, reading its location, VM size and priority; nothing to check
// for a cluster whose engine makes no nodes.
void check_vcpu_quota(Store& store, const Engines& engines, std::int64_t cluster_id, std::int64_t nodes);

}  // namespace batchai::control_plane::detail
