// One `srun` step on one node (docs/slurm.md "Inside the allocation", "Node exec"): the job's
// tasks beyond the master's, and `cluster|job node exec` on Slurm clusters.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "batchai/slurm/parsers.hpp"  // JobId

namespace batchai::slurm {

struct SrunStep {
  std::string node;                    // --nodelist: one node name as Slurm prints it
  std::optional<JobId> job;            // --jobid: a step in that (running) job's allocation
  bool overlap = false;                // --overlap: share the allocation's CPUs with its other steps
  std::optional<int> immediate_s;      // --immediate: give up unless it starts within that many seconds
  bool kill_on_bad_exit = false;       // --kill-on-bad-exit=1
  std::filesystem::path cwd;           // --chdir (absolute) when not empty
  std::vector<std::string> command;    // the program and its arguments
};

// srun's argv: --nodes=1 --ntasks=1 --nodelist=NODE --quiet --mpi=none --export=ALL and the
// options the step asks for, then the command. InvalidArgument for a node name that could read
// as an option or holds other than Slurm's characters, a relative cwd, an empty command or an
// --immediate outside 1..3600.
std::vector<std::string> srun_argv(const SrunStep& step);

}  // namespace batchai::slurm
