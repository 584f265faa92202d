// Clusters: creation order and messages (docs/behaviour.md §4.3), simulated state sequences over a ManualClock,
// resize/auto-scale, node folders and mounts, setup tasks (real processes), node list/exec and
// cluster file list (docs/job-runtime.md §4.10.5).
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "batchai/common/ids.hpp"
#include "fixture.hpp"
#include "store/rows.hpp"

namespace batchai::control_plane {
namespace {

using testing::ControlPlaneTest;
using testing::expect_error;
using testing::kSshKey;
using testing::read_file;
using testing::write_file;
namespace fs = std::filesystem;

Json counts(int idle, int leaving, int preparing, int running, int unusable) {
  return {{"idleNodeCount", idle}, {"leavingNodeCount", leaving}, {"preparingNodeCount", preparing},
          {"runningNodeCount", running}, {"unusableNodeCount", unusable}};
}

TEST_F(ControlPlaneTest, CreateManualClusterZeroDelay) {
  auto ws = make_workspace();
  Json c = cp_->clusters().create(cluster_options("Cl", 2));
  EXPECT_EQ(c["allocationState"], "resizing");
  EXPECT_EQ(c["currentNodeCount"], 0);
  EXPECT_EQ(c["vmSize"], "STANDARD_NC6");
  EXPECT_EQ(c["vmPriority"], "dedicated");
  EXPECT_EQ(c["provisioningState"], "succeeded");
  EXPECT_EQ(c["scaleSettings"]["manual"]["targetNodeCount"], 2);
  EXPECT_TRUE(c["userAccountSettings"]["adminUserPassword"].is_null());
  EXPECT_EQ(c["virtualMachineConfiguration"]["imageReference"]["offer"], "UbuntuServer");
  EXPECT_TRUE(c["nodeSetup"].is_null());
  EXPECT_TRUE(c["subnet"].is_null());
  EXPECT_TRUE(c["errors"].is_null());
  EXPECT_EQ(c.size(), 19u);  // every key of docs/output.md §2.2.3
  Json s = cp_->clusters().show(ws, "cl");
  EXPECT_EQ(s["allocationState"], "steady");
  EXPECT_EQ(s["currentNodeCount"], 2);
  EXPECT_EQ(s["nodeStateCounts"], counts(2, 0, 0, 0, 0));
  Json nodes = cp_->nodes().list(ws, "CL");
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_TRUE(std::regex_match(nodes[0]["nodeId"].get<std::string>(), std::regex(R"(tvm-\d{10}_1-\d{8}t\d{6}z)")));
  EXPECT_EQ(nodes[0]["port"].dump(), "50000.0");
  EXPECT_EQ(nodes[1]["port"].dump(), "50001.0");
  EXPECT_EQ(nodes[0]["ipAddress"], nodes[1]["ipAddress"]);
  fs::path node = cp_->layout().node("rg", "ws", "cl", nodes[0]["nodeId"]);
  EXPECT_TRUE(fs::is_directory(node / "mounts"));
  EXPECT_TRUE(fs::is_directory(node / "jobs"));
  EXPECT_EQ(cp_->clusters().list(ws).size(), 1u);
  cp_->clusters().remove(ws, "cl");
  expect_error<NotFound>([&] { cp_->clusters().show(ws, "cl"); }, "The specified managed compute cluster is not found");
  EXPECT_FALSE(fs::exists(node));
}

TEST_F(ControlPlaneTest, StateSequenceOverSimulatedTime) {
  open(std::chrono::seconds(3));
  auto ws = make_workspace();
  cp_->clusters().create(cluster_options("c", 1));
  Json s = cp_->clusters().show(ws, "c");
  EXPECT_EQ(s["allocationState"], "resizing");
  EXPECT_EQ(s["currentNodeCount"], 0);
  clock_->advance(std::chrono::seconds(3));
  s = cp_->clusters().show(ws, "c");
  EXPECT_EQ(s["allocationState"], "steady");
  EXPECT_EQ(s["allocationStateTransitionTime"], "2018-06-14T18:13:23+00:00");
  EXPECT_EQ(s["nodeStateCounts"], counts(0, 0, 1, 0, 0));
  clock_->advance(std::chrono::seconds(3));
  EXPECT_EQ(cp_->clusters().show(ws, "c")["nodeStateCounts"], counts(1, 0, 0, 0, 0));
  // Resize up then down: removal takes the delay and picks idle nodes first.
  s = cp_->clusters().resize(ws, "c", 3);
  EXPECT_EQ(s["allocationState"], "resizing");
  EXPECT_EQ(s["scaleSettings"]["manual"]["targetNodeCount"], 3);
  clock_->advance(std::chrono::seconds(3));
  EXPECT_EQ(cp_->clusters().show(ws, "c")["nodeStateCounts"], counts(1, 0, 2, 0, 0));
  s = cp_->clusters().resize(ws, "c", 2);
  EXPECT_EQ(s["allocationState"], "resizing");
  EXPECT_EQ(s["nodeStateCounts"], counts(0, 1, 2, 0, 0));
  clock_->advance(std::chrono::seconds(3));
  s = cp_->clusters().show(ws, "c");
  EXPECT_EQ(s["allocationState"], "steady");
  EXPECT_EQ(s["nodeStateCounts"], counts(2, 0, 0, 0, 0));
  EXPECT_EQ(s["currentNodeCount"], 2);
  s = cp_->clusters().resize(ws, "c", 0);
  clock_->advance(std::chrono::seconds(3));
  EXPECT_EQ(cp_->clusters().show(ws, "c")["currentNodeCount"], 0);
}

TEST_F(ControlPlaneTest, AutoScaleFollowsDemand) {
  auto ws = make_workspace();
  auto o = cluster_options("a", 1);
  o.min_nodes = 0;
  o.max_nodes = 3;
  Json c = cp_->clusters().create(o);
  EXPECT_EQ(c["scaleSettings"]["autoScale"]["initialNodeCount"], 1);
  EXPECT_TRUE(c["scaleSettings"]["manual"].is_null());
  EXPECT_EQ(cp_->clusters().show(ws, "a")["currentNodeCount"], 1);
  const auto id = cp_->store().read([&] { return detail::require_cluster(cp_->store(), ws, "a").id; });
  cp_->clusters().set_auto_scale_demand(id, 5);
  EXPECT_EQ(cp_->clusters().show(ws, "a")["currentNodeCount"], 3);  // clamped to the maximum
  cp_->clusters().set_auto_scale_demand(id, 0);
  EXPECT_EQ(cp_->clusters().show(ws, "a")["currentNodeCount"], 0);
  Json r = cp_->clusters().auto_scale(ws, "a", 2, 4);
  EXPECT_EQ(r["scaleSettings"]["autoScale"]["minimumNodeCount"], 2);
  EXPECT_EQ(cp_->clusters().show(ws, "a")["currentNodeCount"], 2);
  r = cp_->clusters().resize(ws, "a", 1);
  EXPECT_TRUE(r["scaleSettings"]["autoScale"].is_null());
  EXPECT_EQ(cp_->clusters().show(ws, "a")["currentNodeCount"], 1);
}

TEST_F(ControlPlaneTest, CreateMessagesInProcessingOrder) {
  auto ws = make_workspace();
  cp_->clusters().create(cluster_options("c", 0));
  expect_error<AlreadyExists>([&] { cp_->clusters().create(cluster_options("C", 0)); },
                              "\"C\" already exists in \"rg\" resource group under ws resource group.");
  auto o = cluster_options("d", 1);
  o.subnet = "not-an-id";
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); }, "Ill-formed subnet resource id");
  o = cluster_options("d", 1);
  o.vm_size.reset();
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); }, "Please provide VM size");
  o = cluster_options("d", 1);
  o.custom_image = "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/images/i";
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); },
                                "properties.virtualMachineConfiguration.virtualMachineImageId needs the imageReference (publisher, offer, sku) "
                                "the custom image was made from.");
  o = cluster_options("d", 1);
  o.target.reset();
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); },
                                "Please provide scale setting for the cluster via command line or configuration file");
  o = cluster_options("d", 1);
  o.setup_task = "echo hi";
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); }, "properties.nodeSetup.setupTask.stdOutErrPathPrefix is required with a setup task.");
  o = cluster_options("d", 1);
  o.mounts.afs_name = "share";
  expect_error<InvalidArgument>(
      [&] { cp_->clusters().create(o); },
      "Please configure Azure Storage account name via AZURE_BATCHAI_STORAGE_ACCOUNT or provide storage_account value "
      "in batchai section of your az configuration file.");
  o.mounts.storage_account_name = "ghost";
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); }, "Cannot find \"ghost\" storage account.");
  o = cluster_options("d", 1);
  o.admin.password.reset();
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); }, "Please provide admin user password or ssh key.");
  o = cluster_options("d", 1);
  o.mounts.nfs = "nofs";
  expect_error<NotFound>([&] { cp_->clusters().create(o); }, "The specified file server nofs is not found");
  o = cluster_options("d", 1);
  o.where.workspace = "nows";
  expect_error<NotFound>([&] { cp_->clusters().create(o); }, "The specified workspace nows is not found");
}

