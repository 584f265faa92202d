// srun_argv (docs/slurm.md "GPUs and node exec"): exact argv for the runner's tasks and for node exec, and
// refusal of anything that could read as an option or leave the step unclear.
#include <gtest/gtest.h>

#include "batchai/common/errors.hpp"
#include "batchai/slurm/srun_step.hpp"

namespace batchai::slurm {
namespace {

using Argv = std::vector<std::string>;

TEST(SrunStep, ATaskOfTheRunningAllocation) {
  SrunStep s;
  s.node = "node2";
  s.overlap = true;
  s.kill_on_bad_exit = true;
  s.cwd = "/shared/jobs/k/wd";
  s.command = {"python3", "-c", "print(1)"};
  EXPECT_EQ(srun_argv(s), (Argv{"srun", "--nodes=1", "--ntasks=1", "--nodelist=node2", "--quiet", "--mpi=none",
                                "--export=ALL", "--overlap", "--kill-on-bad-exit=1", "--chdir=/shared/jobs/k/wd",
                                "python3", "-c", "print(1)"}));
}

TEST(SrunStep, AStepOfAnotherJobOrOfItsOwn) {
  SrunStep s;
  s.node = "gpu-1.rack_2";
  s.job = 4711;
  s.overlap = true;
  s.command = {"bash", "-c", "true"};
  EXPECT_EQ(srun_argv(s), (Argv{"srun", "--nodes=1", "--ntasks=1", "--nodelist=gpu-1.rack_2", "--quiet", "--mpi=none",
                                "--export=ALL", "--jobid=4711", "--overlap", "bash", "-c", "true"}));
  s.job.reset();
  s.overlap = false;
  s.immediate_s = 30;
  EXPECT_EQ(srun_argv(s), (Argv{"srun", "--nodes=1", "--ntasks=1", "--nodelist=gpu-1.rack_2", "--quiet", "--mpi=none",
                                "--export=ALL", "--immediate=30", "bash", "-c", "true"}));
}

TEST(SrunStep, Refusals) {
  SrunStep good;
  good.node = "node1";
  good.command = {"true"};
  ASSERT_NO_THROW(srun_argv(good));
  for (const std::string& node : std::vector<std::string>{"", "-x", "--nodelist=all", "node 1", "node1,node2", "node[1-2]", "a;b",
                                 std::string(256, 'n')}) {
    SrunStep s = good;
    s.node = node;
    EXPECT_THROW(srun_argv(s), InvalidArgument) << node;
  }
  for (const Argv& command : {Argv{}, Argv{""}, Argv{"--help"}}) {
    SrunStep s = good;
    s.command = command;
    EXPECT_THROW(srun_argv(s), InvalidArgument);
  }
  SrunStep relative = good;
  relative.cwd = "jobs/k";
  EXPECT_THROW(srun_argv(relative), InvalidArgument);
  for (int seconds : {0, -1, 3601}) {
    SrunStep s = good;
    s.immediate_s = seconds;
    EXPECT_THROW(srun_argv(s), InvalidArgument) << seconds;
  }
}

}  // namespace
}  // namespace batchai::slurm
