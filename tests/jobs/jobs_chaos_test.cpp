// Chaos (issue 53): bursts of jobs from several shells on a 2-node cluster while `job create`
// and other commands are SIGKILLed within milliseconds of their start and supervisors (running a
// job, starting or waiting for their cluster's next one) are SIGKILLed at random, for several
// seeds. Then: every job ends, none ran twice (each job appends one ledger line when its task
// starts), a succeeded job ran exactly once, nothing of the jobs or their supervisors is left and
// the nodes are idle. Counts per seed are printed and recorded as test properties.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "job_harness.hpp"

namespace fs = std::filesystem;

namespace batchai::test {
namespace {

constexpr int kShells = 3;
constexpr int kBurst = 2;   // jobs each shell creates in a burst
constexpr int kRounds = 7;  // bursts per seed

// Starts `argv` with its output discarded; its pid.
pid_t start(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

// Pids of this home's supervisors (named batchai-sup, started with this BATCHAI_HOME).
std::vector<pid_t> supervisors_of(const fs::path& home) {
  std::vector<pid_t> out;
  const std::string mine = "BATCHAI_HOME=" + home.string();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (read_file(e.path() / "comm") != "batchai-sup\n") continue;
    std::string env = read_file(e.path() / "environ");
    bool ours = false;
    for (std::size_t at = 0; at < env.size();) {
      const std::size_t end = env.find('\0', at);
      if (env.compare(at, (end == std::string::npos ? env.size() : end) - at, mine) == 0) ours = true;
      if (end == std::string::npos) break;
      at = end + 1;
    }
    if (ours) out.push_back(static_cast<pid_t>(std::stol(pid)));
  }
  return out;
}

bool job_lock_held(const fs::path& job_dir) {
  const int fd = ::open((job_dir / "supervisor.lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

struct Counts {
  std::atomic<int> creates{0}, creates_killed{0}, commands_killed{0}, supervisors_killed{0};
};

class JobsChaos : public JobsFixture, public ::testing::WithParamInterface<int> {
 protected:
  fs::path ledger() const { return work_ / "ledger"; }
  // Sleeps `centis` hundredths of a second (10-99) after its ledger line.
  Json job_props(const std::string& name, int centis) {
    return {{"nodeCount", 1},
            {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
            {"customToolkitSettings",
             {{"commandLine", "echo " + name + " $$ >> " + ledger().string() + "; sleep 0." +
                                  std::to_string(centis) + " # " + marker_}}}};
  }
  // One shell's part of a burst: its jobs created one after another, some creates killed within
  // 0-30 ms of their start, and a `job list` between them now and then, killed as quickly.
  void shell(int index, int round, std::mt19937& rng, Counts& counts) {
    for (int k = 0; k < kBurst; ++k) {
      const std::string name = "j" + std::to_string(index) + "r" + std::to_string(round) + "x" + std::to_string(k);
      const std::string file = job_file(name, job_props(name, 20 + static_cast<int>(rng() % 70)));
      const pid_t pid = start({BATCHAI_EXE, "job", "create", "-g", "rg", "-w", "ws", "-e", "exp1", "-n", name, "-c",
                               "c1", "-f", file});
      ++counts.creates;
      if (rng() % 10 < 3) {
        std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 30));
        if (::kill(pid, SIGKILL) == 0) ++counts.creates_killed;
      }
      ::waitpid(pid, nullptr, 0);
      if (rng() % 4 == 0) {
        const pid_t list = start({BATCHAI_EXE, "job", "list", "-g", "rg", "-w", "ws", "-e", "exp1"});
        std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 50));
        if (::kill(list, SIGKILL) == 0) ++counts.commands_killed;
        ::waitpid(list, nullptr, 0);
      }
    }
  }
  // Kills a supervisor now and then: any of this home's, and more often, while one waits for its
  // cluster's next job, one that runs a job (F415: the waiter used to start that job again).
  void kill_supervisors(std::mt19937& rng, Counts& counts, const std::atomic<bool>& done) {
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 130));
      const auto sups = supervisors_of(home_);
      if (sups.empty()) continue;
      std::vector<pid_t> running;  // supervisors holding their job's lock
      if (a_waiting_place_is_held(home_)) {
        for (const auto& [key, pid] : supervisor_pids(home_)) {
          const pid_t p = static_cast<pid_t>(std::stol(pid));
          if (job_lock_held(home_ / "jobs" / key) && std::find(sups.begin(), sups.end(), p) != sups.end())
            running.push_back(p);
        }
      }
      pid_t victim = 0;
      if (!running.empty() && rng() % 2 == 0) victim = running[rng() % running.size()];
      else if (rng() % 6 == 0) victim = sups[rng() % sups.size()];
      if (victim > 0 && ::kill(victim, SIGKILL) == 0) ++counts.supervisors_killed;
    }
  }
};

