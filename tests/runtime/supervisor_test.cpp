// End-to-end supervisor tests with real processes: a custom job, a 2-node customMpi job, a
// preparation failure, a missing interpreter, a wall-clock timeout (stopping the whole job), a
// job that filled its disk, and tasks that see the node's environment, not the supervisor's.
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <optional>

#include <gtest/gtest.h>
#include <unistd.h>

#include "batchai/runtime/job_spec.hpp"
#include "batchai/runtime/supervisor.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace batchai::runtime {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using test::read_file;

class SupervisorTest : public ::testing::Test {
 protected:
  LaunchPlan plan(const std::string& properties, int nodes) {
    JobIdentity id{"sub", "rg", "ws", "exp", "job", "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws/clusters/cl", "u", ""};
    auto spec = build_job_spec(Json::parse("{\"properties\": " + properties + "}"), id);
    LaunchContext c;
    for (int i = 0; i < nodes; ++i) c.nodes.push_back({"node" + std::to_string(i), home_ / ("n" + std::to_string(i)), "localhost", 0});
    c.as_root = ::geteuid() == 0;
    c.cores = 2;
    c.self_executable = RANK_EXEC_HELPER;
    c.base_env = node_base_environment();
    return make_launch_plan(spec.job, c);
  }

  JobOutcome run(const LaunchPlan& p, std::chrono::milliseconds limit = 60s) {
    SupervisorOptions o;
    o.max_wall_clock = limit;
    o.kill_grace = 500ms;
    o.record = [this](const std::string& state, const JobOutcome*) { states_.push_back(state); };
    o.signal_job = [this](int signal) { job_signals_.push_back(signal); };
    if (free_space_) o.free_space = [this](const fs::path&) { return *free_space_; };
    return supervise_job(p, *launcher_, o);
  }

  test::TempDir tmp_{"batchai-supervisor"};
  fs::path home_ = tmp_.path();
  std::vector<std::string> states_;
  std::vector<int> job_signals_;             // what signal_job was asked to send
  std::optional<std::uintmax_t> free_space_;  // injected free bytes of every folder
  std::unique_ptr<ProcessLauncher> launcher_ = make_posix_process_launcher();
};

const std::string kPrefix = R"("stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_TEMP_DIR")";

TEST_F(SupervisorTest, CustomJobWritesStdoutAndOutput) {
  auto p = plan(R"({"nodeCount": 1, )" + kPrefix + R"(, "customToolkitSettings": {"commandLine": "echo hi | tee $AZ_BATCHAI_OUTPUT_OUTPUT/result.txt"},
      "outputDirectories": [{"id": "OUTPUT", "pathPrefix": "$AZ_BATCHAI_JOB_TEMP_DIR", "pathSuffix": "output"}]})", 1);
  auto o = run(p);
  EXPECT_TRUE(o.succeeded);
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_EQ(read_file(p.stdouterr_dir / "stdout.txt"), "hi\n");
  EXPECT_EQ(fs::file_size(p.stdouterr_dir / "stderr.txt"), 0u);
  EXPECT_EQ(read_file(p.output_directories.at("OUTPUT") / "result.txt"), "hi\n");
  EXPECT_TRUE(fs::exists(p.execution_log));
  EXPECT_EQ(states_, (std::vector<std::string>{"running", "succeeded"}));
}

// Counts how the runner waits for its tasks, passing everything to the real launcher.
class WaitCountingLauncher final : public ProcessLauncher {
 public:
  explicit WaitCountingLauncher(ProcessLauncher& inner) : inner_(inner) {}
  pid_t spawn(const ProcessSpec& spec) override { return inner_.spawn(spec); }
  std::optional<ProcessExit> wait(pid_t pid, std::optional<std::chrono::milliseconds> timeout) override {
    ++waits;
    return inner_.wait(pid, timeout);
  }
  std::optional<std::pair<pid_t, ProcessExit>> wait_any(const std::vector<pid_t>& pids,
                                                        std::chrono::milliseconds timeout) override {
    ++waits;
    return inner_.wait_any(pids, timeout);
  }
  bool signal_group(pid_t pgid, int signal) override { return inner_.signal_group(pgid, signal); }
  pid_t spawn_detached(const ProcessSpec& spec) override { return inner_.spawn_detached(spec); }
  int waits = 0;

