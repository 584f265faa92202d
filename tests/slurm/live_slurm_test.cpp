// SlurmClient against the private Slurm that the CTest fixture starts (private_slurm.sh, 3 nodes,
// partition "batchai"); SLURM_CONF names it. Without it these tests fail: they are never skipped.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "batchai/common/errors.hpp"
#include "batchai/slurm/client.hpp"
#include "slurm_test_util.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace batchai::slurm {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

using slurm_testing::dead_controller_conf;
using slurm_testing::slurm_conf;

class LiveSlurm : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(slurm_conf())) << slurm_conf();
  }

  BatchJob job(const std::string& name, int nodes, const std::string& command) {
    BatchJob j;
    j.name = "test." + name;
    j.comment = "batchai:/test/" + name;
    j.partition = "batchai";
    j.node_count = nodes;
    j.time_limit_minutes = 5;
    j.work_dir = dir_;
    j.stdout_path = dir_ / name / "stdouterr" / "stdout.txt";
    j.stderr_path = dir_ / name / "stdouterr" / "stderr.txt";
    j.environment = {{"BATCHAI_TEST_VALUE", "a b,c 'd'"}};
    j.command_line = command;
    return j;
  }

  // Polls until the job reaches a state `done` accepts; fails after `limit`.
  JobInfo wait_for(JobId id, bool (*done)(const JobInfo&), std::chrono::seconds limit = 90s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    JobInfo info;
    while (std::chrono::steady_clock::now() < deadline) {
      info = client_.job(id);
      if (done(info)) return info;
      std::this_thread::sleep_for(200ms);
    }
    ADD_FAILURE() << "job " << id << " still " << info.slurm_state << " after " << limit.count() << " s";
    return info;
  }
  static bool final_state(const JobInfo& j) { return is_final_job_state(j.slurm_state); }

  std::unique_ptr<ProcessLauncher> launcher_ = make_posix_process_launcher();
  SlurmClient client_{*launcher_};
  test::TempDir tmp_{"batchai-slurm-test"};
  fs::path dir_ = tmp_.path();
};

using test::read_file;

TEST_F(LiveSlurm, ListsThreeIdleNodes) {
  auto version = client_.check_version();
  EXPECT_TRUE(version.at_least(20, 11));
  auto nodes = client_.partition_nodes("batchai");
  ASSERT_EQ(nodes.size(), 3u);
  for (const auto& n : nodes) {
    EXPECT_EQ(n.state, NodeState::idle) << n.name << " " << n.slurm_state;
    EXPECT_GE(n.cpus, 1);
  }
  EXPECT_EQ(nodes[0].name, "node1");
}

TEST_F(LiveSlurm, TwoNodeJobRunsOnTwoNodes) {
  JobId id = client_.submit(
      job("two", 2, "echo \"value=$BATCHAI_TEST_VALUE\"\nsrun -l bash -c 'echo node=$SLURMD_NODENAME'"));
  JobInfo done = wait_for(id, final_state);
  auto outcome = outcome_of(done);
  EXPECT_EQ(outcome.state, JobState::succeeded) << done.slurm_state << " " << outcome.error_message;
  EXPECT_EQ(done.node_count, 2);
  EXPECT_EQ(expand_hostlist(done.node_list).size(), 2u) << done.node_list;
  std::string out = read_file(dir_ / "two" / "stdouterr" / "stdout.txt");
  EXPECT_NE(out.find("value=a b,c 'd'"), std::string::npos) << out;
  std::set<std::string> names;
  std::regex re("node=(\\S+)");
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end; ++it) names.insert((*it)[1]);
  EXPECT_EQ(names.size(), 2u) << out;
}

TEST_F(LiveSlurm, ExitThreeEndsFailedWithExitCodeThree) {
  JobId id = client_.submit(job("exit3", 1, "echo about to fail\nexit 3"));
  JobInfo done = wait_for(id, final_state);
  EXPECT_EQ(done.slurm_state, "FAILED");
  ASSERT_TRUE(done.exit);
  EXPECT_EQ(done.exit->batchai_exit_code(), 3);
  auto outcome = outcome_of(done);
  EXPECT_EQ(outcome.state, JobState::failed);
  EXPECT_EQ(outcome.error_code, "JobFailed");
  EXPECT_NE(read_file(dir_ / "exit3" / "stdouterr" / "stdout.txt").find("about to fail"), std::string::npos);
}

TEST_F(LiveSlurm, CancelledWhileRunningEndsTerminated) {
  JobId id = client_.submit(job("cancel", 1, "sleep 120"));
  JobInfo running = wait_for(id, [](const JobInfo& j) {
    return j.slurm_state == "RUNNING" || is_final_job_state(j.slurm_state);
  });
  ASSERT_EQ(running.slurm_state, "RUNNING");
  EXPECT_EQ(outcome_of(running).state, JobState::running);
  client_.cancel(id);
  JobInfo done = wait_for(id, final_state);
  EXPECT_EQ(done.slurm_state, "CANCELLED");
  auto outcome = outcome_of(done);
  EXPECT_EQ(outcome.state, JobState::failed);
  EXPECT_EQ(outcome.error_code, "JobTerminated");
  EXPECT_NO_THROW(client_.cancel(id));  // already ended: nothing to do
}

TEST_F(LiveSlurm, UnknownPartitionAndJobAreRefused) {
  try {
    client_.partition_nodes("nosuchpartition");
    FAIL() << "an unknown partition was accepted";
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find("no partition 'nosuchpartition'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(client_.job(4000000000u), NotFound);
  EXPECT_THROW(client_.cancel(4000000000u), NotFound);
}

void expect_does_not_answer(SlurmClient& client, std::chrono::seconds within) {
  auto start = std::chrono::steady_clock::now();
  try {
    client.partition_nodes("batchai");
    ADD_FAILURE() << "a controller nobody runs answered";
  } catch (const SystemError& e) {
    EXPECT_EQ(e.code(), "SlurmControllerUnreachable") << e.what();
    EXPECT_NE(std::string(e.what()).find("does not answer"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, within);
}

TEST_F(LiveSlurm, ControllerNobodyListensOnDoesNotAnswer) {
  ClientOptions o;
  o.slurm_conf = dead_controller_conf(dir_);
  SlurmClient client(*launcher_, o);  // the default bound (15 s); Slurm gives up sooner by itself
  expect_does_not_answer(client, 20s);
}

TEST_F(LiveSlurm, ControllerThatDoesNotAnswerWithinTheBound) {
  ClientOptions o;
  o.slurm_conf = dead_controller_conf(dir_);
  o.command_timeout = 2s;  // shorter than Slurm's own retries: the client's bound ends it
  SlurmClient client(*launcher_, o);
  expect_does_not_answer(client, 5s);
}

}  // namespace
}  // namespace batchai::slurm
