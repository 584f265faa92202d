// Counts and durations of job.json are range-checked where they enter (issue 13): int32 as
// 64-bit before narrowing (2147483648 is no longer stored negative, 4294967297 no longer runs
// on one node), processCount no longer truncated, maxWallClockTime no longer wraps.
#include <gtest/gtest.h>

#include <string>

#include "batchai/common/errors.hpp"
#include "batchai/runtime/job_spec.hpp"

namespace batchai::runtime {
namespace {

JobIdentity identity() {
  JobIdentity id;
  id.subscription = "00000000-0000-0000-0000-000000000000";
  id.resource_group = "rg";
  id.workspace = "ws";
  id.experiment = "exp";
  id.name = "job";
  id.cluster_id = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws/clusters/cl";
  id.creation_time = "2018-06-15T21:43:10.435000+00:00";
  return id;
}

// A custom MPI job with `extra` merged into its properties.
Json job(const Json& extra) {
  Json p = {{"nodeCount", 1}, {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"}, {"customMpiSettings", {{"commandLine", "true"}}}};
  p.merge_patch(extra);
  return {{"properties", p}};
}

std::string error_of(const Json& file, bool schema = true) {
  JobSpecOptions options;
  options.validate_schema = schema;
  try {
    build_job_spec(file, identity(), options);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JobSpecBounds, NodeCountIsInt32AndPositive) {
  EXPECT_EQ(build_job_spec(job({{"nodeCount", 2147483647}}), identity()).document["nodeCount"], 2147483647);
  EXPECT_EQ(error_of(job({{"nodeCount", 2147483648LL}})), "nodeCount must be at least 1 and at most 2147483647, got 2147483648.");
  EXPECT_EQ(error_of(job({{"nodeCount", 4294967297LL}})), "nodeCount must be at least 1 and at most 2147483647, got 4294967297.");
  EXPECT_EQ(error_of(job({{"nodeCount", -1}})), "nodeCount must be at least 1 and at most 2147483647, got -1.");
  // Without the schema check (as the tests of other callers run it), a text is refused too.
  EXPECT_EQ(error_of(job({{"nodeCount", "[parameters('n')]"}}), false),
            "nodeCount must be an integer (at least 1 and at most 2147483647), got \"[parameters('n')]\".");
}

TEST(JobSpecBounds, ProcessCountsAreInt32) {
  const Json largest = build_job_spec(job({{"customMpiSettings", {{"processCount", 2147483647}}}}), identity()).document;
  EXPECT_EQ(largest["customMpiSettings"]["processCount"], 2147483647);
  EXPECT_EQ(error_of(job({{"customMpiSettings", {{"processCount", 99999999999LL}}}})),
            "customMpiSettings.processCount must be at least 1 and at most 2147483647, got 99999999999.");
  EXPECT_EQ(error_of(job({{"customMpiSettings", {{"processCount", 0}}}})),
            "customMpiSettings.processCount must be at least 1 and at most 2147483647, got 0.");
  Json tf = {{"properties",
              {{"nodeCount", 1},
               {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
               {"tensorFlowSettings", {{"pythonScriptFilePath", "t.py"}, {"parameterServerCount", 0}, {"workerCount", 2147483648LL}}}}}};
  EXPECT_EQ(error_of(tf), "tensorFlowSettings.workerCount must be at least 1 and at most 2147483647, got 2147483648.");
  tf["properties"]["tensorFlowSettings"]["workerCount"] = 1;
  EXPECT_EQ(error_of(tf), "(no error)");  // zero parameter servers is allowed
  tf["properties"]["tensorFlowSettings"]["parameterServerCount"] = -1;
  EXPECT_EQ(error_of(tf), "tensorFlowSettings.parameterServerCount must be at least 0 and at most 2147483647, got -1.");
}

TEST(JobSpecBounds, WallClockTimeIsBoundedAndNeverWraps) {
  auto wall = [](const std::string& text) {
    return build_job_spec(job({{"constraints", {{"maxWallClockTime", text}}}}), identity())
        .document["constraints"]["maxWallClockTime"];
  };
  EXPECT_EQ(wall("P36500D"), "36500 days, 0:00:00");
  EXPECT_EQ(wall("36500.00:00:00"), "36500 days, 0:00:00");
  for (const char* text : {"P99999999999D", "P36501D", "99999999999.00:00:00", "PT99999999999999999999H"}) {
    EXPECT_EQ(error_of(job({{"constraints", {{"maxWallClockTime", text}}}})),
              std::string("constraints.maxWallClockTime '") + text +
                  "' is longer than the maximum of 36500 days; give a shorter duration such as \"P7D\" (the default).");
  }
  EXPECT_EQ(error_of(job({{"constraints", {{"maxWallClockTime", 5}}}}), false),
            "constraints.maxWallClockTime must be a duration text such as \"P7D\", got 5.");
}

TEST(JobSpecBounds, SchedulingPriorityIsOneOfThree) {
  EXPECT_EQ(error_of(job({{"schedulingPriority", "high"}}), false), "(no error)");
  EXPECT_EQ(error_of(job({{"schedulingPriority", "urgent"}}), false),
            "schedulingPriority must be one of low, normal, high, got \"urgent\".");
  EXPECT_EQ(error_of(job({{"schedulingPriority", 7}}), false), "schedulingPriority must be one of low, normal, high, got 7.");
}

}  // namespace
}  // namespace batchai::runtime