 private:
  ProcessLauncher& inner_;
};

TEST_F(SupervisorTest, ATasksEndIsAwaitedNotPolled) {
  // The runner sleeps until the task exits (the launcher's wait_any), not in 50 ms ticks:
  // a task of 0.6 s is one wait (two if the host is slow enough to pass the longest wait).
  auto real = std::move(launcher_);
  auto counting = std::make_unique<WaitCountingLauncher>(*real);
  WaitCountingLauncher& seen = *counting;
  launcher_ = std::move(counting);
  auto o = run(plan(R"({"nodeCount": 1, )" + kPrefix + R"(, "customToolkitSettings": {"commandLine": "sleep 0.6"}})", 1));
  EXPECT_TRUE(o.succeeded);
  EXPECT_LE(seen.waits, 2);
  EXPECT_TRUE(job_signals_.empty()) << "a job whose tasks all ended is left to its caller to kill";
  launcher_.reset();
}

TEST_F(SupervisorTest, FailingCommandGivesItsExitCode) {
  auto o = run(plan(R"({"nodeCount": 1, )" + kPrefix + R"(, "customToolkitSettings": {"commandLine": "exit 7"}})", 1));
  EXPECT_FALSE(o.succeeded);
  EXPECT_EQ(o.exit_code, 7);
  EXPECT_EQ(o.errors[0]["code"], "JobFailed");
}

TEST_F(SupervisorTest, PreparationFailureFailsTheJob) {
  auto p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "customToolkitSettings": {"commandLine": "touch ran"},
      "jobPreparation": {"commandLine": "echo prep on $AZ_BATCHAI_JOB_TEMP; test $AZ_BATCHAI_JOB_TEMP != )" +
                (home_ / "n1/jobs/job").string() + R"("}})", 2);
  auto o = run(p);
  EXPECT_FALSE(o.succeeded);
  EXPECT_FALSE(o.exit_code.has_value());
  EXPECT_EQ(o.errors[0]["code"], "JobPreparationFailed");
  EXPECT_NE(o.errors[0]["message"].get<std::string>().find("node 1"), std::string::npos);
  EXPECT_EQ(read_file(p.stdouterr_dir / "stdout-job_prep-node0.txt"), "prep on " + (home_ / "n0/jobs/job").string() + "\n");
  EXPECT_FALSE(fs::exists(home_ / "n0/jobs/job/ran"));
  EXPECT_EQ(states_, (std::vector<std::string>{"preparing", "failed"}));
}

TEST_F(SupervisorTest, MissingInterpreterIsAClearFailure) {
  auto p = plan(R"({"nodeCount": 1, )" + kPrefix + R"(, "horovodSettings": {"pythonScriptFilePath": "t.py",
      "pythonInterpreterPath": "/nonexistent/python9"}})", 1);
  auto o = run(p);
  EXPECT_FALSE(o.succeeded);
  EXPECT_EQ(o.errors[0]["code"], "ToolkitNotFound");
  EXPECT_NE(read_file(p.stdouterr_dir / "stderr.txt").find("/nonexistent/python9"), std::string::npos);
}

