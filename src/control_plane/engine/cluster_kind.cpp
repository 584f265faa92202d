#include "cluster_kind.hpp"

namespace batchai::control_plane {

ClusterKind cluster_kind_of(const Json& private_data) {
  if (!private_data.is_object()) return ClusterKind::kSimulated;
  auto it = private_data.find("slurm");
  return it != private_data.end() && it->is_object() ? ClusterKind::kSlurm : ClusterKind::kSimulated;
}

}  // namespace batchai::control_plane
