// Watching and reaching into a job: `job file stream` follows a file until the job ends,
// `job node list|exec` reach the nodes the job runs on, and job-level storage mounts
// (--afs-name, --bfs-name, --nfs) put what `storage ... upload` stored where the job looks.
#include <fstream>
#include <thread>

#include "job_harness.hpp"

namespace fs = std::filesystem;

namespace batchai::test {
namespace {

using JobsObserve = JobsFixture;

TEST_F(JobsObserve, FileStreamFollowsTheFileUntilTheJobEnds) {
  make_cluster("c1", 1);
  create("talk", {{"nodeCount", 1},
                  {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                  {"customToolkitSettings", {{"commandLine", "for i in 1 2 3 4 5; do echo line$i; sleep 0.2; done"}}}});
  // Started while the job is queued or running: it must wait for the file, then follow it.
  const auto t0 = std::chrono::steady_clock::now();
  Result r = run("batchai job file stream " + scope_ + " -j talk -f stdout.txt");
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "line1\nline2\nline3\nline4\nline5\n");
  EXPECT_EQ(show("talk")["executionState"], "succeeded");  // it returned because the job ended
  EXPECT_GE(took, std::chrono::milliseconds(800));         // ... not before the last line
  // A finished job's file prints at once.
  EXPECT_EQ(run("batchai job file stream " + scope_ + " -j talk -f stdout.txt").out, r.out);
  // docs/job-runtime.md §4.10.4: a file the finished job never wrote is a warning, not an error.
  Result missing = run("batchai job file stream " + scope_ + " -j talk -f nosuch.txt");
  EXPECT_EQ(missing.code, 0);
  EXPECT_EQ(missing.out, "");
  EXPECT_NE(missing.err.find("The file \"nosuch.txt\" not found for the completed job."), std::string::npos)
      << missing.err;
}

TEST_F(JobsObserve, NodeListAndExecReachTheJobsNodes) {
  make_cluster("c2", 2);
  const auto gate = work_ / "gate";
  create("hold", {{"nodeCount", 2},
                  {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                  {"customToolkitSettings", {{"commandLine", "while [ ! -e " + gate.string() + " ]; do sleep 0.05; done"}}}},
         "c2");
  wait_state("hold", {"running"});
  Json nodes = json("batchai job node list " + scope_ + " -j hold");
  ASSERT_EQ(nodes.size(), 2u) << nodes.dump();
  Json cluster_nodes = json("batchai cluster node list -g rg -w ws -c c2");
  for (const auto& n : nodes) {
    EXPECT_TRUE(n["ipAddress"].is_string());
    EXPECT_TRUE(n["port"].is_number());
    bool in_cluster = false;
    for (const auto& c : cluster_nodes) in_cluster = in_cluster || c["nodeId"] == n["nodeId"];
    EXPECT_TRUE(in_cluster) << n.dump();
  }
  Result table = run("batchai job node list " + scope_ + " -j hold -o table");
  EXPECT_NE(table.out.find(nodes[0]["nodeId"].get<std::string>()), std::string::npos) << table.out;
  // exec runs on the chosen node, in its folder; without --node-id on the job's first node.
  const std::string second = nodes[1]["nodeId"].get<std::string>();
  Result exec = run("batchai job node exec " + scope_ + " -j hold -n " + second + " --exec 'echo on $PWD'");
  EXPECT_EQ(exec.code, 0) << exec.err;
  EXPECT_NE(exec.out.find("on /"), std::string::npos) << exec.out;
  Result first = run("batchai job node exec " + scope_ + " -j hold --exec 'echo on $PWD'");
  EXPECT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.out, exec.out) << "two nodes, two folders";
  Result wrong = run("batchai job node exec " + scope_ + " -j hold -n nosuch --exec true");
  EXPECT_NE(wrong.code, 0);
  EXPECT_NE(wrong.err.find("Cannot find a node with id=nosuch"), std::string::npos) << wrong.err;
  std::ofstream(gate).put('\n');
  EXPECT_EQ(wait_state("hold", {"succeeded", "failed"})["executionState"], "succeeded");
}

TEST_F(JobsObserve, JobLevelStorageMountsSeeUploadedData) {
  make_cluster("c1", 1);
  const std::string acct = " --account-name acct" + std::to_string(::getpid() % 100000);
  const std::string acct_name = acct.substr(std::string(" --account-name ").size());
  ASSERT_EQ(run("storage account create -n " + acct_name + " -g rg --sku Standard_LRS -l eastus").code, 0);
  ASSERT_EQ(run("storage share create -n share1" + acct).code, 0);
  ASSERT_EQ(run("storage container create -n cont1" + acct).code, 0);
  const fs::path source = work_ / "input.txt";
  std::ofstream(source) << "from the share\n";
  ASSERT_EQ(run("storage file upload -s share1 --source " + source.string() + acct).code, 0);
  std::ofstream(source) << "from the container\n";
  ASSERT_EQ(run("storage blob upload -c cont1 -n data/input.txt -f " + source.string() + acct).code, 0);
  Result fs_create = run("batchai file-server create -g rg -w ws -n nfs1 -s Standard_D14 --disk-count 1 "
                         "--disk-size 10 --storage-sku Standard_LRS -u tester -p Secret.123");
  ASSERT_EQ(fs_create.code, 0) << fs_create.err;

  const std::string cmd =
      "cat $AZ_BATCHAI_JOB_MOUNT_ROOT/afs/input.txt $AZ_BATCHAI_JOB_MOUNT_ROOT/bfs/data/input.txt && "
      "echo written > $AZ_BATCHAI_JOB_MOUNT_ROOT/nfs/result.txt";
  Result created = run("batchai job create " + scope_ + " -n mounts -c c1 -f " +
                       job_file("mounts", {{"nodeCount", 1},
                                           {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT/afs"},
                                           {"customToolkitSettings", {{"commandLine", cmd}}}}) +
                       " --afs-name share1 --bfs-name cont1 --nfs nfs1 --storage-account-name " + acct_name);
  ASSERT_EQ(created.code, 0) << created.err;
  Json doc = Json::parse(created.out);
  const Json& volumes = doc["mountVolumes"];
  EXPECT_EQ(volumes["azureFileShares"][0]["relativeMountPath"], "afs") << volumes.dump();
  EXPECT_EQ(volumes["azureBlobFileSystems"][0]["relativeMountPath"], "bfs") << volumes.dump();
  EXPECT_EQ(volumes["fileServers"][0]["relativeMountPath"], "nfs") << volumes.dump();
  Json job = wait_state("mounts", {"succeeded", "failed"});
  ASSERT_EQ(job["executionState"], "succeeded") << job.dump();
  EXPECT_EQ(read_file(output_file("mounts", "stdout.txt")), "from the share\nfrom the container\n");
  // stdouterr went to the share itself: `storage file list` shows the job's folder there.
  Result listed = run("storage file list -s share1 --query \"[].name\" -o tsv" + acct);
  EXPECT_NE(listed.out.find(acct_name.empty() ? "x" : "input.txt"), std::string::npos) << listed.out;
  EXPECT_GT(listed.out.size(), std::string("input.txt\n").size()) << listed.out;
  // What the job wrote on the file server is on the file server for the next job.
  create("reader", {{"nodeCount", 1},
                    {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                    {"mountVolumes", {{"fileServers", {{{"fileServer", {{"id", doc["mountVolumes"]["fileServers"][0]["fileServer"]["id"]}}},
                                                        {"relativeMountPath", "shared"}}}}}},
                    {"customToolkitSettings", {{"commandLine", "cat $AZ_BATCHAI_JOB_MOUNT_ROOT/shared/result.txt"}}}});
  EXPECT_EQ(wait_state("reader", {"succeeded", "failed"})["executionState"], "succeeded");
  EXPECT_EQ(read_file(output_file("reader", "stdout.txt")), "written\n");
}

}  // namespace
}  // namespace batchai::test
