#include "cluster_kind.hpp"

namespace batchai::control_plane {

ClusterKind cluster_kind_of(const Json& private_data) {
  if (!private_data.is_object()) return ClusterKind::kSimulated;
  auto it = private_data.find("slurm");
  return it != private_data.end() && it->is_object() ? ClusterKind::kSlurm : ClusterKind::kSimulated;
}

std::string cluster_kind_sql(const std::string& private_column) {
  return "(CASE WHEN json_type(" + private_column + ", '$.slurm') = 'object' THEN 1 ELSE 0 END)";
}

ClusterKind cluster_kind_from_sql(std::int64_t value) { return value == 1 ? ClusterKind::kSlurm : ClusterKind::kSimulated; }

}  // namespace batchai::control_plane
