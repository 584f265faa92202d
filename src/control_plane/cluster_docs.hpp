// A cluster's stored document kept in step with its row: node counts (from its engine), scale
// settings and allocation state; and the auto-scale demand the scheduler sets. Rules every part
// of the control plane that changes nodes shares (services, engines, the scheduler).
#pragma once
#include <cstdint>

namespace batchai::control_plane {

class Engines;
class Context;

class ClusterDocs {
 public:
  ClusterDocs(const Context& cx, const Engines& engines) : cx_(cx), engines_(engines) {}
  // Recomputes the cluster's counters, allocation state and scale settings into its stored
  // document. Call inside or outside a write transaction.
  void refresh(std::int64_t cluster_row_id) const;
  // Nodes an auto-scale cluster should have for its queued + running work; the cluster grows or
  // shrinks (idle nodes only) towards it, clamped to [minimumNodeCount, maximumNodeCount].
  // Ignored for manual clusters. Call inside or outside a store transaction.
  void set_auto_scale_demand(std::int64_t cluster_row_id, int nodes) const;

 private:
  const Context& cx_;
  const Engines& engines_;
};

}  // namespace batchai::control_plane