TEST_F(SupervisorTest, WallClockTimeoutKillsTheTree) {
  auto p = plan(R"({"nodeCount": 1, )" + kPrefix + R"(, "customToolkitSettings": {"commandLine": "sleep 60 & echo $! > child.pid; wait"}})", 1);
  auto start = std::chrono::steady_clock::now();
  auto o = run(p, 500ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_FALSE(o.succeeded);
  EXPECT_EQ(o.errors[0]["code"], "JobTimedOut");
  pid_t child = std::stoi(read_file(home_ / "n0/jobs/job/child.pid"));
  for (int i = 0; i < 200 && process_alive(child); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(process_alive(child));
}

TEST_F(SupervisorTest, StoppingReachesTheWholeJobNotOnlyTheTaskGroups) {
  auto o = run(plan(R"({"nodeCount": 1, )" + kPrefix + R"(, "customToolkitSettings": {"commandLine": "sleep 60"}})", 1), 300ms);
  EXPECT_EQ(o.errors[0]["code"], "JobTimedOut");
  EXPECT_EQ(job_signals_, (std::vector<int>{SIGTERM, SIGKILL}));
}

TEST_F(SupervisorTest, AJobThatFilledItsDiskFailsSayingSo) {
  free_space_ = 4096;  // the job's filesystem is full
  auto o = run(plan(R"({"nodeCount": 1, )" + kPrefix + R"(, "customToolkitSettings": {"commandLine": "exit 1"}})", 1));
  EXPECT_FALSE(o.succeeded);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(o.errors[0]["code"], "JobFailed");
  const std::string message = o.errors[0]["message"];
  EXPECT_NE(message.find("is full (no space left on device)"), std::string::npos) << message;
  EXPECT_NE(message.find(home_.string()), std::string::npos) << message;
  // With room left, a failure is only its exit code.
  free_space_ = kFullFilesystemBytes * 4;
  o = run(plan(R"({"nodeCount": 1, )" + kPrefix + R"(, "customToolkitSettings": {"commandLine": "exit 1"}})", 1));
  EXPECT_EQ(o.errors[0]["message"], "The job process exited with code 1");
}

TEST_F(SupervisorTest, TasksSeeTheNodesEnvironmentNotTheSupervisors) {
  ::setenv("AZURE_STORAGE_KEY", "submitter-secret", 1);
  auto p = plan(R"({"nodeCount": 1, )" + kPrefix + R"(, "customToolkitSettings": {"commandLine": "env > $AZ_BATCHAI_JOB_TEMP/env.txt"},
      "environmentVariables": [{"name": "DECLARED", "value": "yes"}]})", 1);
  auto o = run(p);
  ::unsetenv("AZURE_STORAGE_KEY");
  ASSERT_TRUE(o.succeeded);
  const std::string env = read_file(home_ / "n0/jobs/job/env.txt");
  EXPECT_EQ(env.find("AZURE_STORAGE_KEY"), std::string::npos) << env;
  EXPECT_NE(env.find("DECLARED=yes\n"), std::string::npos) << env;
  EXPECT_NE(env.find("AZ_BATCHAI_JOB_TEMP="), std::string::npos) << env;
}

TEST_F(SupervisorTest, TwoNodeCustomMpiRanksWriteTheirRankAndNode) {
  if (!program_available("mpirun", {})) GTEST_SKIP() << "mpirun not installed";
  auto p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "customMpiSettings": {"processCount": 2, "commandLine":
      "echo $OMPI_COMM_WORLD_RANK $BATCHAI_NODE_ID $AZ_BATCHAI_JOB_TEMP > $AZ_BATCHAI_OUTPUT_OUT/rank-$OMPI_COMM_WORLD_RANK.txt"},
      "outputDirectories": [{"id": "OUT", "pathPrefix": "$AZ_BATCHAI_JOB_TEMP_DIR"}]})", 2);
  auto o = run(p);
  EXPECT_TRUE(o.succeeded) << read_file(p.stdouterr_dir / "stderr.txt");
  // Each rank sees its own node's folders; OUT resolves per node.
  EXPECT_EQ(read_file(home_ / "n0/jobs/sub/rg/workspaces/ws/experiments/exp/jobs/job/u/outputs/rank-0.txt"),
            "0 node0 " + (home_ / "n0/jobs/job").string() + "\n");
  EXPECT_EQ(read_file(home_ / "n1/jobs/sub/rg/workspaces/ws/experiments/exp/jobs/job/u/outputs/rank-1.txt"),
            "1 node1 " + (home_ / "n1/jobs/job").string() + "\n");
}

}  // namespace
}  // namespace batchai::runtime
