// Round trips per resource (create, then `show -o json` equals the expected document after
// normalising times and uuids) and the cluster/file-server commands end to end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <thread>

#include "cli_harness.hpp"
#include "loopback.hpp"

namespace batchai::cli::testing {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

class ResourceScenario : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
    CliResult ws = run({"workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus"});
    ASSERT_EQ(ws.exit_code, 0) << ws.err;
    ws_id_ = ws.json()["id"].get<std::string>();
  }
  CliResult run(std::vector<std::string> args) { return cli_.run(args); }
  // Expected documents are compared after normalise(), which keeps ids but masks times/uuids.
  json show(std::vector<std::string> args) {
    args.push_back("-o");
    args.push_back("json");
    CliResult r = run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return normalise(r.json());
  }
  CliHarness cli_;
  std::string ws_id_;
};

TEST_F(ResourceScenario, WorkspaceRoundTrip) {
  json expected = {{"creationTime", "<time>"},
                   {"id", ws_id_},
                   {"location", "eastus"},
                   {"name", "ws"},
                   {"provisioningState", "succeeded"},
                   {"provisioningStateTransitionTime", "<time>"},
                   {"resourceGroup", "rg"},
                   {"tags", nullptr},
                   {"type", "Microsoft.BatchAI/workspaces"}};
  expected = normalise(expected);
  EXPECT_EQ(show({"workspace", "show", "-g", "rg", "-n", "ws"}), expected);
  json listed = show({"workspace", "list", "-g", "rg"});
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0], expected);
}

TEST_F(ResourceScenario, ExperimentRoundTrip) {
  CliResult created = run({"experiment", "create", "-g", "rg", "-w", "ws", "-n", "exp1"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  json expected = {{"creationTime", "<time>"},
                   {"id", ws_id_ + "/experiments/exp1"},
                   {"name", "exp1"},
                   {"provisioningState", "succeeded"},
                   {"provisioningStateTransitionTime", "<time>"},
                   {"resourceGroup", "rg"},
                   {"type", "Microsoft.BatchAI/workspaces/experiments"}};
  expected = normalise(expected);
  EXPECT_EQ(show({"experiment", "show", "-g", "rg", "-w", "ws", "-n", "exp1"}), expected);
  EXPECT_EQ(normalise(created.json()), expected);
  CliResult table = run({"experiment", "list", "-g", "rg", "-w", "ws", "-o", "table"});
  EXPECT_EQ(table.out,
            "Name    Resource Group    Workspace    State    \n"
            "------  ----------------  -----------  ---------\n"
            "exp1    rg                ws           succeeded\n");
}

TEST_F(ResourceScenario, ClusterFromConfigFileRoundTrip) {
  auto file = cli_.write_file("cluster.json", R"({"properties": {
    "vmSize": "STANDARD_D1",
    "scaleSettings": {"manual": {"targetNodeCount": 1}},
    "userAccountSettings": {"adminUserName": "demoUser", "adminUserPassword": "Secret#123"}}})");
  CliResult created = run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "c1", "-f", file.string()});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  json expected = {
      {"allocationState", "steady"},
      {"allocationStateTransitionTime", "<time>"},
      {"creationTime", "<time>"},
      {"currentNodeCount", 1},
      {"errors", nullptr},
      {"id", ws_id_ + "/clusters/c1"},
      {"name", "c1"},
      {"nodeSetup", nullptr},
      {"nodeStateCounts",
       {{"idleNodeCount", 1}, {"leavingNodeCount", 0}, {"preparingNodeCount", 0}, {"runningNodeCount", 0},
        {"unusableNodeCount", 0}}},
      {"provisioningState", "succeeded"},
      {"provisioningStateTransitionTime", "<time>"},
      {"resourceGroup", "rg"},
      {"scaleSettings", {{"autoScale", nullptr}, {"manual", {{"nodeDeallocationOption", "requeue"}, {"targetNodeCount", 1}}}}},
      {"subnet", nullptr},
      {"type", "Microsoft.BatchAI/workspaces/clusters"},
      {"userAccountSettings", {{"adminUserName", "demoUser"}, {"adminUserPassword", nullptr}, {"adminUserSshPublicKey", nullptr}}},
      {"virtualMachineConfiguration",
       {{"imageReference",
         {{"offer", "UbuntuServer"}, {"publisher", "Canonical"}, {"sku", "16.04-LTS"}, {"version", "latest"},
          {"virtualMachineImageId", nullptr}}}}},
      {"vmPriority", "dedicated"},
      {"vmSize", "STANDARD_D1"}};
  EXPECT_EQ(show({"cluster", "show", "-g", "rg", "-w", "ws", "-n", "c1"}), normalise(expected));
  // Creating it again is refused with az's message.
  CliResult again = run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "c1", "-f", file.string()});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.err, HasSubstr("ERROR: \"c1\" already exists in \"rg\" resource group under ws resource group."));
}

