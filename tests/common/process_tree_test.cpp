// Job process containment with real processes: the marker finds processes that left their
// group and session, a cgroup holds processes that dropped the marker, and a child subreaper
// finds unmarked descendants and adopted orphans. Each test ends with nothing of it alive.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batchai/common/process.hpp"
#include "batchai/common/process_tree.hpp"
#include "support/temp_dir.hpp"

namespace batchai {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class ProcessTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    key_ = "ptt-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  void TearDown() override {
    JobProcesses(key_, {}).kill_all(5s);  // a failed test leaves nothing behind
  }

  ProcessSpec sh(const std::string& script) const {
    ProcessSpec spec;
    spec.argv = {"sh", "-c", script};
    spec.cwd = dir_;
    return spec;
  }
  bool wait_file(const std::string& name) const {
    for (int i = 0; i < 500; ++i) {
      if (fs::exists(dir_ / name)) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
  pid_t pid_in(const std::string& name) const {
    if (!wait_file(name)) return 0;
    pid_t pid = 0;
    for (int i = 0; i < 100 && pid == 0; ++i, std::this_thread::sleep_for(10ms)) std::ifstream(dir_ / name) >> pid;
    return pid;
  }
  // Processes carrying this test's marker, found without JobProcesses.
  int marked() const {
    int n = 0;
    for (const auto& p : list_processes())
      if (p.state != 'Z' && p.pid != ::getpid() && process_has_env(p.pid, kJobKeyVariable, key_)) ++n;
    return n;
  }

  std::string key_;
  test::TempDir tmp_{"batchai-ptt"};
  fs::path dir_ = tmp_.path();
  std::unique_ptr<ProcessLauncher> launcher_ = make_posix_process_launcher();
};

TEST_F(ProcessTreeTest, MarkerFindsWhatLeftTheGroupAndSession) {
  const JobProcesses job(key_, {});
  ProcessSpec spec = sh(
      "setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' </dev/null >/dev/null 2>&1 & "
      "(trap '' TERM; exec sleep 300) & echo $! > child.pid; wait");
  job.adopt(spec);
  const pid_t leader = launcher_->spawn(spec);
  const pid_t daemon = pid_in("daemon.pid");
  ASSERT_GT(daemon, 0);
  ASSERT_GT(pid_in("child.pid"), 0);
  EXPECT_NE(::getsid(daemon), leader);  // out of the task's session: a group signal misses it
  launcher_->signal_group(leader, SIGTERM);  // the child ignores it
  launcher_->wait(leader, std::nullopt);
  EXPECT_GE(job.members().size(), 2u);
  EXPECT_GE(marked(), 2);
  EXPECT_TRUE(job.kill_all(5s).empty());
  EXPECT_EQ(marked(), 0);
  std::cout << "[containment] marker: survivors of the group's SIGTERM found and ended; left: " << marked() << "\n";
}

TEST_F(ProcessTreeTest, CgroupHoldsProcessesWithoutTheMarker) {
  std::string why;
  auto parent = writable_cgroup_parent(&why);
  if (!parent) GTEST_SKIP() << "no writable cgroup v2 here: " << why;
  const fs::path group = *parent / ("batchai-job-" + key_);
  ASSERT_TRUE(fs::create_directory(group));
  const JobProcesses job("no-such-marker-" + key_, group);
  ProcessSpec spec = sh(
      "env -i setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > a.pid; "
      "env -i sh -c 'exec sleep 300' & echo $! > b.pid; wait");
  job.adopt(spec);
  const pid_t leader = launcher_->spawn(spec);
  const pid_t a = pid_in("a.pid"), b = pid_in("b.pid");
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  auto members = job.members();
  EXPECT_NE(std::find(members.begin(), members.end(), a), members.end());
  EXPECT_NE(std::find(members.begin(), members.end(), b), members.end());
  EXPECT_TRUE(job.kill_all(5s, {leader}).empty());  // the leader is our task: reaped by our wait
  EXPECT_TRUE(launcher_->wait(leader, 5s).has_value());
  EXPECT_FALSE(process_alive(a));
  EXPECT_FALSE(process_alive(b));
  EXPECT_FALSE(fs::exists(group));  // removed once empty
  std::cout << "[containment] cgroup " << group << ": unmarked setsid and env -i processes ended\n";
}

TEST_F(ProcessTreeTest, ATaskStartsInsideItsGroup) {
  std::string why;
  auto parent = writable_cgroup_parent(&why);
  if (!parent) GTEST_SKIP() << "no writable cgroup v2 here: " << why;
  const fs::path group = *parent / ("batchai-job-" + key_);
  ASSERT_TRUE(fs::create_directory(group));
  ProcessSpec spec = sh("cat /proc/self/cgroup > cgroup.txt");
  spec.cgroup = group;
  const pid_t pid = launcher_->spawn(spec);
  ASSERT_EQ(launcher_->wait(pid, std::nullopt)->exit_code, 0);
  std::ifstream in(dir_ / "cgroup.txt");
  std::string line, v2;
  while (std::getline(in, line))
    if (line.rfind("0::", 0) == 0) v2 = line;
  EXPECT_EQ(v2.substr(v2.rfind('/') + 1), group.filename().string());
  fs::remove(group);
}

// In a forked child, so the test process itself never becomes a subreaper. Exit status: a bit
// per failed check.
TEST_F(ProcessTreeTest, SubreaperFindsUnmarkedDescendantsAndAdoptedOrphans) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int failed = 0;
    const JobProcesses job = JobProcesses::contain(key_, "subreaper");
    if (job.mode() != JobProcesses::Mode::kSubreaper) failed |= 1;
    ProcessSpec spec = sh(
        "env -i sleep 300 & echo $! > unmarked.pid; "
        "( setsid sh -c 'echo $$ > orphan.pid; exec sleep 300' </dev/null >/dev/null 2>&1 & ); wait");
    job.adopt(spec);
    auto launcher = make_posix_process_launcher();
    const pid_t task = launcher->spawn(spec);
    const pid_t unmarked = pid_in("unmarked.pid"), orphan = pid_in("orphan.pid");
    if (unmarked <= 0 || orphan <= 0) ::_exit(2);
    bool adopted = false;  // the orphan comes to us, not to init
    for (int i = 0; i < 200 && !adopted; ++i) {
      for (const auto& x : list_processes()) adopted |= x.pid == orphan && x.ppid == ::getpid();
      if (!adopted) std::this_thread::sleep_for(10ms);
    }
    if (!adopted) failed |= 32;
    if (!job.kill_all(5s, {task}).empty()) failed |= 4;  // reaps the task too
    if (process_alive(unmarked)) failed |= 8;
    if (process_alive(orphan)) failed |= 16;
    ::_exit(failed);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "failed checks (bits): 1 mode, 2 no pids, 4 survivors, 8 unmarked, 16 orphan, 32 not adopted";
  EXPECT_EQ(marked(), 0);
  std::cout << "[containment] subreaper: unmarked descendant and adopted setsid orphan ended\n";
}

}  // namespace
}  // namespace batchai
