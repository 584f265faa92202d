// Jobs that run to the end: a custom job, a 2-node customMpiSettings job, preparation failure,
// a queue on a 1-node cluster served without further commands, `job wait` exit codes.
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "job_harness.hpp"

namespace fs = std::filesystem;

namespace batchai::test {
namespace {

using JobsRun = JobsFixture;

TEST_F(JobsRun, CustomJobWritesStdoutAndOutputDirectory) {
  make_cluster("c1", 1);
  Json job = create("hello", {{"nodeCount", 1},
                              {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                              {"outputDirectories", {{{"id", "OUTPUT"}, {"pathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT/out"},
                                                      {"pathSuffix", "output"}}}},
                              {"customToolkitSettings", {{"commandLine", "echo hi | tee $AZ_BATCHAI_OUTPUT_OUTPUT/result.txt"}}}});
  EXPECT_EQ(job["executionState"], "queued");
  EXPECT_EQ(job["toolType"], "custom");
  job = wait_state("hello", {"succeeded", "failed"});
  EXPECT_EQ(job["executionState"], "succeeded") << job.dump();
  EXPECT_EQ(job["executionInfo"]["exitCode"], 0);
  EXPECT_TRUE(job["executionInfo"]["errors"].is_null());
  EXPECT_EQ(read_file(output_file("hello", "stdout.txt")), "hi\n");
  EXPECT_EQ(read_file(output_file("hello", "stderr.txt")), "");
  EXPECT_EQ(read_file(output_file("hello", "result.txt", "OUTPUT")), "hi\n");
  Json files = json("batchai job file list " + scope_ + " -j hello");
  ASSERT_GE(files.size(), 3u);
  EXPECT_EQ(files[0]["name"], "execution.log");  // name order
  Result table = run("batchai job list " + scope_ + " -o table");
  EXPECT_NE(table.out.find("succeeded"), std::string::npos) << table.out;
  // Node counters are back to idle once the job is done.
  Json cluster = json("batchai cluster show -g rg -w ws -n c1");
  EXPECT_EQ(cluster["nodeStateCounts"]["runningNodeCount"], 0);
  EXPECT_EQ(run("batchai job wait " + scope_ + " -n hello --interval 0").code, 0);
}

// A node carries the batchai that runs it (§4.8): a custom job's `batchai train` is this build's
// executable, found on the node's PATH, though the submitter's PATH never reaches the job.
TEST_F(JobsRun, CustomJobFindsThisBatchaiOnItsPath) {
  make_cluster("c1", 1);
  create("train", {{"nodeCount", 1},
                   {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                   {"customToolkitSettings",
                    {{"commandLine",
                      "command -v batchai && batchai train --synthetic 64 --epochs 1 --steps-per-epoch 2 "
                      "--batch-size 8 --validation-images 16 --backend cpu --threads 1 --dir $AZ_BATCHAI_JOB_TEMP/t"}}}});
  Json job = wait_state("train", {"succeeded", "failed"}, std::chrono::seconds(120));
  const std::string out = read_file(output_file("train", "stdout.txt"));
  EXPECT_EQ(job["executionState"], "succeeded") << job.dump() << "\n" << out << read_file(output_file("train", "stderr.txt"));
  EXPECT_EQ(out.rfind(fs::path(BATCHAI_EXE).lexically_normal().string() + "\n", 0), 0u) << out;
  EXPECT_NE(out.find("Test accuracy: "), std::string::npos) << out;
}

TEST_F(JobsRun, TwoNodeMpiJobRanksWriteRankAndNode) {
  make_cluster("c2", 2);
  const std::string out = "$AZ_BATCHAI_SHARED_JOB_TEMP/ranks";  // one folder for both nodes
  create("mpi", {{"nodeCount", 2},
                 {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                 {"outputDirectories", {{{"id", "R"}, {"pathPrefix", out}}}},
                 {"customMpiSettings",
                  {{"commandLine", "echo \"$OMPI_COMM_WORLD_RANK $AZ_BATCHAI_JOB_TEMP\" > "
                                   "$AZ_BATCHAI_OUTPUT_R/rank-$OMPI_COMM_WORLD_RANK.txt"},
                   {"processCount", 2}}}},
         "c2");
  Json job = wait_state("mpi", {"succeeded", "failed"}, std::chrono::seconds(60));
  ASSERT_EQ(job["executionState"], "succeeded") << job.dump() << read_file(output_file("mpi", "stderr.txt"));
  std::set<std::string> nodes;
  for (int rank = 0; rank < 2; ++rank) {
    std::string text = read_file(output_file("mpi", "rank-" + std::to_string(rank) + ".txt", "R"));
    EXPECT_EQ(text.substr(0, 2), std::to_string(rank) + " ") << text;
    nodes.insert(text.substr(2));
  }
  EXPECT_EQ(nodes.size(), 2u) << "each rank ran in its own node's folder";
}

TEST_F(JobsRun, PreparationFailureFailsTheJobWithItsExitCode) {
  make_cluster("c1", 1);
  create("prep", {{"nodeCount", 1},
                  {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                  {"jobPreparation", {{"commandLine", "echo preparing; exit 3"}}},
                  {"customToolkitSettings", {{"commandLine", "touch " + (work_ / "main-ran").string()}}}});
  Json job = wait_state("prep", {"succeeded", "failed"});
  EXPECT_EQ(job["executionState"], "failed");
  EXPECT_EQ(job["executionInfo"]["errors"][0]["code"], "JobPreparationFailed");
  EXPECT_EQ(job["executionInfo"]["exitCode"], 3);
  EXPECT_FALSE(fs::exists(work_ / "main-ran"));
  Result wait = run("batchai job wait " + scope_ + " -n prep --interval 0");
  EXPECT_EQ(wait.code, 3);
  EXPECT_NE(wait.err.find("Job failed with exit code 3"), std::string::npos) << wait.err;
}

TEST_F(JobsRun, JobWaitExitsWithTheJobsExitCode) {
  make_cluster("c1", 1);
  create("seven", {{"nodeCount", 1},
                   {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                   {"customToolkitSettings", {{"commandLine", "exit 7"}}}});
  Result wait = run("batchai job wait " + scope_ + " -n seven --interval 0");
  EXPECT_EQ(wait.code, 7) << wait.err;
  EXPECT_NE(wait.err.find("Job submitted at"), std::string::npos);
  EXPECT_NE(wait.err.find("Job state: failed"), std::string::npos) << wait.err;
  Json job = show("seven");
  EXPECT_EQ(job["executionInfo"]["errors"][0]["code"], "JobFailed");
}

TEST_F(JobsRun, ListTableReadsOnlyTheTableFieldsYetMatchesShow) {
  // `job list -o table` reads projected documents (kJobTableFields); every column must still
  // equal what the table of the full document (`job show -o table`) says.
  make_cluster("c1", 1);
  create("seven", {{"nodeCount", 1},
                   {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                   {"customToolkitSettings", {{"commandLine", "exit 7"}}}});
  wait_state("seven", {"failed"});
  create("later", {{"nodeCount", 1},
                   {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                   {"customToolkitSettings", {{"commandLine", "true"}}}});
  wait_state("later", {"succeeded"});  // settled: list and show must see the same state
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  };
  const auto list = lines(run("batchai job list " + scope_ + " -o table").out);
  ASSERT_EQ(list.size(), 4u);
  for (const std::string name : {"seven", "later"}) {
    const auto show = lines(run("batchai job show " + scope_ + " -n " + name + " -o table").out);
    ASSERT_EQ(show.size(), 3u);
    // Column widths follow the longest cell, so compare the cells.
    auto cells = [](const std::string& line) {
      std::vector<std::string> out;
      std::istringstream in(line);
      for (std::string cell; in >> cell;) out.push_back(cell);
      return out;
    };
    const auto row = list[name == std::string("seven") ? 2 : 3];
    EXPECT_EQ(cells(row), cells(show[2])) << row << "\n" << show[2];
  }
  EXPECT_NE(list[2].find(" 7"), std::string::npos) << list[2];
}

TEST_F(JobsRun, QueueOnOneNodeRunsJobsOneAfterAnother) {
  make_cluster("c1", 1);
  const fs::path log = work_ / "order.log";
  for (int i = 0; i < 3; ++i) {
    const std::string cmd = "echo start" + std::to_string(i) + " >> " + log.string() + "; sleep 0.3; echo end" +
                            std::to_string(i) + " >> " + log.string();
    create("q" + std::to_string(i), {{"nodeCount", 1},
                                     {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                                     {"customToolkitSettings", {{"commandLine", cmd}}}});
  }
  // No command runs while we wait: the supervisors alone move the queue.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (read_file(log).find("end2") == std::string::npos && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(read_file(log), "start0\nend0\nstart1\nend1\nstart2\nend2\n");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(wait_state("q" + std::to_string(i), {"succeeded", "failed"})["executionState"], "succeeded");
}

TEST_F(JobsRun, CreateMessages) {
  make_cluster("c1", 0);
  Json props = {{"nodeCount", 1}, {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                {"customToolkitSettings", {{"commandLine", "true"}}}};
  create("dup", props);
  Result again = run("batchai job create " + scope_ + " -n dup -c c1 -f " + job_file("dup2", props));
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("A job with given name, experiment, workspace and resource group already exists."),
            std::string::npos) << again.err;
  Result no_cluster = run("batchai job create " + scope_ + " -n j2 -c nope -f " + job_file("j2", props));
  EXPECT_NE(no_cluster.err.find("The specified managed compute cluster is not found"), std::string::npos) << no_cluster.err;
  Result no_exp = run("batchai job create -g rg -w ws -e nope -n j3 -c c1 -f " + job_file("j3", props));
  EXPECT_NE(no_exp.err.find("The specified experiment nope is not found"), std::string::npos) << no_exp.err;
  Json bad = props;
  bad["nodeCount"] = "two";
  Result schema = run("batchai job create " + scope_ + " -n j4 -c c1 -f " + job_file("j4", bad));
  EXPECT_EQ(schema.code, 1);
  EXPECT_NE(schema.err.find("nodeCount"), std::string::npos) << schema.err;
  Result missing = run("batchai job show " + scope_ + " -n ghost");
  EXPECT_EQ(missing.code, 3);
  EXPECT_NE(missing.err.find("The specified job ghost is not found"), std::string::npos);
}

}  // namespace
}  // namespace batchai::test