TEST_F(ControlPlaneTest, ConfigFileRoundTripHidesSecrets) {
  auto ws = make_workspace();
  cp_->storage_accounts().create("rg", "acct", std::nullopt, "Standard_LRS", "Storage");
  write_file(root_ / "cluster.json", R"({
    "$schema": "ignored",
    "properties": {
      "vmSize": "Standard_D1",
      "vmPriority": "lowpriority",
      "scaleSettings": {"manual": {"targetNodeCount": 1}},
      "virtualMachineConfiguration": {"imageReference": {"publisher": "p", "offer": "o", "sku": "s"}},
      "userAccountSettings": {"adminUserName": "cfg", "adminUserPassword": "pw"},
      "subnet": {"id": "/subscriptions/x/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/v/subnets/s"},
      "nodeSetup": {
        "setupTask": {"commandLine": "true", "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/afs",
                      "environmentVariables": [{"name": "A", "value": "1"}],
                      "secrets": [{"name": "S", "value": "hidden"}]},
        "mountVolumes": {"azureFileShares": [{"azureFileUrl": "https://<AZURE_BATCHAI_STORAGE_ACCOUNT>.file.core.windows.net/share",
                                              "relativeMountPath": "afs"}]}
      }
    }})");
  auto o = cluster_options("c", 0);
  o.target.reset();
  o.vm_size.reset();
  o.admin = {};
  o.config = load_json_file(root_ / "cluster.json");
  o.mounts.storage_account_name = "acct";
  Json c = cp_->clusters().create(o);
  EXPECT_EQ(c["vmSize"], "STANDARD_D1");
  EXPECT_EQ(c["vmPriority"], "lowpriority");
  EXPECT_EQ(c["userAccountSettings"]["adminUserName"], "cfg");
  EXPECT_EQ(c["subnet"]["resourceGroup"], "net");
  EXPECT_EQ(c["virtualMachineConfiguration"]["imageReference"]["publisher"], "p");
  const Json& task = c["nodeSetup"]["setupTask"];
  EXPECT_EQ(task["secrets"][0]["name"], "S");
  EXPECT_TRUE(task["secrets"][0]["value"].is_null());
  EXPECT_TRUE(task["secrets"][0].contains("valueSecretReference"));
  std::string suffix = task["stdOutErrPathSuffix"];
  EXPECT_EQ(suffix.rfind(subscription_id() + "/rg/workspaces/ws/clusters/c/", 0), 0u);
  const Json& share = c["nodeSetup"]["mountVolumes"]["azureFileShares"][0];
  EXPECT_EQ(share["accountName"], "acct");
  EXPECT_EQ(share["azureFileUrl"], "https://acct.file.core.windows.net/share");
  EXPECT_TRUE(share["credentials"]["accountKey"].is_null());
  EXPECT_TRUE(c["nodeSetup"]["performanceCountersSettings"].is_null());
  std::string text = c.dump();
  EXPECT_EQ(text.find("hidden"), std::string::npos);
  EXPECT_EQ(text.find("\"pw\""), std::string::npos);
  Json shown = cp_->clusters().show(ws, "c");
  for (const char* key : {"id", "nodeSetup", "userAccountSettings", "virtualMachineConfiguration", "subnet", "creationTime"})
    EXPECT_EQ(shown[key], c[key]) << key;
}

