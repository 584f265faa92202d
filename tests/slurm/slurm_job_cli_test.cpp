// Jobs on a Slurm-backed cluster through the built executable, against the private Slurm of the
// fixture "slurm" (3 nodes, partition "batchai"): docs/slurm.md, "Jobs on Slurm clusters".
// Each test makes its own home and cluster; the Slurm is shared, so tests run one at a time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "batchai/common/process.hpp"
#include "cli/cli_harness.hpp"
#include "slurm_test_util.hpp"

namespace batchai::cli::testing {
namespace {
using namespace std::chrono_literals;
using nlohmann::json;

using slurm_testing::output_of;
using slurm_testing::wait_for_idle_partition;

class SlurmJobs : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = {{"SLURM_CONF", slurm_testing::slurm_conf().string()}};
    wait_for_idle_partition();
    ASSERT_EQ(run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
    ASSERT_EQ(run({"workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus"}).exit_code, 0);
    ASSERT_EQ(run({"experiment", "create", "-g", "rg", "-w", "ws", "-n", "exp"}).exit_code, 0);
  }
  CliResult run(const std::vector<std::string>& args) const { return cli_.run(args, env_); }
  void make_cluster(int target) {
    CliResult c = run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "sc", "-s", "Standard_D3", "-t",
                       std::to_string(target), "-u", "alice", "-p", "secret", "--slurm-partition", "batchai"});
    ASSERT_EQ(c.exit_code, 0) << c.err;
  }
  CliResult create_job(const std::string& name, const json& properties) const {
    const auto file = cli_.write_file(name + ".json", json{{"properties", properties}}.dump());
    return run({"job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", name, "-c", "sc", "-f", file.string()});
  }
  json show(const std::string& name) const {
    CliResult r = run({"job", "show", "-g", "rg", "-w", "ws", "-e", "exp", "-n", name, "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? r.json() : json::object();
  }
  // Polls `job show` until the job's state is one of `states`; returns the document.
  json wait_for(const std::string& name, const std::set<std::string>& states, std::chrono::seconds limit = 60s) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    json doc;
    do {
      doc = show(name);
      if (states.count(doc.value("executionState", ""))) return doc;
      std::this_thread::sleep_for(250ms);
    } while (std::chrono::steady_clock::now() < deadline);
    ADD_FAILURE() << "job " << name << " did not reach the state asked for: " << doc.dump();
    return doc;
  }
  std::string stream(const std::string& name, const std::string& file) const {
    CliResult r = run({"job", "file", "stream", "-g", "rg", "-w", "ws", "-e", "exp", "-j", name, "-f", file});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  static json custom(const std::string& command, int nodes = 1) {
    return {{"nodeCount", nodes},
            {"customToolkitSettings", {{"commandLine", command}}},
            {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT/out"}};
  }
  // Slurm's word on the batchai job `name` while Slurm queues or runs it: "state|nodes|comment".
  static std::string squeue_line(const std::string& name) {
    return output_of({"squeue", "-h", "-p", "batchai", "--name=" + name, "-o", "%T|%D|%k"});
  }

  CliHarness cli_;
  std::map<std::string, std::string> env_;
};

TEST_F(SlurmJobs, CustomJobRunsOnTwoOfThreeNodesWithPreparationOnEach) {
  make_cluster(3);
  json props = custom("echo master $SLURMD_NODENAME; srun -l printenv SLURMD_NODENAME | sort", 2);
  props["jobPreparation"] = {{"commandLine", "echo prepared $SLURMD_NODENAME"}};
  CliResult created = create_job("two", props);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  json doc = wait_for("two", {"succeeded", "failed"});
  ASSERT_EQ(doc["executionState"], "succeeded") << doc.dump();
  EXPECT_EQ(doc["executionInfo"]["exitCode"], 0);
  const std::string out = stream("two", "stdout.txt");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("0: (node[0-9])\n1: (node[0-9])\n"))) << out;
  EXPECT_NE(m[1], m[2]) << out;  // two different SLURMD_NODENAMEs
  EXPECT_NE(out.find("master " + m[1].str()), std::string::npos) << out;
  // The preparation ran on both nodes, each in its own output file.
  for (const std::string& node : {m[1].str(), m[2].str()})
    EXPECT_EQ(stream("two", "stdout-job_prep-" + node + ".txt"), "prepared " + node + "\n");
  CliResult nodes = run({"job", "node", "list", "-g", "rg", "-w", "ws", "-e", "exp", "-j", "two", "-o", "json"});
  EXPECT_EQ(nodes.exit_code, 0);
  EXPECT_TRUE(nodes.json().empty());  // only while the job runs
}

TEST_F(SlurmJobs, ExitCodeAndErrorComeBackFromSlurm) {
  make_cluster(1);
  ASSERT_EQ(create_job("fails", custom("echo about to fail; exit 3")).exit_code, 0);
  json doc = wait_for("fails", {"succeeded", "failed"});
  EXPECT_EQ(doc["executionState"], "failed");
  EXPECT_EQ(doc["executionInfo"]["exitCode"], 3);
  EXPECT_EQ(doc["executionInfo"]["errors"][0]["code"], "JobFailed") << doc.dump();
  EXPECT_EQ(stream("fails", "stdout.txt"), "about to fail\n");
}

TEST_F(SlurmJobs, MpiJobPlacesItsRanksOnBothNodes) {
  make_cluster(2);
  json props = {{"nodeCount", 2},
                {"customMpiSettings",
                 {{"commandLine", "bash -c 'echo rank $OMPI_COMM_WORLD_RANK on $SLURMD_NODENAME'"}, {"processCount", 4}}},
                // All fake nodes share one host name: Open MPI's shared memory would mix them up.
                {"environmentVariables",
                 {{{"name", "OMPI_MCA_btl"}, {"value", "self,tcp"}}, {{"name", "OMPI_MCA_btl_tcp_if_include"}, {"value", "lo"}}}},
                {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT/out"}};
  ASSERT_EQ(create_job("mpi", props).exit_code, 0);
  json doc = wait_for("mpi", {"succeeded", "failed"});
  ASSERT_EQ(doc["executionState"], "succeeded") << doc.dump() << stream("mpi", "stderr.txt");
  const std::string out = stream("mpi", "stdout.txt");
  std::map<int, std::string> node_of;
  std::regex line("rank ([0-9]) on (node[0-9])");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator(); ++it)
    node_of[std::stoi((*it)[1])] = (*it)[2];
  ASSERT_EQ(node_of.size(), 4u) << out;
  EXPECT_EQ(node_of[0], node_of[1]) << out;  // ranks 0,1 on the master, 2,3 on the other node
  EXPECT_EQ(node_of[2], node_of[3]) << out;
  EXPECT_NE(node_of[0], node_of[2]) << out;
}

TEST_F(SlurmJobs, TrainerRunsAcrossTwoNodes) {
  make_cluster(2);
  json props = {{"nodeCount", 2},
                {"horovodSettings",
                 {{"pythonScriptFilePath", "batchai-train"},
                  {"commandLineArgs",
                   "--synthetic 64 --epochs 1 --steps-per-epoch 4 --validation-images 32 --batch-size 16 --backend cpu "
                   "--threads 1 --dir $AZ_BATCHAI_OUTPUT_MODEL"}}},
                {"outputDirectories", {{{"id", "MODEL"}, {"pathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT/out"}}}},
                {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT/out"}};
  ASSERT_EQ(create_job("train", props).exit_code, 0);
  json doc = wait_for("train", {"succeeded", "failed"}, 120s);
  ASSERT_EQ(doc["executionState"], "succeeded") << doc.dump() << stream("train", "stderr.txt");
  EXPECT_NE(stream("train", "stdout.txt").find("Test accuracy"), std::string::npos);
  CliResult files = run({"job", "file", "list", "-g", "rg", "-w", "ws", "-e", "exp", "-j", "train", "-d", "MODEL",
                         "-p", "saved_models", "-o", "json"});
  ASSERT_EQ(files.exit_code, 0) << files.err;
  ASSERT_EQ(files.json().size(), 1u) << files.out;
  EXPECT_EQ(files.json()[0]["name"], "keras_cifar10_trained_model.h5");
  EXPECT_GT(files.json()[0]["contentLength"].get<long>(), 1000);
}

// Another user's job holds every node; batchai's three jobs wait in Slurm's queue and start in
// schedulingPriority order (sbatch --nice), whatever order they were created in.
TEST_F(SlurmJobs, PriorityOrderBehindAnotherUsersJob) {
  if (::geteuid() != 0) GTEST_SKIP() << "a raised priority (negative nice) needs a Slurm operator; CI runs as root";
  make_cluster(9);
  // The other user's job holds the nodes until the test lets it go (at most a minute), however
  // long the three creates take on a loaded machine.
  const auto hold = cli_.write_file("blocker-holds", "");
  const std::string blocker =
      output_of({"sbatch", "--parsable", "-p", "batchai", "-N", "3", "--exclusive", "-o", "/dev/null", "--wrap",
                 "for i in $(seq 300); do [ -e " + hold.string() + " ] || exit 0; sleep 0.2; done"});
  ASSERT_FALSE(blocker.empty());
  // Until it runs it is only another pending job, and "high" (a negative nice) would go before it.
  auto blocker_runs = [&] { return output_of({"squeue", "-h", "-j", blocker, "-o", "%T"}) == "RUNNING\n"; };
  bool running = blocker_runs();
  for (int i = 0; i < 300 && !running; ++i) {
    std::this_thread::sleep_for(100ms);
    running = blocker_runs();
  }
  ASSERT_TRUE(running) << "the other user's job never started: "
                       << output_of({"squeue", "-h", "-j", blocker, "-o", "%T %r"})
                       << output_of({"sinfo", "-h", "-N", "-p", "batchai", "-o", "%N|%T|%E"});
  for (const std::string priority : {"low", "normal", "high"}) {
    json props = custom("sleep 1", 3);
    props["schedulingPriority"] = priority;
    ASSERT_EQ(create_job(priority, props).exit_code, 0);
  }
  EXPECT_EQ(show("high")["executionState"], "queued");
  std::filesystem::remove(hold);
  std::map<std::string, std::string> start;
  for (const std::string priority : {"low", "normal", "high"}) {
    json doc = wait_for(priority, {"succeeded", "failed"}, 90s);
    EXPECT_EQ(doc["executionState"], "succeeded") << doc.dump();
    start[priority] = doc["executionInfo"]["startTime"].get<std::string>();
  }
  EXPECT_LT(start["high"], start["normal"]);
  EXPECT_LT(start["normal"], start["low"]);
}

TEST_F(SlurmJobs, TerminateCancelsTheSlurmJobAndItsProcesses) {
  make_cluster(2);
  const std::string token = "batchai-terminate-" + std::to_string(::getpid());
  ASSERT_EQ(create_job("long", custom("exec -a " + token + " sleep 300", 2)).exit_code, 0);
  wait_for("long", {"running"});
  // Slurm's own view: running on 2 nodes, the job's key and id in the comment.
  const std::string line = squeue_line("long");
  EXPECT_EQ(line.rfind("RUNNING|2|batchai job ", 0), 0u) << line;
  EXPECT_NE(line.find("/experiments/exp/jobs/long"), std::string::npos) << line;
  for (int i = 0; i < 50 && output_of({"pgrep", "-f", token}).empty(); ++i) std::this_thread::sleep_for(100ms);
  ASSERT_FALSE(output_of({"pgrep", "-f", token}).empty()) << "the job's process never started";
  // While it runs, `job node list` shows its two nodes at the NodeAddr slurm.conf gives them.
  CliResult nodes = run({"job", "node", "list", "-g", "rg", "-w", "ws", "-e", "exp", "-j", "long", "-o", "json"});
  ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
  ASSERT_EQ(nodes.json().size(), 2u) << nodes.out;
  for (const auto& n : nodes.json()) {
    EXPECT_EQ(n["ipAddress"], slurm_testing::configured_node_addr()) << n.dump();
    EXPECT_EQ(n["nodeId"].get<std::string>().rfind("node", 0), 0u) << n.dump();
  }
  CliResult t = run({"job", "terminate", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "long", "-y"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  json doc = show("long");
  EXPECT_EQ(doc["executionState"], "failed");
  EXPECT_EQ(doc["executionInfo"]["errors"][0]["code"], "JobTerminated") << doc.dump();
  EXPECT_EQ(squeue_line("long"), "");
  EXPECT_EQ(output_of({"pgrep", "-f", token}), "");  // nothing of the job outlives it
}

// `cluster node exec` and `job node exec` run through srun on the node asked for: on an idle node
// as a one-node step of its own, on a running job's node as a step of that job's allocation; in
// the node's folder either way. -L and unknown nodes are refused, and a job that does not run
// has no node to run on.
TEST_F(SlurmJobs, NodeExecRunsOnTheNodeThroughSrun) {
  make_cluster(3);
  const std::vector<std::string> where = {"-g", "rg", "-w", "ws"};
  auto args = [&](std::vector<std::string> head, std::vector<std::string> tail) {
    head.insert(head.end(), where.begin(), where.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  CliResult idle = run(args({"cluster", "node", "exec"},
                            {"-c", "sc", "-n", "node3", "--exec", "echo at $SLURMD_NODENAME in $PWD"}));
  ASSERT_EQ(idle.exit_code, 0) << idle.err;
  EXPECT_TRUE(std::regex_search(idle.out, std::regex("^at node3 in /.*/nodes/node3\n$"))) << idle.out;
  CliResult ghost = run(args({"cluster", "node", "exec"}, {"-c", "sc", "-n", "node9", "--exec", "true"}));
  EXPECT_NE(ghost.exit_code, 0);
  EXPECT_NE(ghost.err.find("Cannot find a node with id=node9"), std::string::npos) << ghost.err;
  CliResult forward = run(args({"cluster", "node", "exec"}, {"-c", "sc", "-L", "8080:localhost:80", "--exec", "true"}));
  EXPECT_NE(forward.exit_code, 0);
  EXPECT_NE(forward.err.find("ssh -L"), std::string::npos) << forward.err;

  ASSERT_EQ(create_job("held", custom("sleep 300", 2)).exit_code, 0);
  wait_for("held", {"running"});
  CliResult nodes = run(args({"job", "node", "list"}, {"-e", "exp", "-j", "held", "-o", "json"}));
  ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
  ASSERT_EQ(nodes.json().size(), 2u) << nodes.out;
  const std::string second = nodes.json()[1]["nodeId"];
  CliResult in_job = run(args({"job", "node", "exec"},
                              {"-e", "exp", "-j", "held", "-n", second, "--exec",
                               "echo at $SLURMD_NODENAME job $SLURM_JOB_ID in $PWD"}));
  ASSERT_EQ(in_job.exit_code, 0) << in_job.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(in_job.out, m, std::regex("^at " + second + " job ([0-9]+) in /.*/nodes/" + second + "\n$")))
      << in_job.out;
  // The step ran inside the job's own allocation: the id is the one Slurm gave the job.
  EXPECT_NE(output_of({"squeue", "-h", "-j", m[1].str(), "-o", "%k"}).find("/experiments/exp/jobs/held"),
            std::string::npos);
  ASSERT_EQ(run(args({"job", "terminate"}, {"-e", "exp", "-n", "held", "-y"})).exit_code, 0);
  CliResult after = run(args({"job", "node", "exec"}, {"-e", "exp", "-j", "held", "--exec", "true"}));
  EXPECT_NE(after.exit_code, 0);
  EXPECT_NE(after.err.find("No nodes available"), std::string::npos) << after.err;
}

// A GPU VM size on a partition whose nodes announce GPUs (the fixture's: 2 each): sbatch asks
// each node for the VM size's GPUs (--gres=gpu:1 for NC6) and the job's nodes see 1 GPU each.
TEST_F(SlurmJobs, GpuVmSizeAsksSlurmForGres) {
  CliResult c = run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "sc", "-s", "Standard_NC6", "-t", "2", "-u",
                     "alice", "-p", "secret", "--slurm-partition", "batchai"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.err.find("run without GPUs"), std::string::npos) << c.err;
  ASSERT_EQ(create_job("gpus", custom("echo gpus=$AZ_BATCHAI_NUM_GPUS; scontrol show job $SLURM_JOB_ID | "
                                      "grep -o 'TresPerNode=[^ ]*'; sleep 1",
                                      2))
                .exit_code,
            0);
  json doc = wait_for("gpus", {"succeeded", "failed"});
  ASSERT_EQ(doc["executionState"], "succeeded") << doc.dump() << stream("gpus", "stderr.txt");
  EXPECT_EQ(stream("gpus", "stdout.txt"), "gpus=1\nTresPerNode=gres:gpu:1\n");
  // A VM size with more GPUs than any node announces: no --gres (Slurm would refuse it), a warning.
  CliResult big = run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "big", "-s", "Standard_NC24", "-t", "1", "-u",
                       "alice", "-p", "secret", "--slurm-partition", "batchai"});
  ASSERT_EQ(big.exit_code, 0) << big.err;
  EXPECT_NE(big.err.find("jobs on cluster 'big' run without GPUs"), std::string::npos) << big.err;
}

TEST_F(SlurmJobs, WallClockTimeEndsTheJob) {
  make_cluster(1);
  json props = custom("sleep 120");
  props["constraints"] = {{"maxWallClockTime", "PT3S"}};
  ASSERT_EQ(create_job("slow", props).exit_code, 0);
  const auto began = std::chrono::steady_clock::now();
  json doc = wait_for("slow", {"succeeded", "failed"}, 60s);
  EXPECT_EQ(doc["executionState"], "failed");
  EXPECT_EQ(doc["executionInfo"]["errors"][0]["code"], "JobTimedOut") << doc.dump();
  EXPECT_LT(std::chrono::steady_clock::now() - began, 40s);
}

// docs/slurm.md: jobs are submitted --no-requeue, so a node lost under a job fails it (NodeFailed)
// and it never runs twice.
TEST_F(SlurmJobs, NodeTakenDownMidJobFailsTheJob) {
  make_cluster(2);
  ASSERT_EQ(create_job("lost", custom("sleep 120", 2)).exit_code, 0);
  wait_for("lost", {"running"});
  std::string nodes;
  for (int i = 0; i < 50 && nodes.find(',') == std::string::npos && nodes.find('[') == std::string::npos; ++i) {
    nodes = output_of({"squeue", "-h", "--name=lost", "-o", "%N"});
    std::this_thread::sleep_for(100ms);
  }
  std::smatch m;
  ASSERT_TRUE(std::regex_search(nodes, m, std::regex("node\\[?([0-9])[-,]([0-9])"))) << nodes;
  const std::string second = "node" + m[2].str();
  slurm_testing::scontrol({"update", "nodename=" + second, "state=down", "reason=batchai-test"});
  json doc = wait_for("lost", {"succeeded", "failed"}, 60s);
  EXPECT_EQ(doc["executionState"], "failed");
  EXPECT_EQ(doc["executionInfo"]["errors"][0]["code"], "NodeFailed") << doc.dump();
  output_of({"scontrol", "update", "nodename=" + second, "state=resume"});  // ReturnToService may have done it
  wait_for_idle_partition();
}

// batchai has no daemon: the job's Slurm id is in the store, so a later command, in a process
// that did not submit it, reads how it ended from Slurm's completion record.
TEST_F(SlurmJobs, AFreshProcessReadsTheEndFromSlurm) {
  make_cluster(1);
  ASSERT_EQ(create_job("later", custom("sleep 2; exit 7")).exit_code, 0);
  // Wait for Slurm itself, without any batchai command in between.
  bool seen = false;
  for (int i = 0; i < 300; ++i) {
    const std::string line = squeue_line("later");
    if (line.rfind("RUNNING", 0) == 0) seen = true;
    if (seen && line.empty()) break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(seen);
  json doc = show("later");
  EXPECT_EQ(doc["executionState"], "failed");
  EXPECT_EQ(doc["executionInfo"]["exitCode"], 7) << doc.dump();
}

}  // namespace
}  // namespace batchai::cli::testing
