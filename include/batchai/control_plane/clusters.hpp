// `batchai cluster ...` and `list-usages`: clusters, their scale settings and allocation state,
// and the regional vCPU quota. The nodes themselves are the Nodes service's.
#pragma once
#include <cstdint>
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/list_page.hpp"
#include "batchai/control_plane/options.hpp"

namespace batchai::control_plane {

class ControlPlane;

class Clusters {
 public:
  explicit Clusters(ControlPlane& cp) : cp_(cp) {}

  Json create(const ClusterCreateOptions& options);
  Json show(const WorkspaceRef& ref, const std::string& name);
  Json list(const WorkspaceRef& ref);
  Page list_page(const WorkspaceRef& ref, const PageRequest& page);  // keyed by name
  Json resize(const WorkspaceRef& ref, const std::string& name, int target);
  Json auto_scale(const WorkspaceRef& ref, const std::string& name, int min_nodes, int max_nodes);
  void remove(const WorkspaceRef& ref, const std::string& name);  // fails the jobs running on it
  Json list_usages(const std::string& location);

  // --- for the other services (rows, no reconcile) ---
  // Nodes an auto-scale cluster should have for its queued + running work; the cluster grows or
  // shrinks (idle nodes only) towards it, clamped to [minimumNodeCount, maximumNodeCount].
  // Ignored for manual clusters. Call inside or outside a store transaction.
  void set_auto_scale_demand(std::int64_t cluster_row_id, int nodes);
  // Recomputes a cluster's counters/allocation state and stored document from its node rows.
  void refresh(std::int64_t cluster_row_id);

 private:
  Json document(const WorkspaceRef& ref, const std::string& name);  // stored, not reconciled

  ControlPlane& cp_;
};

}  // namespace batchai::control_plane