TEST_F(ControlPlaneTest, SetupTaskRunsOnEachNodeAndFilesAreListed) {
  auto ws = make_workspace();
  cp_->storage_accounts().create("rg", "acct", std::nullopt, "Standard_LRS", "Storage");
  cp_->storage().share_create({"acct", std::nullopt}, "logs");
  auto o = cluster_options("c", 2);
  o.mounts.storage_account_name = "acct";
  o.mounts.afs_name = "logs";
  o.setup_task = "echo setup-ran; echo \"$AZ_BATCHAI_MOUNT_ROOT\" > $AZ_BATCHAI_MOUNT_ROOT/afs/root-$RANDOM.txt";
  o.setup_task_output = "$AZ_BATCHAI_MOUNT_ROOT/afs";
  cp_->clusters().create(o);
  Json s = wait_cluster(ws, "c", [](const Json& d) { return d["nodeStateCounts"]["idleNodeCount"] == 2; });
  ASSERT_EQ(s["nodeStateCounts"], counts(2, 0, 0, 0, 0)) << s.dump();
  Json nodes = cp_->nodes().list(ws, "c");
  Json files = cp_->nodes().file_list(ws, "c", ".", 60);
  ASSERT_EQ(files.size(), 4u) << files.dump();
  std::string node0 = nodes[0]["nodeId"];
  EXPECT_EQ(files[0]["name"], "stderr-" + nodes[0]["nodeId"].get<std::string>() + ".txt");
  bool found = false;
  for (const auto& f : files)
    if (f["name"] == "stdout-" + node0 + ".txt") {
      found = true;
      EXPECT_EQ(f["size"], 10);  // "setup-ran\n"
      EXPECT_FALSE(f["is_directory"]);
      const std::string url = f["download_url"];
      ASSERT_EQ(url.rfind("file://", 0), 0u) << url;
      EXPECT_EQ(read_file(url.substr(7)), "setup-ran\n") << url;
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(cp_->nodes().file_list(ws, "c", "nosuchdir", 60), Json::array());
  // The node's mount is a link to the share folder.
  fs::path mount = cp_->layout().node("rg", "ws", "c", node0) / "mounts" / "afs";
  EXPECT_TRUE(fs::is_symlink(mount));
  EXPECT_EQ(fs::canonical(mount), fs::canonical(cp_->storage().share_root("acct", "logs")));
}

TEST_F(ControlPlaneTest, FailingSetupTaskMakesNodeUnusable) {
  auto ws = make_workspace();
  auto o = cluster_options("c", 1);
  o.setup_task = "echo broken >&2; exit 3";
  o.setup_task_output = "$AZ_BATCHAI_MOUNT_ROOT/logs";
  cp_->clusters().create(o);
  Json s = wait_cluster(ws, "c", [](const Json& d) { return d["nodeStateCounts"]["unusableNodeCount"] == 1; });
  ASSERT_EQ(s["nodeStateCounts"], counts(0, 0, 0, 0, 1)) << s.dump();
  ASSERT_TRUE(s["errors"].is_array());
  EXPECT_EQ(s["errors"][0]["code"], "SetupTaskFailed");
  EXPECT_NE(s["errors"][0]["message"].get<std::string>().find("exit code 3"), std::string::npos);
  // Output went to the node-local folder ($AZ_BATCHAI_MOUNT_ROOT/logs is no mount): not listable.
  expect_error<InvalidArgument>([&] { cp_->nodes().file_list(ws, "c", ".", 60); },
                                "List files is supported only for clusters with startup task configure to store its "
                                "output on Azure File Share or Azure Blob Container");
}

// Processes whose command line holds `text` (a unique marker of the test).
int processes_with(const std::string& text) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos || std::stoi(pid) == ::getpid()) continue;
    std::string line = read_file(e.path() / "cmdline");
    std::replace(line.begin(), line.end(), '\0', ' ');
    if (line.find(text) != std::string::npos) ++n;
  }
  return n;
}

