// Helpers of the tests that use the private Slurm (fixture "slurm"): its slurm.conf, a copy whose
// controller port nobody listens on, and scontrol run against it.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace batchai::slurm_testing {

// $SLURM_CONF as ctest sets it for the fixture; a test failure when unset.
std::filesystem::path slurm_conf();
// A copy of slurm_conf() in `dir` with SlurmctldPort moved to a loopback port nobody listens on.
std::filesystem::path dead_controller_conf(const std::filesystem::path& dir);
// The NodeAddr the private slurm.conf gives its nodes (one NodeName line); a test failure without one.
std::string configured_node_addr();
// Runs `scontrol <args>` (argv, no shell) and expects exit 0.
void scontrol(const std::vector<std::string>& args);

}  // namespace batchai::slurm_testing
