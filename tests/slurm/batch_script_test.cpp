// Every field rule of a Slurm batch job, accepted and refused.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "batchai/common/errors.hpp"
#include "batchai/slurm/batch_script.hpp"
#include "support/temp_dir.hpp"

namespace batchai::slurm {
namespace {

BatchJob sample() {
  BatchJob j;
  j.name = "ws1.exp1.job1";
  j.comment = "batchai:/ws1/exp1/job1";
  j.partition = "batchai";
  j.node_count = 2;
  j.time_limit_minutes = 5;
  j.nice = 100;
  j.work_dir = "/data/jobs/job1";
  j.stdout_path = "/data/jobs/job1/stdouterr/stdout.txt";
  j.stderr_path = "/data/jobs/job1/stdouterr/stderr.txt";
  j.environment = {{"AZ_BATCHAI_JOB_NAME", "job1"}, {"QUOTED", "it's $HOME"}};
  j.command_line = "srun -l bash -c 'echo $SLURMD_NODENAME'";
  return j;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(SlurmBatchScript, RendersOptionsAndScript) {
  auto s = render_batch_job(sample());
  const auto& o = s.sbatch_options;
  EXPECT_TRUE(has(o, "--job-name=ws1.exp1.job1"));
  EXPECT_TRUE(has(o, "--comment=batchai:/ws1/exp1/job1"));
  EXPECT_TRUE(has(o, "--partition=batchai"));
  EXPECT_TRUE(has(o, "--nodes=2"));
  EXPECT_TRUE(has(o, "--exclusive"));
  EXPECT_TRUE(has(o, "--no-requeue"));
  EXPECT_TRUE(has(o, "--time=5"));
  EXPECT_TRUE(has(o, "--nice=100"));
  EXPECT_FALSE(std::any_of(o.begin(), o.end(), [](const std::string& x) { return x.rfind("--gres", 0) == 0; }));
  EXPECT_TRUE(has(o, "--chdir=/data/jobs/job1"));
  EXPECT_TRUE(has(o, "--output=/data/jobs/job1/stdouterr/stdout.txt"));
  EXPECT_TRUE(has(o, "--error=/data/jobs/job1/stdouterr/stderr.txt"));
  EXPECT_EQ(s.script.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_NE(s.script.find("export AZ_BATCHAI_JOB_NAME='job1'\n"), std::string::npos);
  EXPECT_NE(s.script.find("export QUOTED='it'\\''s $HOME'\n"), std::string::npos);
  EXPECT_NE(s.script.find("exec /bin/bash -c 'srun -l bash -c '\\''echo $SLURMD_NODENAME'\\'''\n"), std::string::npos);
}

TEST(SlurmBatchScript, GpusPerNodeBecomeGres) {
  auto j = sample();
  j.gpus_per_node = 2;
  EXPECT_TRUE(has(render_batch_job(j).sbatch_options, "--gres=gpu:2"));
  for (int bad : {-1, 1025}) {
    j.gpus_per_node = bad;
    EXPECT_THROW(render_batch_job(j), InvalidArgument) << bad;
  }
}

TEST(SlurmBatchScript, OptionalFieldsLeftOut) {
  auto j = sample();
  j.comment.clear();
  j.partition.clear();
  j.exclusive = false;
  j.time_limit_minutes.reset();
  j.nice = 0;
  j.requeue = true;
  auto o = render_batch_job(j).sbatch_options;
  for (const auto& opt : o) {
    for (auto prefix : {"--comment", "--partition", "--exclusive", "--time", "--nice", "--no-requeue", "--nodelist",
                        "--oversubscribe"})
      EXPECT_NE(opt.rfind(prefix, 0), 0u) << opt;
  }
}

// A cleanup job (container_cleanups.cpp) goes to the nodes of the job it cleans up after, sharing them.
TEST(SlurmBatchScript, NodeListAndSharing) {
  auto j = sample();
  j.exclusive = false;
  j.oversubscribe = true;
  j.node_list = "node[1-2],gpu_3.x";
  const auto o = render_batch_job(j).sbatch_options;
  EXPECT_TRUE(has(o, "--nodelist=node[1-2],gpu_3.x"));
  EXPECT_TRUE(has(o, "--oversubscribe"));
  EXPECT_FALSE(has(o, "--exclusive"));
  for (const std::string& bad : std::vector<std::string>{"-x", "node1 node2", "node1;rm", "node$(id)", "a\nb", std::string(4097, 'n')}) {
    j.node_list = bad;
    EXPECT_THROW(render_batch_job(j), InvalidArgument) << bad;
  }
}

TEST(SlurmBatchScript, MinutesRoundUp) {
  EXPECT_EQ(minutes_for_seconds(0), 1);
  EXPECT_EQ(minutes_for_seconds(1), 1);
  EXPECT_EQ(minutes_for_seconds(60), 1);
  EXPECT_EQ(minutes_for_seconds(61), 2);
  EXPECT_EQ(minutes_for_seconds(7 * 24 * 3600), 10080);
  EXPECT_EQ(minutes_for_seconds(1LL << 50), 525600);
}

TEST(SlurmBatchScript, ShellQuote) {
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("'"), "''\\'''");
}

void expect_refused(void (*change)(BatchJob&), const char* what) {
  BatchJob j = sample();
  change(j);
  EXPECT_THROW(render_batch_job(j), InvalidArgument) << what;
}

TEST(SlurmBatchScript, Refusals) {
  expect_refused([](BatchJob& j) { j.name.clear(); }, "empty name");
  expect_refused([](BatchJob& j) { j.name = "a\nb"; }, "newline in name");
  expect_refused([](BatchJob& j) { j.name = std::string(201, 'a'); }, "long name");
  expect_refused([](BatchJob& j) { j.comment = "x\ry"; }, "control char in comment");
  expect_refused([](BatchJob& j) { j.comment = std::string(1001, 'c'); }, "long comment");
  expect_refused([](BatchJob& j) { j.partition = "a b"; }, "space in partition");
  expect_refused([](BatchJob& j) { j.partition = std::string(65, 'p'); }, "long partition");
  expect_refused([](BatchJob& j) { j.node_count = 0; }, "no nodes");
  expect_refused([](BatchJob& j) { j.node_count = 1001; }, "too many nodes");
  expect_refused([](BatchJob& j) { j.time_limit_minutes = 0; }, "zero time");
  expect_refused([](BatchJob& j) { j.time_limit_minutes = 525601; }, "long time");
  expect_refused([](BatchJob& j) { j.nice = 10001; }, "nice high");
  expect_refused([](BatchJob& j) { j.nice = -10001; }, "nice low");
  expect_refused([](BatchJob& j) { j.work_dir = "relative/dir"; }, "relative work dir");
  expect_refused([](BatchJob& j) { j.work_dir.clear(); }, "empty work dir");
  expect_refused([](BatchJob& j) { j.stdout_path = "out.txt"; }, "relative stdout");
  expect_refused([](BatchJob& j) { j.stdout_path = "/x/%j.out"; }, "pattern in stdout");
  expect_refused([](BatchJob& j) { j.stderr_path = "/x/a\\b"; }, "backslash in stderr");
  expect_refused([](BatchJob& j) { j.stderr_path = "/x/a\nb"; }, "newline in stderr");
  expect_refused([](BatchJob& j) { j.environment["1BAD"] = "v"; }, "env name with digit first");
  expect_refused([](BatchJob& j) { j.environment["A-B"] = "v"; }, "env name with dash");
  expect_refused([](BatchJob& j) { j.environment["A;rm"] = "v"; }, "env name injection");
  expect_refused([](BatchJob& j) { j.environment[""] = "v"; }, "empty env name");
  expect_refused([](BatchJob& j) { j.environment["V"] = std::string("a\0b", 3); }, "NUL in value");
  expect_refused([](BatchJob& j) { j.environment["V"] = std::string(64 * 1024 + 1, 'v'); }, "long value");
  expect_refused([](BatchJob& j) {
    for (int i = 0; i < 1001; ++i) j.environment["V" + std::to_string(i)] = "v";
  }, "too many variables");
  expect_refused([](BatchJob& j) { j.command_line.clear(); }, "empty command");
  expect_refused([](BatchJob& j) { j.command_line = "echo \x1b[31m"; }, "escape in command");
  expect_refused([](BatchJob& j) { j.command_line = std::string(64 * 1024 + 1, 'x'); }, "long command");
  expect_refused([](BatchJob& j) { j.cleanup_command_line = "echo \x1b[31m"; }, "escape in cleanup");
  expect_refused([](BatchJob& j) { j.cleanup_command_line = std::string(64 * 1024 + 1, 'x'); }, "long cleanup");
}

// Runs the script of `command` with a cleanup that writes a file; its exit status and whether the
// cleanup ran.
std::pair<int, bool> run_with_cleanup(const std::string& command) {
  const test::TempDir dir("batchai-script");
  auto j = sample();
  j.command_line = command;
  j.cleanup_command_line = "echo cleaned > " + shell_quote((dir / "cleaned").string());
  std::ofstream(dir / "script.sh") << render_batch_job(j).script;
  const int raw = std::system(("bash " + shell_quote((dir / "script.sh").string())).c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, std::filesystem::exists(dir / "cleaned")};
}

TEST(SlurmBatchScript, CleanupRunsHoweverTheCommandEnded) {
  EXPECT_EQ(run_with_cleanup("exit 3"), std::make_pair(3, true));
  // The runner SIGKILLed: no trap of its own runs, the script's shell runs the cleanup.
  EXPECT_EQ(run_with_cleanup("kill -KILL $$"), std::make_pair(137, true));
  // scancel's SIGTERM reaches the script's shell too: it waits for the command, then cleans up.
  EXPECT_EQ(run_with_cleanup("kill -TERM $PPID; sleep 0.3; exit 4"), std::make_pair(4, true));
  // The command keeps SIGTERM's default action (the shell's trap is not inherited).
  EXPECT_EQ(run_with_cleanup("kill -TERM $$; sleep 5"), std::make_pair(143, true));
  auto j = sample();
  EXPECT_EQ(render_batch_job(j).script.find("trap"), std::string::npos);  // none: the command is exec'd
}

TEST(SlurmBatchScript, MultiLineCommandAndOddValuesStayQuoted) {
  auto j = sample();
  j.command_line = "echo one\necho 'two'\n";
  j.environment = {{"EVIL", "'; rm -rf / #\n$(id)"}};
  auto s = render_batch_job(j).script;
  EXPECT_NE(s.find("export EVIL=''\\''; rm -rf / #\n$(id)'\n"), std::string::npos);
  EXPECT_NE(s.find("exec /bin/bash -c 'echo one\necho '\\''two'\\''\n'\n"), std::string::npos);
}

TEST(SlurmBatchScript, PartitionNames) {
  EXPECT_NO_THROW(check_partition_name("gpu-a100.queue_1"));
  EXPECT_THROW(check_partition_name(""), InvalidArgument);
  EXPECT_THROW(check_partition_name("a,b"), InvalidArgument);
  EXPECT_THROW(check_partition_name("-p"), InvalidArgument);
}

}  // namespace
}  // namespace batchai::slurm