bool processes_gone(const std::string& text) {
  for (int i = 0; i < 100 && processes_with(text) > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return processes_with(text) == 0;
}

TEST_F(ControlPlaneTest, SetupTasksStillRunningEndWithTheirNodes) {
  auto ws = make_workspace();
  const std::string marker = "setupmark" + std::to_string(::getpid());
  auto o = cluster_options("c", 2);
  o.setup_task = "exec -a " + marker + " sleep 300";
  o.setup_task_output = "$AZ_BATCHAI_MOUNT_ROOT/logs";
  cp_->clusters().create(o);
  for (int i = 0; i < 100 && processes_with(marker) < 2; ++i) {
    cp_->reconcile();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(processes_with(marker), 2);
  EXPECT_EQ(cp_->clusters().show(ws, "c")["nodeStateCounts"]["preparingNodeCount"], 2);
  // Shrinking removes one preparing node: its setup task goes with it.
  cp_->clusters().resize(ws, "c", 1);
  clock_->advance(std::chrono::hours(1));
  cp_->reconcile();
  for (int i = 0; i < 100 && processes_with(marker) > 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(processes_with(marker), 1);
  // Deleting the cluster ends the other one.
  cp_->clusters().remove(ws, "c");
  EXPECT_TRUE(processes_gone(marker));
}

TEST_F(ControlPlaneTest, FileListRules) {
  auto ws = make_workspace();
  cp_->clusters().create(cluster_options("plain", 0));
  EXPECT_EQ(cp_->nodes().file_list(ws, "plain", ".", 60), Json::array());
  auto o = cluster_options("c", 0);
  o.setup_task = "true";
  o.setup_task_output = "$AZ_BATCHAI_MOUNT_ROOT/local";  // on the node, but on no share
  cp_->clusters().create(o);
  EXPECT_THROW(cp_->nodes().file_list(ws, "c", ".", 60), InvalidArgument);
}

TEST_F(ControlPlaneTest, NodeExecRunsInNodeFolder) {
  auto ws = make_workspace();
  cp_->clusters().create(cluster_options("c", 1));
  Json nodes = cp_->nodes().list(ws, "c");
  NodeExecOptions none;
  cp_->nodes().exec(ws, "c", none);  // nothing to do
  NodeExecOptions e;
  e.exec = "echo out; echo err >&2; pwd; echo $AZ_BATCHAI_MOUNT_ROOT; exit 5";
  ::testing::internal::CaptureStdout();
  cp_->nodes().exec(ws, "c", e);
  std::string out = ::testing::internal::GetCapturedStdout();
  fs::path node = cp_->layout().node("rg", "ws", "c", nodes[0]["nodeId"]);
  EXPECT_NE(out.find("out\n"), std::string::npos);
  EXPECT_NE(out.find("err\n"), std::string::npos);
  EXPECT_NE(out.find(node.string() + "\n"), std::string::npos);
  EXPECT_NE(out.find((node / "mounts").string()), std::string::npos);
  e.node_id = "tvm-nope";
  expect_error<InvalidArgument>([&] { cp_->nodes().exec(ws, "c", e); }, "Cannot find a node with id=tvm-nope");
  cp_->clusters().resize(ws, "c", 0);
  e.node_id.reset();
  expect_error<InvalidArgument>([&] { cp_->nodes().exec(ws, "c", e); }, "No nodes available in the cluster");
}

TEST_F(ControlPlaneTest, NfsAndAutoStorageMounts) {
  auto ws = make_workspace();
  FileServerCreateOptions f = file_server_options("nfs");
  f.admin.password.reset();
  f.admin.ssh_key = kSshKey;
  Json server = *cp_->file_servers().create(f);
  auto o = cluster_options("c", 1);
  o.mounts.nfs = "nfs";
  o.use_auto_storage = true;
  o.subnet = "/subscriptions/x/resourceGroups/y/providers/Microsoft.Network/virtualNetworks/v/subnets/other";
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); }, "Cluster and mounted NFS must be in the same subnet.");
  o.subnet = server["subnet"]["id"].get<std::string>();
  Json c = cp_->clusters().create(o);
  const Json& mv = c["nodeSetup"]["mountVolumes"];
  EXPECT_EQ(mv["fileServers"][0]["fileServer"]["id"], server["id"]);
  EXPECT_EQ(mv["fileServers"][0]["mountOptions"], "rw");
  EXPECT_EQ(mv["azureFileShares"][0]["relativeMountPath"], "autoafs");
  EXPECT_EQ(mv["azureBlobFileSystems"][0]["containerName"], "batchaicontainer");
  EXPECT_TRUE(cp_->groups().exists("batchaiautostorage"));
  std::string account = mv["azureFileShares"][0]["accountName"];
  EXPECT_EQ(account.rfind("bai", 0), 0u);
  EXPECT_EQ(account.size(), 15u);
  Json nodes = cp_->nodes().list(ws, "c");
  fs::path mounts = cp_->layout().node("rg", "ws", "c", nodes[0]["nodeId"]) / "mounts";
  EXPECT_EQ(fs::canonical(mounts / "nfs"), fs::canonical(cp_->layout().file_server_export("rg", "ws", "nfs")));
  EXPECT_EQ(fs::canonical(mounts / "autobfs"), fs::canonical(cp_->storage().container_root(account, "batchaicontainer")));
  // A second auto-storage cluster reuses the account.
  auto o2 = cluster_options("c2", 0);
  o2.use_auto_storage = true;
  Json c2 = cp_->clusters().create(o2);
  EXPECT_EQ(c2["nodeSetup"]["mountVolumes"]["azureFileShares"][0]["accountName"], account);
}