TEST_P(JobsChaos, EveryJobEndsAndNoneRunsTwice) {
  const int seed = GetParam();
  make_cluster("c1", 2);
  Counts counts;
  std::atomic<bool> done{false};
  std::mt19937 killer_rng(static_cast<std::uint32_t>(seed) * 7919u);
  std::thread killer([&] { kill_supervisors(killer_rng, counts, done); });
  // Bursts from every shell at once, then a quiet while in which no command runs: the queue
  // drains, supervisors wait for their cluster's next job, and only they act.
  std::vector<std::mt19937> rngs;
  for (int s = 0; s < kShells; ++s) rngs.emplace_back(static_cast<std::uint32_t>(seed * 100 + s));
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::thread> shells;
    for (int s = 0; s < kShells; ++s) shells.emplace_back([&, s] { shell(s, round, rngs[s], counts); });
    for (auto& t : shells) t.join();
    std::this_thread::sleep_for(std::chrono::milliseconds(800 + rngs[0]() % 1200));
  }
  done = true;
  killer.join();

  // Every job that exists ends (a create killed early made none), within a bound.
  Json jobs;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    jobs = json("batchai job list " + scope_);
    ASSERT_TRUE(jobs.is_array());
    int unfinished = 0;
    for (const auto& j : jobs)
      unfinished += j["executionState"] != "succeeded" && j["executionState"] != "failed" ? 1 : 0;
    if (unfinished == 0) break;
    ASSERT_LT(std::chrono::steady_clock::now(), end) << unfinished << " job(s) never ended: " << jobs.dump();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::map<std::string, int> runs;
  {
    std::ifstream in(ledger());
    for (std::string name, pid; in >> name >> pid;) ++runs[name];
  }
  int succeeded = 0, failed = 0, twice = 0, never_ran = 0;
  std::map<std::string, int> errors;
  for (Json j : jobs) {  // a copy: operator[] of a missing key on a const Json is undefined
    const std::string name = j["name"];
    const int ran = runs.count(name) ? runs[name] : 0;
    EXPECT_LE(ran, 1) << name << " ran " << ran << " times: " << j.dump();
    twice += ran > 1 ? 1 : 0;
    never_ran += ran == 0 ? 1 : 0;
    if (j["executionState"] == "succeeded") {
      ++succeeded;
      EXPECT_EQ(ran, 1) << name << " succeeded and ran " << ran << " times";
    } else {
      ++failed;
      const Json error = j["executionInfo"]["errors"].is_array() ? j["executionInfo"]["errors"][0] : Json::object();
      ++errors[error.value("code", "?")];
      if (error.value("code", "?") != "SupervisorDied") std::cout << name << ": " << error.dump() << std::endl;
    }
  }
  for (const auto& [name, count] : runs)  // nothing ran that is not a job
    EXPECT_TRUE(std::any_of(jobs.begin(), jobs.end(), [&](const Json& j) { return j["name"] == name; })) << name;
  // Nothing is left: no process of a job, no supervisor of this home, every node idle.
  EXPECT_TRUE(no_processes_within(marker_, std::chrono::seconds(10)));
  const auto sup_end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!supervisors_of(home_).empty() && std::chrono::steady_clock::now() < sup_end)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(supervisors_of(home_).empty());
  EXPECT_EQ(held_supervisor_locks(home_), 0);
  Json cluster = json("batchai cluster show -g rg -w ws -n c1");
  EXPECT_EQ(cluster["nodeStateCounts"]["idleNodeCount"], 2) << cluster.dump();

  std::ostringstream line;
  line << "chaos seed " << seed << ": " << counts.creates << " creates (" << counts.creates_killed << " killed), "
       << counts.commands_killed << " other commands killed, " << counts.supervisors_killed
       << " supervisors killed; " << jobs.size() << " jobs: " << succeeded << " succeeded, " << failed
       << " failed (";
  for (const auto& [code, n] : errors) line << code << " " << n << " ";
  line << "), " << never_ran << " never ran, " << twice << " ran twice";
  std::cout << line.str() << std::endl;
  RecordProperty("chaos", line.str());
}

INSTANTIATE_TEST_SUITE_P(Seeds, JobsChaos, ::testing::Values(1, 2, 3, 4, 5, 6));

}  // namespace
}  // namespace batchai::test
