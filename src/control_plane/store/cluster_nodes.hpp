// The nodes table as the simulated engine steps it (engine/simulated): nodes made, prepared, given
// a setup task, leaving and gone, and what the cluster document counts of them (store/nodes.cpp);
// the cluster's allocation fields written back with them (store/clusters.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/rows.hpp"

namespace batchai::control_plane::detail {

// A node row as a node step reads it; `state` and `setup` as stored (states.hpp, migrations.cpp).
struct StoredNode {
  std::int64_t row = 0;
  std::string node_id, state, setup;
  std::int64_t ready_us = 0;
  std::optional<std::int64_t> leave_us;
  std::optional<std::int64_t> setup_exit;
};
std::vector<StoredNode> cluster_nodes(Store& store, std::int64_t cluster_id);  // by ordinal
// A new node; returns its row id.
std::int64_t insert_node(Store& store, std::int64_t cluster_id, const StoredNode& node, std::int64_t ordinal,
                         std::int64_t created_us);
void set_node_state(Store& store, std::int64_t row, const std::string& state, std::optional<std::int64_t> leave_us);
void set_node_setup(Store& store, std::int64_t row, const std::string& setup, int exit_code);
void delete_node(Store& store, std::int64_t row);
// Inside a write transaction: the cluster's preparing nodes (node id, setup), then every pending
// setup task marked started, so that each starts exactly once across processes.
std::vector<std::pair<std::string, std::string>> claim_preparing_nodes(Store& store, std::int64_t cluster_id);
std::vector<std::string> idle_node_ids(Store& store, std::int64_t cluster_id);
// A node whose folders could not be made: its setup failed, and an idle one unusable.
void fail_node_setup(Store& store, std::int64_t cluster_id, const std::string& node_id);
// The cluster's nodes not leaving: node id and ordinal, by ordinal; the ordinal of one of them.
std::vector<std::pair<std::string, std::int64_t>> staying_nodes(Store& store, std::int64_t cluster_id);
std::optional<std::int64_t> staying_node_ordinal(Store& store, std::int64_t cluster_id, const std::string& node_id);
// Node id, state and the job holding it, by ordinal, `limit` at most.
struct NodeHolder {
  std::string node_id, state;
  std::optional<std::string> job_key;
};
std::vector<NodeHolder> node_holders(Store& store, std::int64_t cluster_id, std::size_t limit);
// Whether the cluster's idle free nodes are at least as many as its queued jobs.
bool queue_fits_idle_nodes(Store& store, std::int64_t cluster_id);
// The allocation fields of `cluster` as stepped; `busy` while nodes still prepare or leave.
void save_allocation(Store& store, const ClusterRow& cluster, bool busy);

}  // namespace batchai::control_plane::detail
