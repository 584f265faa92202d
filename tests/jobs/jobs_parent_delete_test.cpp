// Deleting what a running job stands on ends the job, whichever command deletes it: a cluster,
// an experiment, a workspace or a resource group. Each job records its shell's and a background
// child's pid; its supervisor is found as the shell's parent. After the delete: the job's final
// state and error (failed/ClusterDeleted for a cluster, gone with its parent otherwise), every one
// of those pids gone within seconds (by pid, not by name), and the nodes of a cluster that
// survives the delete idle again. Jobs in another workspace or group reach the cluster by ARM id.
#include <sys/types.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include "batchai/common/process_tree.hpp"
#include "job_harness.hpp"

namespace fs = std::filesystem;

namespace batchai::test {
namespace {

struct JobPids {
  pid_t supervisor = 0;
  std::vector<pid_t> job;  // the task's shell and its background child
};

bool alive(pid_t pid) {
  for (const auto& p : list_processes())
    if (p.pid == pid) return p.state != 'Z';
  return false;
}

bool all_gone_within(const JobPids& pids, std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    bool any = alive(pids.supervisor);
    for (pid_t p : pids.job) any = any || alive(p);
    if (!any) return true;
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

class JobsParentDelete : public JobsFixture {
 protected:
  // A job that writes its shell's and child's pids to <work>/<name>.pids and then waits.
  Json pid_job(const std::string& name) {
    const fs::path file = work_ / (name + ".pids");
    const std::string script = "(trap '' TERM; exec sleep 300) </dev/null >/dev/null 2>&1 & echo $$ $! > " +
                               file.string() + ".tmp && mv " + file.string() + ".tmp " + file.string() + "; wait";
    return {{"nodeCount", 1},
            {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
            {"customToolkitSettings", {{"commandLine", script}}}};
  }

  // Creates the job in `scope` on the cluster `cluster` (a name or an ARM id) and waits for its pids.
  JobPids start(const std::string& scope, const std::string& name, const std::string& cluster) {
    JobPids pids;
    Result r = run("batchai job create " + scope + " -n " + name + " -c " + cluster + " -f " + job_file(name, pid_job(name)));
    EXPECT_EQ(r.code, 0) << r.err;
    const fs::path file = work_ / (name + ".pids");
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!fs::exists(file) && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(file);
    pid_t shell = 0, child = 0;
    in >> shell >> child;
    EXPECT_GT(shell, 1) << "job " << name << " never wrote its pids";
    EXPECT_GT(child, 1);
    pids.job = {shell, child};
    for (const auto& p : list_processes())
      if (p.pid == shell) pids.supervisor = p.ppid;
    std::ifstream cmd("/proc/" + std::to_string(pids.supervisor) + "/cmdline");
    std::string text;
    for (std::string word; std::getline(cmd, word, '\0');) text += word + ' ';
    EXPECT_NE(text.find("_supervise"), std::string::npos) << "the shell's parent is not the supervisor: " << text;
    return pids;
  }

  std::string cluster_id(const std::string& scope, const std::string& name) {
    return json("batchai cluster show " + scope + " -n " + name)["id"].get<std::string>();
  }

  void expect_idle(const std::string& scope, const std::string& cluster, int nodes) {
    Json c = json("batchai cluster show " + scope + " -n " + cluster);
    EXPECT_EQ(c["nodeStateCounts"]["idleNodeCount"], nodes) << c.dump();
    EXPECT_EQ(c["nodeStateCounts"]["runningNodeCount"], 0) << c.dump();
  }

  // A job removed with its deleted parent: `job show` gives az's exit code for a missing
  // resource (3) and names the parent.
  void expect_removed(const std::string& job_args, const std::string& message) {
    Result shown = run("batchai job show " + job_args);
    EXPECT_EQ(shown.code, 3);
    EXPECT_NE(shown.err.find(message), std::string::npos) << shown.err;
  }

  void expect_gone(const JobPids& pids) {
    EXPECT_TRUE(all_gone_within(pids, std::chrono::seconds(5)))
        << "supervisor " << pids.supervisor << " or job processes " << pids.job[0] << ", " << pids.job[1]
        << " outlived the delete";
  }
};

TEST_F(JobsParentDelete, ClusterDeleteFailsItsJobsNamingTheCluster) {
  make_cluster("c1", 2);
  const JobPids running = start(scope_, "a", "c1");
  const JobPids other = start(scope_, "b", "c1");
  wait_state("a", {"running"});
  ASSERT_EQ(run("batchai cluster delete -g rg -w ws -n c1 -y").code, 0);
  for (const char* name : {"a", "b"}) {
    Json job = show(name);
    EXPECT_EQ(job["executionState"], "failed") << job.dump();
    const Json& error = job["executionInfo"]["errors"][0];
    EXPECT_EQ(error["code"], "ClusterDeleted") << job.dump();
    EXPECT_NE(error["message"].get<std::string>().find("cluster 'c1' was deleted"), std::string::npos) << job.dump();
  }
  expect_gone(running);
  expect_gone(other);
  // Still failed, not requeued, once the scheduler has run again.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(show("a")["executionState"], "failed");
}

TEST_F(JobsParentDelete, ExperimentDeleteEndsAndRemovesItsJobsAndFreesTheNodes) {
  make_cluster("c1", 1);
  const JobPids pids = start(scope_, "a", "c1");
  ASSERT_EQ(run("batchai experiment delete -g rg -w ws -n exp1 -y").code, 0);
  expect_removed(scope_ + " -n a", "experiment exp1 is not found");
  expect_gone(pids);
  expect_idle("-g rg -w ws", "c1", 1);
}

TEST_F(JobsParentDelete, WorkspaceDeleteEndsItsJobsAndTheJobsOnItsClusters) {
  make_cluster("c1", 1);
  ASSERT_EQ(run("batchai workspace create -g rg -n ws2 -l eastus").code, 0);
  ASSERT_EQ(run("batchai experiment create -g rg -w ws2 -n exp2").code, 0);
  ASSERT_EQ(run("batchai cluster create -g rg -w ws2 -n c2 -s Standard_D1 -t 1 -u tester -p Secret.123").code, 0);
  // "inside": a job of ws2 on ws's cluster; "outside": a job of ws on ws2's cluster.
  const JobPids inside = start("-g rg -w ws2 -e exp2", "inside", cluster_id("-g rg -w ws", "c1"));
  const JobPids outside = start(scope_, "outside", cluster_id("-g rg -w ws2", "c2"));
  ASSERT_EQ(run("batchai workspace delete -g rg -n ws2 -y").code, 0);
  expect_removed("-g rg -w ws2 -e exp2 -n inside", "workspace ws2 is not found");
  Json job = show("outside");
  EXPECT_EQ(job["executionState"], "failed") << job.dump();
  EXPECT_EQ(job["executionInfo"]["errors"][0]["code"], "ClusterDeleted") << job.dump();
  EXPECT_NE(job["executionInfo"]["errors"][0]["message"].get<std::string>().find(
                "cluster 'c2' was deleted with its workspace 'ws2'"),
            std::string::npos)
      << job.dump();
  expect_gone(inside);
  expect_gone(outside);
  expect_idle("-g rg -w ws", "c1", 1);
}

TEST_F(JobsParentDelete, GroupDeleteEndsItsJobsAndFreesClustersElsewhere) {
  make_cluster("c1", 1);
  ASSERT_EQ(run("group create -n rg2 -l eastus").code, 0);
  ASSERT_EQ(run("batchai workspace create -g rg2 -n ws2 -l eastus").code, 0);
  ASSERT_EQ(run("batchai experiment create -g rg2 -w ws2 -n exp2").code, 0);
  const JobPids pids = start("-g rg2 -w ws2 -e exp2", "a", cluster_id("-g rg -w ws", "c1"));
  ASSERT_EQ(run("group delete -n rg2 -y").code, 0);
  expect_removed("-g rg2 -w ws2 -e exp2 -n a", "workspace ws2 is not found");  // went with its group
  expect_gone(pids);
  expect_idle("-g rg -w ws", "c1", 1);
}

}  // namespace
}  // namespace batchai::test
