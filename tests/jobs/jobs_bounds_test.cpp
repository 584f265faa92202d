// Job counts and durations at `job create` (issue 13): int32 checked as 64-bit before
// narrowing (processCount 99999999999 started `mpirun -np 1215752191`; nodeCount 2147483648 was
// stored negative), the bounds that follow from the cluster's VM size and the regional quota,
// and maxWallClockTime without wrap-around. Refusals are one ERROR line; the largest values queue.
#include <algorithm>

#include "job_harness.hpp"

namespace batchai::test {
namespace {

class JobsBounds : public JobsFixture {
 protected:
  Json props(const Json& extra) {
    Json p = {{"nodeCount", 1},
              {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
              {"customMpiSettings", {{"commandLine", "true"}}}};
    p.merge_patch(extra);
    return p;
  }
  Result submit(const std::string& name, const Json& extra) {
    return run("batchai job create " + scope_ + " -n " + name + " -c c1 -o json -f " + job_file(name, props(extra)));
  }
  // The one line of a refusal: exit 1, nothing on stdout, no job stored.
  std::string refusal(const Json& extra) {
    Result r = submit("refused", extra);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(run("batchai job show " + scope_ + " -n refused").code, 3);
    return r.err;
  }
};

TEST_F(JobsBounds, CountsAndWallClockAreRangeChecked) {
  make_cluster("c1", 0);  // no nodes: an accepted job only queues
  EXPECT_EQ(refusal({{"customMpiSettings", {{"processCount", 99999999999LL}}}}),
            "ERROR: customMpiSettings.processCount must be at least 1 and at most 2147483647, got 99999999999.\n");
  EXPECT_EQ(refusal({{"nodeCount", 2147483648LL}}), "ERROR: nodeCount must be at least 1 and at most 2147483647, got 2147483648.\n");
  EXPECT_EQ(refusal({{"nodeCount", 4294967297LL}}), "ERROR: nodeCount must be at least 1 and at most 2147483647, got 4294967297.\n");
  EXPECT_EQ(refusal({{"nodeCount", 101}}),
            "ERROR: nodeCount 101 is more than cluster 'c1' can ever have: the regional quota of 100 vCPUs allows at "
            "most 100 nodes of STANDARD_D1 (1 vCPUs each).\n");
  EXPECT_EQ(refusal({{"nodeCount", 2}, {"customMpiSettings", {{"processCount", 3}}}}),
            "ERROR: customMpiSettings.processCount must be at most 2 (nodeCount 2 x 1 vCPUs of STANDARD_D1), got 3.\n");
  EXPECT_EQ(refusal({{"constraints", {{"maxWallClockTime", "P99999999999D"}}}}),
            "ERROR: constraints.maxWallClockTime 'P99999999999D' is longer than the maximum of 36500 days; give a "
            "shorter duration such as \"P7D\" (the default).\n");
  // The largest values of each bound are accepted.
  Result r = submit("largest", {{"nodeCount", 100},
                                {"customMpiSettings", {{"processCount", 100}}},
                                {"constraints", {{"maxWallClockTime", "P36500D"}}}});
  ASSERT_EQ(r.code, 0) << r.err;
  Json job = Json::parse(r.out);
  EXPECT_EQ(job["nodeCount"], 100);
  EXPECT_EQ(job["customMpiSettings"]["processCount"], 100);
  EXPECT_EQ(job["constraints"]["maxWallClockTime"], "36500 days, 0:00:00");
  EXPECT_EQ(show("largest")["executionState"], "queued");
}

TEST_F(JobsBounds, TensorFlowCountsFollowTheVmSize) {
  make_cluster("c1", 0);
  const Json tf = {{"customMpiSettings", nullptr},
                   {"nodeCount", 2},
                   {"tensorFlowSettings", {{"pythonScriptFilePath", "t.py"}, {"workerCount", 3}, {"parameterServerCount", 1}}}};
  EXPECT_EQ(refusal(tf), "ERROR: tensorFlowSettings.workerCount must be at most 2 (nodeCount 2 x 1 vCPUs of STANDARD_D1), got 3.\n");
  Json ps = tf;
  ps["tensorFlowSettings"]["workerCount"] = 2;
  ps["tensorFlowSettings"]["parameterServerCount"] = 3;
  EXPECT_EQ(refusal(ps), "ERROR: tensorFlowSettings.parameterServerCount must be at most 2 (nodeCount 2 x 1 per node), got 3.\n");
  ps["tensorFlowSettings"]["parameterServerCount"] = 2;
  Result r = submit("tf", ps);
  EXPECT_EQ(r.code, 0) << r.err;
}

}  // namespace
}  // namespace batchai::test
