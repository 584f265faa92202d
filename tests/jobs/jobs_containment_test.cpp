// A job's processes end with the job. A custom job and an MPI job (mpirun -np 2 of a script)
// each start a `setsid` daemon and a background child, and their main processes ignore SIGTERM;
// every one carries a unique marker. Each job is ended by success, failure (exit 1),
// `job terminate`, maxWallClockTime, `kill -9` of its supervisor or `kill -9` of mpirun, under
// the cgroup and the subreaper containment; then: the final state, no process with the marker
// within seconds, and the next job queued for the same nodes saw none of them when it started.
#include <algorithm>
#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "batchai/common/process_tree.hpp"
#include "job_harness.hpp"

namespace fs = std::filesystem;

namespace batchai::test {
namespace {

struct Case {
  std::string toolkit;  // custom | mpi
  std::string end;      // success | failure | terminate | wallclock | kill_supervisor | kill_mpirun
  std::string mode;     // cgroup | subreaper (BATCHAI_CONTAINMENT)
};

std::string slurp_cmdline(pid_t pid) {
  std::string s = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  for (auto& c : s)
    if (c == '\0') c = ' ';
  return s;
}

// First live process whose command line holds `text` and satisfies `also`.
template <typename F>
pid_t find_process(const std::string& text, F also) {
  for (const auto& p : list_processes())
    if (p.pid != ::getpid() && p.state != 'Z' && slurp_cmdline(p.pid).find(text) != std::string::npos && also(p))
      return p.pid;
  return 0;
}

class JobsContainment : public JobsFixture, public ::testing::WithParamInterface<Case> {
 protected:
  void TearDown() override {
    JobsFixture::TearDown();
    ::unsetenv("BATCHAI_CONTAINMENT");
  }

