// Which engine a cluster (and each job made on it) stands on: the `engine` column of its row
// (migrations.cpp, v7) names it. The only list of engines outside the composition root
// (control_plane.cpp).
#pragma once
#include <string_view>

namespace batchai::control_plane {

enum class ClusterKind {
  kSimulated,  // node folders on this machine, scheduled by batchai (engine/simulated)
  kSlurm,      // a Slurm partition's nodes, scheduled by Slurm (engine/slurm)
};

// The kind's name as the `engine` column stores it ("simulated", "slurm").
std::string_view engine_column(ClusterKind kind);
// The kind an `engine` column names; a name this version does not know throws (a newer batchai
// wrote the row: guessing an engine would run its jobs on the wrong one).
ClusterKind kind_of_engine_column(std::string_view name);

}  // namespace batchai::control_plane
