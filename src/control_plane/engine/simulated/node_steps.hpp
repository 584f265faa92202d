// The simulation's node work, stepped by every reconcile for clusters with pending work:
// allocation after the provisioning delay, preparation (mounts, setup task), resize with
// leaving nodes, removal; and, after each step commits, the mounts and setup tasks it started.
#pragma once
#include <cstdint>

#include "context.hpp"
#include "store/rows.hpp"

namespace batchai::control_plane::simulated {

// One reconcile step of one cluster at `now_us` (inside a write transaction).
void step_cluster(const Context& cx, const detail::ClusterRow& cluster, std::int64_t now_us);
// Mounts, setup tasks and folders for the cluster's preparing and idle nodes (outside a transaction).
// Returns true when a node turned unusable (the cluster's document needs a refresh).
bool start_node_work(const Context& cx, std::int64_t cluster_row_id);

}  // namespace batchai::control_plane::simulated
