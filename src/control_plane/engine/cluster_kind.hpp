// Which engine a cluster (and each job made on it) stands on, parsed once from its row: the
// engine's entry in the row's private data names it. The only list of engines outside the
// composition root (control_plane.cpp).
#pragma once
#include <cstdint>
#include <string>

#include "batchai/common/json_util.hpp"

namespace batchai::control_plane {

enum class ClusterKind {
  kSimulated,  // node folders on this machine, scheduled by batchai (engine/simulated)
  kSlurm,      // a Slurm partition's nodes, scheduled by Slurm (engine/slurm)
};

// The kind a cluster's or job's private data records; kSimulated when no engine entry is there.
ClusterKind cluster_kind_of(const Json& private_data);

// The same test as an SQL expression over a row's private column, for reads of many rows that need
// the kind and not the document (the scheduler's queue); cluster_kind_from_sql maps its value back.
std::string cluster_kind_sql(const std::string& private_column);
ClusterKind cluster_kind_from_sql(std::int64_t value);

}  // namespace batchai::control_plane
