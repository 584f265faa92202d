#include "cluster_kind.hpp"

#include <string>

#include "batchai/common/errors.hpp"

namespace batchai::control_plane {

std::string_view engine_column(ClusterKind kind) { return kind == ClusterKind::kSlurm ? "slurm" : "simulated"; }

ClusterKind kind_of_engine_column(std::string_view name) {
  if (name == "simulated") return ClusterKind::kSimulated;
  if (name == "slurm") return ClusterKind::kSlurm;
  throw Error("The store holds a cluster or job of an engine this batchai does not know: '" +
              std::string(name.substr(0, 32)) + "'. Use the batchai version that made it.");
}

}  // namespace batchai::control_plane