  // The job under test: background child, setsid daemon, then the ending its case needs.
  Json job_props(const Case& c, const fs::path& go) const {
    std::string tail = "trap '' TERM; exec -a $M-main sleep 300";
    if (c.end == "success" || c.end == "failure")
      tail = "while [ ! -e " + go.string() + " ]; do sleep 0.05; done; exit " + (c.end == "success" ? "0" : "1");
    const std::string script = "M=" + marker_ +
                               "; setsid bash -c \"exec -a $M-daemon sleep 300\" </dev/null >/dev/null 2>&1 & "
                               "(trap '' TERM; exec -a $M-child sleep 300) </dev/null >/dev/null 2>&1 & " + tail;
    Json props = {{"nodeCount", c.toolkit == "mpi" ? 2 : 1}, {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"}};
    if (c.toolkit == "mpi") props["customMpiSettings"] = {{"commandLine", script}, {"processCount", 2}};
    else props["customToolkitSettings"] = {{"commandLine", script}};
    if (c.end == "wallclock") props["constraints"] = {{"maxWallClockTime", "PT5S"}};
    return props;
  }

  // The next job on the same nodes: fails, listing them, if a process of the last one lives.
  Json next_props(const Case& c) const {
    const std::string half = marker_.substr(0, marker_.size() / 2), rest = marker_.substr(marker_.size() / 2);
    const std::string script = "a=" + half + "; b=" + rest +
                               "; for f in /proc/[0-9]*/cmdline; do c=$(tr '\\0' ' ' < $f 2>/dev/null) || continue; "
                               "case \"$c\" in *\"$a$b\"*) echo \"survivor ${f%/cmdline}: $c\"; found=1;; esac; done; "
                               "[ -z \"$found\" ]";
    return {{"nodeCount", c.toolkit == "mpi" ? 2 : 1},
            {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
            {"customToolkitSettings", {{"commandLine", script}}}};
  }
};

TEST_P(JobsContainment, NothingOfTheJobOutlivesIt) {
  const Case c = GetParam();
  if (c.toolkit == "mpi" && std::system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun";
  std::string why;
  if (c.mode == "cgroup" && !writable_cgroup_parent(&why)) GTEST_SKIP() << "no writable cgroup v2 here: " << why;
  ::setenv("BATCHAI_CONTAINMENT", c.mode.c_str(), 1);
  make_cluster("c1", c.toolkit == "mpi" ? 2 : 1);
  const fs::path go = work_ / "go";
  create("a", job_props(c, go));
  create("next", next_props(c));  // queued behind "a" on the same nodes
  // Every process is up: main (or its waiting shell), child and daemon, per rank, plus mpirun.
  const int expected = c.toolkit == "mpi" ? 7 : 3;
  int before = 0;
  for (int i = 0; i < 600 && (before = count_processes(marker_)) < expected; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_GE(before, expected) << "the job's processes did not all start";
  EXPECT_EQ(show("next")["executionState"], "queued");

  std::string code;  // the expected errors[0].code, empty for success
  if (c.end == "success") {
    std::ofstream(go).put('\n');
  } else if (c.end == "failure") {
    code = "JobFailed";
    std::ofstream(go).put('\n');
  } else if (c.end == "terminate") {
    code = "JobTerminated";
    ASSERT_EQ(run("batchai job terminate " + scope_ + " -n a -y").code, 0);
  } else if (c.end == "wallclock") {
    code = "JobTimedOut";
  } else if (c.end == "kill_supervisor") {
    code = "SupervisorDied";
    // The supervisor is the parent of the job's first process (the task or mpirun).
    pid_t sup = 0;
    find_process(marker_, [&](const ProcInfo& p) {
      if (slurp_cmdline(p.ppid).find("_supervise") == std::string::npos) return false;
      sup = p.ppid;
      return true;
    });
    ASSERT_GT(sup, 1);
    ASSERT_EQ(::kill(sup, SIGKILL), 0);
  } else if (c.end == "kill_mpirun") {
    code = "JobFailed";
    pid_t mpirun = find_process(marker_, [](const ProcInfo& p) { return slurp_cmdline(p.pid).rfind("mpirun ", 0) == 0; });
    ASSERT_GT(mpirun, 1);
    ASSERT_EQ(::kill(mpirun, SIGKILL), 0);
  }
  Json job = wait_state("a", {"succeeded", "failed"}, std::chrono::seconds(60));
  EXPECT_EQ(job["executionState"], code.empty() ? "succeeded" : "failed") << job.dump();
  if (!code.empty()) {
    EXPECT_EQ(job["executionInfo"]["errors"][0]["code"], code) << job.dump();
  }
  const bool none_left = no_processes_within(marker_, std::chrono::seconds(5));
  const int after = count_processes(marker_);
  EXPECT_TRUE(none_left) << after << " process(es) of the job outlived it";
  Json next = wait_state("next", {"succeeded", "failed"}, std::chrono::seconds(60));
  const std::string seen = read_file(stdouterr_file(home_, "next", "stdout.txt"));
  EXPECT_EQ(next["executionState"], "succeeded") << "the next job started while the last one's processes lived:\n" << seen;
  const std::string log = read_file(stdouterr_file(home_, "a", "execution.log"));
  EXPECT_NE(log.find("process containment: " + c.mode), std::string::npos) << log;
  std::cout << "[containment] mode=" << c.mode << " toolkit=" << c.toolkit << " end=" << c.end
            << ": state=" << job["executionState"].get<std::string>() << (code.empty() ? "" : "/" + code)
            << ", marked processes before=" << before << ", after=" << after
            << ", survivors seen by the next job=" << std::count(seen.begin(), seen.end(), '\n') << "\n";
}

// A job that submits a job: the inner job's supervisor is not a process of the outer job, so
// it outlives it (it is neither marked, nor in the outer cgroup, nor below a task).
class JobsNested : public JobsFixture, public ::testing::WithParamInterface<std::string> {
 protected:
  void TearDown() override {
    JobsFixture::TearDown();
    ::unsetenv("BATCHAI_CONTAINMENT");
  }
};

TEST_P(JobsNested, AJobSubmittedFromInsideAJobOutlivesIt) {
  std::string why;
  if (GetParam() == "cgroup" && !writable_cgroup_parent(&why)) GTEST_SKIP() << "no writable cgroup v2 here: " << why;
  ::setenv("BATCHAI_CONTAINMENT", GetParam().c_str(), 1);
  make_cluster("c1", 1);
  make_cluster("c2", 1);
  const std::string inner = job_file("inner", {{"nodeCount", 1},
                                               {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                                               {"customToolkitSettings", {{"commandLine", "sleep 2; echo inner done"}}}});
  create("outer", {{"nodeCount", 1},
                   {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                   {"customToolkitSettings",
                    {{"commandLine", std::string(BATCHAI_EXE) + " batchai job create " + scope_ + " -n inner -c c2 -f " +
                                         inner + " -o none"}}}});
  EXPECT_EQ(wait_state("outer", {"succeeded", "failed"})["executionState"], "succeeded");
  Json job = wait_state("inner", {"succeeded", "failed"});
  EXPECT_EQ(job["executionState"], "succeeded") << job.dump();
  EXPECT_EQ(read_file(stdouterr_file(home_, "inner", "stdout.txt")), "inner done\n");
}

INSTANTIATE_TEST_SUITE_P(Modes, JobsNested, ::testing::Values("cgroup", "subreaper"),
                         [](const auto& test) { return test.param; });

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* mode : {"cgroup", "subreaper"})
    for (const char* toolkit : {"custom", "mpi"})
      for (const char* end : {"success", "failure", "terminate", "wallclock", "kill_supervisor", "kill_mpirun"})
        if (std::string(end) != "kill_mpirun" || std::string(toolkit) == "mpi") out.push_back({toolkit, end, mode});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ends, JobsContainment, ::testing::ValuesIn(cases()), [](const auto& test) {
  return test.param.mode + "_" + test.param.toolkit + "_" + test.param.end;
});

}  // namespace
}  // namespace batchai::test
