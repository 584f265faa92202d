// Jobs on clusters that change under them, with no command but the change itself: a manual
// cluster resized below a running job requeues it (nodeDeallocationOption requeue, what
// `cluster resize` sets) and runs it again once nodes are back; an auto-scale cluster grows for
// a queued job and shrinks to its minimum once the work is done.
#include <fstream>
#include <thread>

#include "job_harness.hpp"

namespace batchai::test {
namespace {

class JobsClusterChanges : public JobsFixture {
 protected:
  // Polls `cluster show` until `query` (a JMESPath over it, printed as tsv: one value per line)
  // reads `expected`.
  bool cluster_reaches(const std::string& cluster, const std::string& query, const std::string& expected);
};

bool JobsClusterChanges::cluster_reaches(const std::string& cluster, const std::string& query,
                                         const std::string& expected) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    if (run("batchai cluster show -g rg -w ws -n " + cluster + " --query \"" + query + "\" -o tsv").out ==
        expected + "\n")
      return true;
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

TEST_F(JobsClusterChanges, ResizeBelowARunningJobRequeuesItAndItRunsAgain) {
  make_cluster("c2", 2);
  const auto starts = work_ / "starts.log";
  // The first run blocks; the second (after the requeue) finishes.
  const std::string cmd = "echo start >> " + starts.string() + "; [ $(wc -l < " + starts.string() +
                          ") -ge 2 ] && exit 0; exec -a " + marker_ + " sleep 300";
  create("big", {{"nodeCount", 2},
                 {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                 {"customToolkitSettings", {{"commandLine", cmd}}}},
         "c2");
  wait_state("big", {"running"});
  // Seen once is enough: a second look can catch the shell mid-exec, its cmdline empty for a moment.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool seen = false;
  while (!(seen = count_processes(marker_) > 0) && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(seen);

  ASSERT_EQ(run("batchai cluster resize -g rg -w ws -n c2 -t 1").code, 0);
  Json job = wait_state("big", {"queued"});
  EXPECT_EQ(job["executionState"], "queued");
  EXPECT_TRUE(job["executionInfo"].is_null()) << job.dump();
  EXPECT_TRUE(no_processes_within(marker_, std::chrono::seconds(5)));  // the first run is gone
  EXPECT_TRUE(cluster_reaches("c2", "[allocationState, currentNodeCount]", "steady\n1"));
  // One node cannot hold it: it stays queued ...
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(show("big")["executionState"], "queued");
  // ... until the cluster has two again; then it runs (a second time) to the end.
  ASSERT_EQ(run("batchai cluster resize -g rg -w ws -n c2 -t 2").code, 0);
  job = wait_state("big", {"succeeded", "failed"});
  EXPECT_EQ(job["executionState"], "succeeded") << job.dump();
  EXPECT_EQ(read_file(starts), "start\nstart\n");
}

TEST_F(JobsClusterChanges, AutoScaleGrowsForQueuedJobsAndShrinksWhenIdle) {
  ASSERT_EQ(run("batchai cluster create -g rg -w ws -n auto -s Standard_D1 --min 0 --max 3 -u tester -p Secret.123")
                .code,
            0);
  EXPECT_TRUE(cluster_reaches("auto", "[scaleSettings.autoScale.maximumNodeCount, currentNodeCount]", "3\n0"));
  const auto gate = work_ / "gate";
  // Both ranks wait for the gate, so the test can look at the grown cluster while the job runs.
  create("two", {{"nodeCount", 2},
                 {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                 {"customToolkitSettings", {{"commandLine", "while [ ! -e " + gate.string() + " ]; do sleep 0.05; done"}}}},
         "auto");
  Json job = wait_state("two", {"running"});
  EXPECT_EQ(job["executionState"], "running");
  EXPECT_TRUE(cluster_reaches("auto", "[currentNodeCount, nodeStateCounts.runningNodeCount]", "2\n2"));
  std::ofstream(gate).put('\n');
  EXPECT_EQ(wait_state("two", {"succeeded", "failed"})["executionState"], "succeeded");
  // No work left: back to the minimum, without any command but the observing `cluster show`.
  EXPECT_TRUE(cluster_reaches("auto", "[allocationState, currentNodeCount]", "steady\n0"));
}

}  // namespace
}  // namespace batchai::test
