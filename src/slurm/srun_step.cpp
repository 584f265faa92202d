#include "batchai/slurm/srun_step.hpp"

#include <algorithm>

#include "batchai/common/errors.hpp"

namespace batchai::slurm {

std::vector<std::string> srun_argv(const SrunStep& step) {
  const std::string& node = step.node;
  const bool node_ok = !node.empty() && node.size() <= 255 && node[0] != '-' &&
                       std::all_of(node.begin(), node.end(), [](char c) {
                         return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                                c == '-' || c == '_' || c == '.';
                       });
  if (!node_ok) throw InvalidArgument("'" + node.substr(0, 64) + "' is not a Slurm node name srun can be given.");
  if (step.command.empty() || step.command[0].empty() || step.command[0][0] == '-')
    throw InvalidArgument("The srun step on node " + node + " has no program to run.");
  if (!step.cwd.empty() && !step.cwd.is_absolute())
    throw InvalidArgument("The srun step's folder must be absolute, not '" + step.cwd.string() + "'.");
  if (step.immediate_s && (*step.immediate_s < 1 || *step.immediate_s > 3600))
    throw InvalidArgument("srun --immediate must be 1 to 3600 seconds.");
  std::vector<std::string> argv = {"srun",        "--nodes=1",  "--ntasks=1",  "--nodelist=" + node,
                                   "--quiet",     "--mpi=none", "--export=ALL"};
  if (step.job) argv.push_back("--jobid=" + std::to_string(*step.job));
  if (step.overlap) argv.push_back("--overlap");
  if (step.immediate_s) argv.push_back("--immediate=" + std::to_string(*step.immediate_s));
  if (step.kill_on_bad_exit) argv.push_back("--kill-on-bad-exit=1");
  if (!step.cwd.empty()) argv.push_back("--chdir=" + step.cwd.string());
  argv.insert(argv.end(), step.command.begin(), step.command.end());
  return argv;
}

}  // namespace batchai::slurm
