// `batchai cluster create --slurm-partition` through the built executable, against the private
// Slurm of the fixture "slurm" (docs/slurm.md, "Slurm-backed clusters").
#include <gtest/gtest.h>

#include <set>

#include "cli/cli_harness.hpp"
#include "slurm_test_util.hpp"

namespace batchai::cli::testing {
namespace {

class SlurmClusterCli : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = {{"SLURM_CONF", slurm_testing::slurm_conf().string()}};
    ASSERT_EQ(run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
    ASSERT_EQ(run({"workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus"}).exit_code, 0);
  }
  CliResult run(const std::vector<std::string>& args) const { return cli_.run(args, env_); }

  CliHarness cli_;
  std::map<std::string, std::string> env_;
};

TEST_F(SlurmClusterCli, CreateShowAndNodeList) {
  CliResult created = run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "sc", "-s", "Standard_NC6", "-t", "2",
                           "-u", "alice", "-p", "secret", "--slurm-partition", "batchai"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  CliResult shown = run({"cluster", "show", "-g", "rg", "-w", "ws", "-n", "sc", "-o", "json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  nlohmann::json doc = shown.json();
  EXPECT_EQ(doc["currentNodeCount"], 3);
  EXPECT_EQ(doc["nodeStateCounts"]["idleNodeCount"], 3);
  EXPECT_EQ(doc["scaleSettings"]["manual"]["targetNodeCount"], 2);
  CliResult nodes = run({"cluster", "node", "list", "-g", "rg", "-w", "ws", "-c", "sc", "-o", "json"});
  ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
  std::set<std::string> names;
  const std::string addr = slurm_testing::configured_node_addr();  // what slurm.conf's NodeAddr says
  for (const auto& n : nodes.json()) {
    names.insert(n["nodeId"].get<std::string>());
    EXPECT_EQ(n["ipAddress"], addr) << n.dump();
    EXPECT_EQ(n["port"], 22);
  }
  EXPECT_EQ(names, (std::set<std::string>{"node1", "node2", "node3"}));
  // node exec without -n: the first node, through srun (docs/slurm.md "GPUs and node exec").
  CliResult exec = run({"cluster", "node", "exec", "-g", "rg", "-w", "ws", "-c", "sc", "--exec", "echo $SLURMD_NODENAME"});
  EXPECT_EQ(exec.exit_code, 0) << exec.err;
  EXPECT_EQ(exec.out, "node1\n");
}

TEST_F(SlurmClusterCli, UnknownPartitionIsRefusedAndNothingIsCreated) {
  CliResult created = run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "sc", "-s", "Standard_NC6", "-t", "1",
                           "-u", "alice", "-p", "secret", "--slurm-partition", "nosuchpartition"});
  EXPECT_NE(created.exit_code, 0);
  EXPECT_NE(created.err.find("nosuchpartition"), std::string::npos) << created.err;
  CliResult list = run({"cluster", "list", "-g", "rg", "-w", "ws", "-o", "json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_TRUE(list.json().empty());
}

}  // namespace
}  // namespace batchai::cli::testing