TEST_F(ControlPlaneTest, GenerateSshKeysWithSshKeygen) {
  if (std::system("command -v ssh-keygen >/dev/null 2>&1") != 0) GTEST_SKIP() << "ssh-keygen not installed";
  auto ws = make_workspace();
  auto o = cluster_options("c", 0);
  o.admin.password.reset();
  o.admin.generate_ssh_keys = true;
  Json c = cp_->clusters().create(o);
  EXPECT_TRUE(fs::exists(root_ / "user" / ".ssh" / "id_rsa"));
  EXPECT_EQ(c["userAccountSettings"]["adminUserSshPublicKey"].get<std::string>().rfind("ssh-rsa ", 0), 0u);
  // Reused the second time.
  auto o2 = cluster_options("c2", 0);
  o2.admin.password.reset();
  o2.admin.generate_ssh_keys = true;
  EXPECT_EQ(cp_->clusters().create(o2)["userAccountSettings"]["adminUserSshPublicKey"],
            c["userAccountSettings"]["adminUserSshPublicKey"]);
}

// The launcher is the one the control plane was given (Services), never one it picks itself.
class RecordingLauncher final : public ProcessLauncher {
 public:
  pid_t spawn(const ProcessSpec& spec) override {
    specs.push_back(spec);
    return inner_->spawn(spec);
  }
  std::optional<ProcessExit> wait(pid_t pid, std::optional<std::chrono::milliseconds> timeout) override {
    return inner_->wait(pid, timeout);
  }
  bool signal_group(pid_t pgid, int signal) override { return inner_->signal_group(pgid, signal); }
  pid_t spawn_detached(const ProcessSpec& spec) override {
    specs.push_back(spec);
    return inner_->spawn_detached(spec);
  }
  std::vector<ProcessSpec> specs;

