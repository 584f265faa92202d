// Faults: terminate, delete, wall-clock timeout, a dying MPI rank and a SIGKILLed supervisor;
// after each one no process of the job may be left (checked by a marker in command lines).
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <map>
#include <thread>
#include <vector>

#include "job_harness.hpp"

namespace fs = std::filesystem;

namespace batchai::test {
namespace {

using JobsFaults = JobsFixture;

Json sleeper(const std::string& marker) {
  return {{"nodeCount", 1},
          {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
          {"customToolkitSettings", {{"commandLine", "exec -a " + marker + " sleep 300"}}}};
}

bool wait_for_processes(const std::string& marker) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (count_processes(marker) == 0) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

TEST_F(JobsFaults, TerminateEndsTheProcessTree) {
  make_cluster("c1", 1);
  create("t", sleeper(marker_));
  wait_state("t", {"running"});
  ASSERT_TRUE(wait_for_processes(marker_));
  ASSERT_EQ(run("batchai job terminate " + scope_ + " -n t -y").code, 0);
  Json job = show("t");
  EXPECT_EQ(job["executionState"], "failed");
  EXPECT_EQ(job["executionInfo"]["errors"][0]["code"], "JobTerminated");
  EXPECT_TRUE(no_processes_within(marker_, std::chrono::seconds(5)));
  // The node is free again: the next job runs.
  create("after", {{"nodeCount", 1}, {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                   {"customToolkitSettings", {{"commandLine", "true"}}}});
  EXPECT_EQ(wait_state("after", {"succeeded", "failed"})["executionState"], "succeeded");
}

TEST_F(JobsFaults, TerminateQueuedJobFailsIt) {
  make_cluster("c1", 0);
  create("waiting", sleeper(marker_));
  ASSERT_EQ(run("batchai job terminate " + scope_ + " -n waiting -y").code, 0);
  Json job = show("waiting");
  EXPECT_EQ(job["executionState"], "failed");
  EXPECT_EQ(run("batchai job wait " + scope_ + " -n waiting --interval 0").code, 0);  // null exit code quirk
}

TEST_F(JobsFaults, DeleteRunningJobEndsTheProcessTree) {
  make_cluster("c1", 1);
  create("d", sleeper(marker_));
  ASSERT_TRUE(wait_for_processes(marker_));
  ASSERT_EQ(run("batchai job delete " + scope_ + " -n d -y").code, 0);
  EXPECT_EQ(run("batchai job show " + scope_ + " -n d").code, 3);
  EXPECT_TRUE(no_processes_within(marker_, std::chrono::seconds(5)));
}

TEST_F(JobsFaults, WallClockTimeoutStopsTheJob) {
  make_cluster("c1", 1);
  Json props = sleeper(marker_);
  props["constraints"] = {{"maxWallClockTime", "PT1S"}};
  create("slow", props);
  Json job = wait_state("slow", {"succeeded", "failed"});
  EXPECT_EQ(job["executionState"], "failed");
  EXPECT_EQ(job["executionInfo"]["errors"][0]["code"], "JobTimedOut") << job.dump();
  EXPECT_TRUE(no_processes_within(marker_, std::chrono::seconds(5)));
}

TEST_F(JobsFaults, DyingRankFailsMpiJobPromptly) {
  make_cluster("c2", 2);
  Json props = {{"nodeCount", 2},
                {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                {"customMpiSettings",
                 {{"commandLine", "if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then exit 5; fi; exec -a " + marker_ + " sleep 300"},
                  {"processCount", 2}}}};
  create("rank", props, "c2");
  const auto start = std::chrono::steady_clock::now();
  Json job = wait_state("rank", {"succeeded", "failed"}, std::chrono::seconds(60));
  EXPECT_EQ(job["executionState"], "failed");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_TRUE(no_processes_within(marker_, std::chrono::seconds(5)));
}

TEST_F(JobsFaults, KilledSupervisorIsNoticedByTheNextCommand) {
  make_cluster("c1", 1);
  create("orphan", sleeper(marker_));
  ASSERT_TRUE(wait_for_processes(marker_));
  pid_t supervisor = 0;
  for (const auto& dir : fs::directory_iterator(home_ / "jobs")) {
    std::ifstream in(dir.path() / "supervisor.lock");
    in >> supervisor;
  }
  ASSERT_GT(supervisor, 1);
  ASSERT_EQ(::kill(supervisor, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Json job = show("orphan");
  EXPECT_EQ(job["executionState"], "failed");
  EXPECT_EQ(job["executionInfo"]["errors"][0]["code"], "SupervisorDied") << job.dump();
  EXPECT_TRUE(no_processes_within(marker_, std::chrono::seconds(5)));
  Json cluster = json("batchai cluster show -g rg -w ws -n c1");
  EXPECT_EQ(cluster["nodeStateCounts"]["idleNodeCount"], 1);
}

// A queue costs rows, not processes: with one job running and ten waiting behind it, only the
// running job has a supervisor (before: one process per queued job; then the running job's and
// the head's): the running job's supervisor places the queue when its job ends. The rest still
// run, each once.
TEST_F(JobsFaults, QueuedJobsHoldNoProcessButTheHead) {
  make_cluster("c1", 1);
  create("running", sleeper(marker_));
  ASSERT_TRUE(wait_for_processes(marker_));
  const Json quick = {{"nodeCount", 1},
                      {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                      {"customToolkitSettings", {{"commandLine", "echo ran"}}}};
  for (int i = 0; i < 10; ++i) create("queued" + std::to_string(i), quick);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // time for any supervisor to start
  EXPECT_EQ(show("queued9")["executionState"], "queued");
  EXPECT_EQ(held_supervisor_locks(home_), 1) << "the running job's";
  json("batchai job terminate " + scope_ + " -n running -y");
  for (int i = 0; i < 10; ++i) {
    Json job = wait_state("queued" + std::to_string(i), {"succeeded", "failed"}, std::chrono::seconds(60));
    EXPECT_EQ(job["executionState"], "succeeded") << job.dump();
  }
  EXPECT_EQ(held_supervisor_locks(home_), 0);
}

// A supervisor whose job ended runs the next job that needed one instead of a new process
// starting for it: 40 jobs queued on a 1-node cluster run in a handful of supervisor processes
// (before: one each), none serving more than the bound of 32, and every job still runs once.
TEST_F(JobsFaults, SupervisorsRunJobAfterJobWithinTheirBound) {
  make_cluster("c1", 1);
  create("first", sleeper(marker_));
  ASSERT_TRUE(wait_for_processes(marker_));
  const Json quick = {{"nodeCount", 1},
                      {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                      {"customToolkitSettings", {{"commandLine", "echo ran"}}}};
  constexpr int kJobs = 40;
  for (int i = 0; i < kJobs; ++i) create("q" + std::to_string(i), quick);
  json("batchai job terminate " + scope_ + " -n first -y");
  for (int i = 0; i < kJobs; ++i) {
    Json job = wait_state("q" + std::to_string(i), {"succeeded", "failed"}, std::chrono::seconds(60));
    EXPECT_EQ(job["executionState"], "succeeded") << job.dump();
  }
  const auto pids = supervisor_pids(home_);
  ASSERT_EQ(pids.size(), static_cast<std::size_t>(kJobs + 1));
  std::map<std::string, int> jobs_per_process;
  for (const auto& [job, pid] : pids) ++jobs_per_process[pid];
  EXPECT_LE(jobs_per_process.size(), 3u) << "one process per job is " << kJobs + 1;
  for (const auto& [pid, count] : jobs_per_process) EXPECT_LE(count, 32) << "supervisor " << pid;
  EXPECT_EQ(held_supervisor_locks(home_), 0);
}

// A supervisor whose job ends with nothing queued waits a moment for its cluster's next job: jobs
// submitted one after another on an idle cluster are run by a few processes (before: one each).
// Then jobs submitted from four shells at once, handed to waiting supervisors or to new ones,
// each run exactly once.
TEST_F(JobsFaults, WaitingSupervisorsTakeTheNextJobsOnce) {
  make_cluster("c1", 2);
  const fs::path ran = work_ / "ran.log";
  auto appends = [&](const std::string& name) {
    return Json{{"nodeCount", 1},
                {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                {"customToolkitSettings", {{"commandLine", "echo " + name + " >> " + ran.string()}}}};
  };
  constexpr int kOneByOne = 10;
  for (int i = 0; i < kOneByOne; ++i) {
    const std::string name = "s" + std::to_string(i);
    create(name, appends(name));
    ASSERT_EQ(run("batchai job wait " + scope_ + " -n " + name + " --interval 0").code, 0);
  }
  std::map<std::string, int> jobs_per_process;
  for (const auto& [job, pid] : supervisor_pids(home_)) ++jobs_per_process[pid];
  EXPECT_LE(jobs_per_process.size(), 5u) << "one process per job is " << kOneByOne;

  constexpr int kShells = 4, kPerShell = 6;
  std::vector<std::string> commands;
  for (int s = 0; s < kShells; ++s) {
    std::string line;
    for (int k = 0; k < kPerShell; ++k) {
      const std::string name = "p" + std::to_string(s) + "x" + std::to_string(k);
      line += std::string(BATCHAI_EXE) + " job create " + scope_ + " -n " + name + " -c c1 -f " +
              job_file(name, appends(name)) + " >/dev/null 2>&1; ";
    }
    commands.push_back(line);
  }
  std::vector<std::thread> shells;
  for (const auto& line : commands) shells.emplace_back([line] { EXPECT_EQ(std::system(line.c_str()), 0); });
  for (auto& t : shells) t.join();
  for (int s = 0; s < kShells; ++s)
    for (int k = 0; k < kPerShell; ++k) {
      const std::string name = "p" + std::to_string(s) + "x" + std::to_string(k);
      EXPECT_EQ(wait_state(name, {"succeeded", "failed"}, std::chrono::seconds(60))["executionState"], "succeeded") << name;
    }
  std::map<std::string, int> runs;
  std::ifstream in(ran);
  for (std::string line; std::getline(in, line);) ++runs[line];
  EXPECT_EQ(runs.size(), static_cast<std::size_t>(kOneByOne + kShells * kPerShell));
  for (const auto& [name, count] : runs) EXPECT_EQ(count, 1) << name << " ran " << count << " times";
  EXPECT_EQ(held_supervisor_locks(home_), 0);
}

// A job handed to a waiting supervisor that dies before it claims the job is not left to the
// minute's grace (and then failed): the next command's scheduler starts a supervisor for it.
TEST_F(JobsFaults, AJobHandedToAWaiterThatDiesGetsAnotherSupervisor) {
  make_cluster("c1", 1);
  const Json trivial = {{"nodeCount", 1},
                        {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                        {"customToolkitSettings", {{"commandLine", "true"}}}};
  create("first", trivial);
  ASSERT_EQ(run("batchai job wait " + scope_ + " -n first --interval 0").code, 0);
  const auto pids = supervisor_pids(home_);
  ASSERT_EQ(pids.size(), 1u);
  const pid_t waiter = static_cast<pid_t>(std::stol(pids.begin()->second));
  // Caught while it waits for the cluster's next job (it waits a few hundred milliseconds).
  if (::kill(waiter, SIGSTOP) != 0) GTEST_SKIP() << "the supervisor left before the test could stop it";
  if (!a_waiting_place_is_held(home_)) {
    ::kill(waiter, SIGCONT);
    GTEST_SKIP() << "the supervisor was stopped after it had left its waiting place";
  }
  create("second", trivial);  // handed to the stopped waiter: no process is started for it
  ASSERT_EQ(::kill(waiter, SIGKILL), 0);
  const auto t0 = std::chrono::steady_clock::now();
  Json job = wait_state("second", {"succeeded", "failed"}, std::chrono::seconds(40));
  EXPECT_EQ(job["executionState"], "succeeded") << job.dump();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << "left to the start grace";
  int others = 0;  // the second job's supervisor is a new process
  for (const auto& [key, pid] : supervisor_pids(home_)) others += pid != std::to_string(waiter) ? 1 : 0;
  EXPECT_EQ(others, 1);
}

TEST_F(JobsFaults, ExperimentDeleteEndsItsJobs) {
  make_cluster("c1", 1);
  create("e", sleeper(marker_));
  ASSERT_TRUE(wait_for_processes(marker_));
  ASSERT_EQ(run("batchai experiment delete -g rg -w ws -n exp1 -y").code, 0);
  EXPECT_TRUE(no_processes_within(marker_, std::chrono::seconds(5)));
}

}  // namespace
}  // namespace batchai::test