TEST_F(ResourceScenario, ClusterCommandsEndToEnd) {
  CliResult r = run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "auto", "-s", "Standard_NC6", "--min", "0",
                     "--max", "2", "-u", "me", "-p", "pw"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json()["scaleSettings"]["autoScale"]["maximumNodeCount"], 2);
  r = run({"cluster", "resize", "-g", "rg", "-w", "ws", "-n", "auto", "-t", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json()["scaleSettings"]["manual"]["targetNodeCount"], 2);
  r = run({"cluster", "node", "list", "-g", "rg", "-w", "ws", "-c", "auto"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json().size(), 2u);
  r = run({"cluster", "node", "list", "-g", "rg", "-w", "ws", "-c", "auto", "-o", "table"});
  EXPECT_THAT(r.out, HasSubstr("SSH Port"));
  r = run({"cluster", "auto-scale", "-g", "rg", "-w", "ws", "-n", "auto", "--min", "1", "--max", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json()["scaleSettings"]["autoScale"]["minimumNodeCount"], 1);
  // node exec without --exec or -L does nothing.
  r = run({"cluster", "node", "exec", "-g", "rg", "-w", "ws", "-c", "auto"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  r = run({"cluster", "file", "list", "-g", "rg", "-w", "ws", "-c", "auto"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[]\n");
  r = run({"cluster", "delete", "-g", "rg", "-w", "ws", "-n", "auto", "-y"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(run({"cluster", "show", "-g", "rg", "-w", "ws", "-n", "auto"}).exit_code, 3);
}

// A loopback TCP server in this process answering one line with "echo:<line>"; port() is where.
class LineEchoServer {
 public:
  LineEchoServer() : fd_(test::listen_loopback(&port_)) {
    thread_ = std::thread([this] {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string line;
      for (char ch; ::read(c, &ch, 1) == 1 && ch != '\n';) line += ch;
      const std::string answer = "echo:" + line + "\n";
      (void)!::write(c, answer.data(), answer.size());
      ::close(c);
    });
  }
  ~LineEchoServer() {
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept() if nobody came
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int port_ = 0;
  int fd_;
  std::thread thread_;
};

// A port free right now (bound to 0, read, released).
int free_port() {
  LineEchoServer probe;
  return probe.port();
}

TEST_F(ResourceScenario, NodeExecForwardsPortsWhileTheCommandRuns) {
  ASSERT_EQ(run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "fw", "-s", "Standard_D1", "-t", "1", "-u", "me",
                 "-p", "pw"}).exit_code, 0);
  LineEchoServer server;
  const std::string local = std::to_string(free_port());
  // The command on the node talks to the local end of the tunnel; the server is its far end.
  CliResult r = run({"cluster", "node", "exec", "-g", "rg", "-w", "ws", "-c", "fw", "-L",
                     local + ":localhost:" + std::to_string(server.port()), "--exec",
                     "exec 3<>/dev/tcp/127.0.0.1/" + local + "; echo hi >&3; head -1 <&3"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("echo:hi"));
  EXPECT_THAT(r.err, HasSubstr("Forwarding 0.0.0.0:" + local + " to localhost:"));
  // The same port on both ends of localhost is served here already: a warning, not a clash.
  r = run({"cluster", "node", "exec", "-g", "rg", "-w", "ws", "-c", "fw", "-L",
           std::to_string(server.port()) + ":localhost:" + std::to_string(server.port()), "--exec", "true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("already served on this machine"));
  r = run({"cluster", "node", "exec", "-g", "rg", "-w", "ws", "-c", "fw", "-L", "9000:localhost"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("expected lport:rhost:rport"));
  // Without --exec the tunnel stays until Ctrl-C, which ends the command with exit code 0.
  const pid_t pid = cli_.spawn({"cluster", "node", "exec", "-g", "rg", "-w", "ws", "-c", "fw", "-L",
                                "0:localhost:" + std::to_string(server.port())});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "the forwarding command ended by itself";
  ::kill(pid, SIGINT);
  EXPECT_EQ(CliHarness::wait(pid), 0);
}

TEST_F(ResourceScenario, ClusterMessageCatalogue) {
  auto error_of = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"cluster", "create", "-g", "rg", "-w", "ws", "-n", "bad", "-u", "me", "-p", "pw"};
    args.insert(args.end(), extra.begin(), extra.end());
    CliResult r = run(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    return r.err;
  };
  EXPECT_THAT(error_of({"-t", "1"}), HasSubstr("ERROR: Please provide VM size"));
  EXPECT_THAT(error_of({"-s", "Standard_D1"}),
              HasSubstr("ERROR: Please provide scale setting for the cluster via command line or configuration file"));
  EXPECT_THAT(error_of({"-s", "Standard_D1", "--min", "1"}),
              HasSubstr("ERROR: You need to either provide both min and max node counts or not provide any of them"));
  EXPECT_THAT(error_of({"-s", "Standard_D1", "--min", "3", "--max", "1"}),
              HasSubstr("ERROR: Maximum nodes count must be greater or equal to minimum nodes count"));
  EXPECT_THAT(error_of({"-s", "Standard_D1", "-t", "1", "--custom-image", "/subscriptions/x"}),
              HasSubstr("ERROR: You need to specify --image argument with information about the custom image"));
  EXPECT_THAT(error_of({"-s", "Standard_D1", "-t", "1", "-i", "Windows"}),
              HasSubstr("ERROR: Unsupported image alias \"Windows\", supported aliases are UbuntuLTS, UbuntuDSVM"));
  EXPECT_THAT(error_of({"-s", "Standard_D1", "-t", "1", "-i", "a:b"}),
              HasSubstr("ERROR: --image must have format \"publisher:offer:sku:version\" or \"publisher:offer:sku:\""));
  EXPECT_THAT(error_of({"-s", "Standard_D1", "-t", "1", "--setup-task", "echo hi"}),
              HasSubstr("ERROR: --setup-task requires providing of --setup-task-output"));
  EXPECT_THAT(error_of({"-s", "Standard_D1", "-t", "1", "--subnet", "nope"}),
              HasSubstr("ERROR: Ill-formed subnet resource id"));
  EXPECT_THAT(error_of({"-s", "Standard_D1", "-t", "1", "-f", (cli_.dir() / "missing.json").string()}),
              HasSubstr("ERROR: [Errno 2] No such file or directory: '"));
  auto bad = cli_.write_file("bad.json", "");
  EXPECT_THAT(error_of({"-s", "Standard_D1", "-t", "1", "-f", bad.string()}),
              HasSubstr("ERROR: Expecting value: line 1 column 1 (char 0)"));
  CliResult r = run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "bad!", "-s", "Standard_D1", "-t", "1",
                     "-u", "me", "-p", "pw"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("validation error: Parameter 'cluster_name' must conform to the following pattern"));
}

TEST_F(ResourceScenario, FileServerRoundTripAndMessages) {
  auto file = cli_.write_file("nfs.json", R"({"properties": {"vmSize": "Standard_D14",
    "dataDisks": {"diskSizeInGB": 10, "diskCount": 2, "storageAccountType": "Standard_LRS"},
    "sshConfiguration": {"userAccountSettings": {"adminUserName": "u", "adminUserPassword": "p"}}}})");
  CliResult r = run({"file-server", "create", "-g", "rg", "-w", "ws", "-n", "nfs", "-f", file.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json fs = show({"file-server", "show", "-g", "rg", "-w", "ws", "-n", "nfs"});
  EXPECT_EQ(fs["dataDisks"], (json{{"cachingType", "none"}, {"diskCount", 2}, {"diskSizeInGb", 10},
                                    {"storageAccountType", "Standard_LRS"}}));
  EXPECT_EQ(fs["sshConfiguration"]["userAccountSettings"]["adminUserPassword"], nullptr);
  EXPECT_EQ(fs["provisioningState"], "succeeded");
  EXPECT_EQ(fs["mountSettings"]["mountPoint"], "/mnt/data");
  EXPECT_EQ(fs["resourceGroup"], "rg");
  EXPECT_EQ(fs["name"], "nfs");
  CliResult table = run({"file-server", "list", "-g", "rg", "-w", "ws", "-o", "table"});
  EXPECT_THAT(table.out, HasSubstr("2 x 10 Gb"));
  EXPECT_THAT(table.out, HasSubstr("/mnt/data"));
  // Configured default workspace for file-server create.
  r = cli_.run({"file-server", "create", "-n", "nfs2", "-f", file.string(), "--no-wait"},
               {{"AZURE_DEFAULTS_DEFAULT_WORKSPACE_NAME", "ws"},
                {"AZURE_DEFAULTS_DEFAULT_WORKSPACE_RESOURCE_GROUP", "rg"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");  // --no-wait prints nothing
  r = run({"file-server", "create", "-g", "rg", "-w", "ws", "-n", "nfs3", "-u", "u", "-p", "p", "-s", "Standard_D14"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("ERROR: Please provide disk size in Gb."));
  r = run({"file-server", "delete", "-g", "rg", "-w", "ws", "-n", "nfs", "-y"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(run({"file-server", "show", "-g", "rg", "-w", "ws", "-n", "nfs"}).exit_code, 3);
}

TEST_F(ResourceScenario, ListUsages) {
  CliResult r = run({"list-usages", "-l", "eastus"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& usage : r.json()) EXPECT_THAT(usage["name"]["value"].get<std::string>(), HasSubstr("Cluster"));
  r = run({"list-usages", "-l", "eastus", "-o", "table"});
  EXPECT_THAT(r.out, HasSubstr("Value"));
  EXPECT_THAT(r.out, HasSubstr("Usage"));
  EXPECT_THAT(r.out, HasSubstr("Limit"));
}

}  // namespace
}  // namespace batchai::cli::testing
