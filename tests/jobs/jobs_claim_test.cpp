// A job's task is started at most once: a job whose supervisor died after the task started ends
// failed (SupervisorDied) and nobody starts it again, neither a supervisor waiting for its
// cluster's next job nor a supervisor process started for it. Each job appends a line to a
// ledger when its task starts; the ledger says how often it ran.
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <set>
#include <thread>

#include "job_harness.hpp"

namespace fs = std::filesystem;

namespace batchai::test {
namespace {

class JobsClaim : public JobsFixture {
 protected:
  // A job that writes "<name> <shell pid>" into the ledger when it starts, then sleeps.
  Json ledgered(const std::string& name, const std::string& then) const {
    return {{"nodeCount", 1},
            {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
            {"customToolkitSettings", {{"commandLine", "echo " + name + " $$ >> " + ledger().string() + "; " + then}}}};
  }
  fs::path ledger() const { return work_ / "ledger"; }
  int ledger_lines() {
    std::ifstream in(ledger());
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }
  // Waits until the ledger has `lines` lines (a task started); false after 20 s.
  bool ledger_reaches(int lines) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (ledger_lines() < lines) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }
  // The job folders of this home.
  std::set<std::string> job_folders() {
    std::set<std::string> out;
    std::error_code ec;
    for (const auto& dir : fs::directory_iterator(home_ / "jobs", ec)) out.insert(dir.path().filename().string());
    return out;
  }
  // The only job folder of `after` that is not in `before`.
  static std::string new_folder(const std::set<std::string>& before, const std::set<std::string>& after) {
    std::string found;
    for (const auto& f : after)
      if (before.count(f) == 0) found = f;
    return found;
  }
  // Kills the job's supervisor (the pid in its lock) and waits until it is gone.
  void kill_supervisor(const std::string& key) {
    const auto pids = supervisor_pids(home_);
    ASSERT_EQ(pids.count(key), 1u);
    const pid_t pid = static_cast<pid_t>(std::stol(pids.at(key)));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (::kill(pid, 0) == 0 && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a zombie until init reaps it
  }
  void expect_failed_once(const std::string& name) {
    Json job = wait_state(name, {"succeeded", "failed"});
    EXPECT_EQ(job["executionState"], "failed") << job.dump();
    EXPECT_EQ(job["executionInfo"]["errors"][0]["code"], "SupervisorDied") << job.dump();
    EXPECT_EQ(ledger_lines(), 1) << read_file(ledger());
    EXPECT_EQ(held_supervisor_locks(home_), 0);
  }
};

// F415: job A runs; job B ends and its supervisor waits for the cluster's next job; A's
// supervisor is killed meanwhile. The waiter, once its wait is over, found A running without a
// live supervisor and started A's task again (twice in the ledger; A could even succeed).
TEST_F(JobsClaim, AWaitingSupervisorDoesNotStartARunningJobAgain) {
  make_cluster("c1", 2);
  create("a", ledgered("a", "sleep 2"));
  ASSERT_TRUE(ledger_reaches(1));
  const std::string a_key = new_folder({}, job_folders());
  ASSERT_FALSE(a_key.empty());
  create("b", {{"nodeCount", 1},
               {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
               {"customToolkitSettings", {{"commandLine", "true"}}}});
  // B's supervisor holds a waiting place once B has ended (for a few hundred milliseconds).
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!a_waiting_place_is_held(home_) && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_TRUE(a_waiting_place_is_held(home_)) << "B's supervisor never waited";
  kill_supervisor(a_key);
  // No command runs until the waiter's wait is over: only the waiter could see A unsupervised.
  const auto wait_end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (a_waiting_place_is_held(home_) && std::chrono::steady_clock::now() < wait_end)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // what it does after its wait
  expect_failed_once("a");
}

// The supervisor itself checks: one started for a job whose task already started (a scheduler's
// spawn, a second `_supervise`) ends the job failed instead of running it again.
TEST_F(JobsClaim, ASupervisorStartedForAStartedJobDoesNotRunItAgain) {
  make_cluster("c1", 1);
  create("a", ledgered("a", "sleep 2"));
  ASSERT_TRUE(ledger_reaches(1));
  const std::string a_key = new_folder({}, job_folders());
  ASSERT_FALSE(a_key.empty());
  kill_supervisor(a_key);
  // As the scheduler would start it, but before any command has noticed the death.
  const Result again = run("_supervise --job-key " + a_key);
  EXPECT_EQ(again.code, 0) << again.err;
  expect_failed_once("a");
  Json job = show("a");
  EXPECT_NE(job["executionInfo"]["errors"][0]["message"].get<std::string>().find("not started again"),
            std::string::npos)
      << job.dump();
  // The node is free: the next job runs, once.
  create("next", ledgered("next", "true"));
  EXPECT_EQ(wait_state("next", {"succeeded", "failed"})["executionState"], "succeeded");
  EXPECT_EQ(ledger_lines(), 2);
}

}  // namespace
}  // namespace batchai::test