 private:
  std::unique_ptr<ProcessLauncher> inner_ = make_posix_process_launcher();
};

TEST_F(ControlPlaneTest, ProcessesStartThroughTheInjectedLauncher) {
  auto recorder = std::make_shared<RecordingLauncher>();
  launcher_ = recorder;
  open(Micros(0));
  auto ws = make_workspace();
  cp_->clusters().create(cluster_options("c", 1));
  NodeExecOptions e;
  e.exec = "echo through-the-seam";
  ::testing::internal::CaptureStdout();
  cp_->nodes().exec(ws, "c", e);
  EXPECT_NE(::testing::internal::GetCapturedStdout().find("through-the-seam"), std::string::npos);
  ASSERT_EQ(recorder->specs.size(), 1u);
  EXPECT_EQ(recorder->specs[0].env.at("BATCHAI_EXEC_COMMAND"), "echo through-the-seam");
}

TEST_F(ControlPlaneTest, WithoutALauncherProcessesAreRefused) {
  launcher_ = nullptr;
  open(Micros(0));
  auto ws = make_workspace();
  cp_->clusters().create(cluster_options("c", 1));  // resources need no process
  NodeExecOptions e;
  e.exec = "true";
  EXPECT_THROW(cp_->nodes().exec(ws, "c", e), SystemError);
}

// The storage placeholders of mounts come from the caller's environment as the CLI passes it, never
// from this process's own: under `serve`, an ARM PUT must not pick up the server's storage account
// and key (issue 54).
TEST_F(ControlPlaneTest, MountPlaceholdersComeFromTheCallersEnvironmentNotTheProcesss) {
  auto ws = make_workspace();
  cp_->storage_accounts().create("rg", "acct", std::nullopt, "Standard_LRS", "Storage");
  const std::string key = cp_->storage_accounts().keys(std::nullopt, "acct")[0]["value"];
  ::setenv("AZURE_BATCHAI_STORAGE_ACCOUNT", "acct", 1);  // the server's environment
  ::setenv("AZURE_BATCHAI_STORAGE_KEY", key.c_str(), 1);
  auto o = cluster_options("c", 1);
  o.mounts.afs_name = "share";
  expect_error<InvalidArgument>(
      [&] { cp_->clusters().create(o); },
      "Please configure Azure Storage account name via AZURE_BATCHAI_STORAGE_ACCOUNT or provide storage_account value "
      "in batchai section of your az configuration file.");
  ::unsetenv("AZURE_BATCHAI_STORAGE_ACCOUNT");
  ::unsetenv("AZURE_BATCHAI_STORAGE_KEY");
  o.mounts.environment_account_name = "acct";  // the caller's, as the CLI reads it
  o.mounts.environment_account_key = key;
  const Json c = cp_->clusters().create(o);
  EXPECT_EQ(c["nodeSetup"]["mountVolumes"]["azureFileShares"][0]["accountName"], "acct");
}

}  // namespace
}  // namespace batchai::control_plane
