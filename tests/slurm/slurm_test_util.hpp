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
// Output (stdout and stderr) of a command run without a shell.
std::string output_of(const std::vector<std::string>& argv);
// Waits (bounded) until every node of the partition is idle; a test failure naming the states
// when one is not. A node drained for "Duplicate jobid" is resumed on the way (see ~ControllerOutage).
void wait_for_idle_partition();

// The fixture's slurmctld killed (SIGKILL, as a crash: no state saved on the way out) and started
// again on its saved state; the destructor restarts it when a test ends with it dead, so later
// tests find a controller. A controller that comes back on a state saved before its last jobs
// recovers them as they were (a finished allocation as still running) and would hand the ids of
// the jobs it lost out again (slurmd then drains a node for "Duplicate jobid", and a later test
// finds it unavailable): the restart takes those ids with cancelled placeholder jobs, and the
// destructor cancels every job of the partition and waits for it to be idle, so the next test
// inherits no ghosts.
// Waits are bounded (a test failure past them).
class ControllerOutage {
 public:
  ControllerOutage() = default;
  ~ControllerOutage();
  ControllerOutage(const ControllerOutage&) = delete;
  ControllerOutage& operator=(const ControllerOutage&) = delete;
  void kill_controller();
  void restart_controller();

 private:
  void skip_lost_job_ids() const;

  bool dead_ = false;
  long highest_job_id_ = 0;  // before the kill
};

}  // namespace batchai::slurm_testing
