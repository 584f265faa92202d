// The clusters table beyond the shared row (store/rows.hpp): the reads that tell the reconcile
// which clusters a command touches and with which engine, and what the vCPU quota counts
// (store/clusters_reads.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/rows.hpp"

namespace batchai::control_plane::detail {

// A cluster's row id and engine.
using ClusterIdKind = std::pair<std::int64_t, ClusterKind>;
std::vector<ClusterIdKind> cluster_engine_named(Store& store, std::int64_t workspace_id, const std::string& name);
std::vector<ClusterIdKind> cluster_engines_of_workspace(Store& store, std::int64_t workspace_id);
std::vector<ClusterIdKind> cluster_engine_of(Store& store, std::int64_t cluster_id);
// The clusters of the experiment's unfinished jobs.
std::vector<ClusterIdKind> cluster_engines_of_experiment(Store& store, std::int64_t workspace_id,
                                                         const std::string& experiment);
std::vector<ClusterIdKind> cluster_engines_of_home(Store& store, std::size_t limit);  // by row id

// Whether any cluster or file server changes with time, or the trash holds a folder: what makes a
// reconcile take the write lock.
bool anything_pending(Store& store);
std::vector<std::int64_t> pending_clusters(Store& store);

// What the regional vCPU quota counts of a cluster.
struct QuotaCluster {
  std::int64_t id = 0;
  std::string vm_size, scale_mode;
  std::int64_t target = 0, max_nodes = 0, nodes = 0;
  ClusterKind engine = ClusterKind::kSimulated;
};
// The clusters of `location` of one priority (low priority or dedicated).
std::vector<QuotaCluster> quota_clusters(Store& store, const std::string& location, bool low_priority);
struct ClusterSize {
  std::string location, vm_size, vm_priority;
  ClusterKind engine = ClusterKind::kSimulated;
};
std::optional<ClusterSize> cluster_size(Store& store, std::int64_t cluster_id);

// Writes of the clusters service (store/clusters.cpp).
struct ClusterInsert {
  std::int64_t workspace_id = 0;
  std::string name;
  Json doc;
  std::string location, vm_size, vm_priority;
  bool is_auto = false;
  int target = 0, min_nodes = 0, max_nodes = 0;
  std::int64_t now_us = 0;
  bool pending = true;  // its nodes still come with time
  std::string node_prefix, public_ip;
  Json private_data;
  ClusterKind engine = ClusterKind::kSimulated;
};
std::int64_t insert_cluster(Store& store, const ClusterInsert& cluster);  // its row id
std::optional<Json> cluster_doc(Store& store, const WorkspaceRef& ref, const std::string& name);
Json cluster_docs(Store& store, std::int64_t workspace_id);  // by name
// Manual scale to `target` nodes; auto-scale between bounds, starting from `current` nodes.
void set_manual_scale(Store& store, std::int64_t cluster_id, int target);
void set_auto_scale(Store& store, std::int64_t cluster_id, std::int64_t current, int min_nodes, int max_nodes,
                    std::optional<std::int64_t> demand);
// The cluster's nodes that are not leaving.
std::int64_t staying_node_count(Store& store, std::int64_t cluster_id);
void delete_cluster(Store& store, std::int64_t cluster_id);  // its nodes go with it
// The nodes of each cluster of a location, with the cluster's VM size and priority.
struct NodeUsage {
  std::string vm_size, vm_priority;
  int nodes = 0;
};
std::vector<NodeUsage> node_usage_in(Store& store, const std::string& location);

}  // namespace batchai::control_plane::detail
