// Test fixture for the control plane: a temporary BATCHAI_HOME (and HOME, so ~/.ssh is a
// scratch folder), zero simulated delays and a ManualClock the tests move by hand.
#pragma once
#include <cstdlib>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "batchai/common/errors.hpp"
#include "batchai/common/process.hpp"
#include "batchai/control_plane/control_plane.hpp"
#include "store/store.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace batchai::control_plane::testing {

using batchai::test::read_file;
using batchai::test::write_file;

// A valid ssh-rsa public key line (type string "ssh-rsa" inside the base64 blob).
inline const char* kSshKey =
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAACQDHx8fHx8fHxw== user@host";

class ControlPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(root_ / "user");
    ::unsetenv("AZURE_BATCHAI_STORAGE_ACCOUNT");
    ::unsetenv("AZURE_BATCHAI_STORAGE_KEY");
    clock_ = std::make_shared<ManualClock>(TimePoint(std::chrono::seconds(1529000000)));
    open(Micros(0));
  }
  void TearDown() override {
    cp_.reset();
  }
  void open(Micros delay) {
    // Read once at open, as the composition root does (HOME, USER, SLURM_CONF, ...): a test that
    // changes the environment opens again.
    Settings s = Settings::from_environment();
    s.home = root_ / "home";
    s.provisioning_delay = delay;
    s.node_preparation_delay = delay;
    cp_.reset();
    cp_ = ControlPlane::open(s, Services{clock_, launcher_});
  }
  // Group "rg" + workspace "ws" in eastus.
  WorkspaceRef make_workspace() {
    cp_->groups().create("rg", "eastus", std::nullopt);
    cp_->workspaces().create("rg", "ws", std::nullopt);
    return {"rg", "ws"};
  }
  ClusterCreateOptions cluster_options(const std::string& name, int target) {
    ClusterCreateOptions o;
    o.where = {"rg", "ws"};
    o.name = name;
    o.vm_size = "Standard_NC6";
    o.target = target;
    o.admin.user_name = "alice";
    o.admin.password = "secret";
    return o;
  }
  // A file server "name" in rg/ws: one 10 GB Standard_LRS disk on a Standard_D1, admin u/p.
  FileServerCreateOptions file_server_options(const std::string& name) {
    FileServerCreateOptions o;
    o.where = {"rg", "ws"};
    o.name = name;
    o.admin.user_name = "u";
    o.admin.password = "p";
    o.disk_size = 10;
    o.disk_count = 1;
    o.storage_sku = "Standard_LRS";
    o.vm_size = "Standard_D1";
    return o;
  }
  // Job `name` in rg/ws/exp on `cluster`: one node running `true`, its file written under root_.
  JobCreateOptions custom_job_options(const std::string& name, const std::string& cluster) {
    const auto file = root_ / (name + ".json");
    write_file(file, R"({"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
                         "customToolkitSettings": {"commandLine": "true"}}})");
    JobCreateOptions o;
    o.where = {"rg", "ws"};
    o.experiment = "exp";
    o.name = name;
    o.cluster = cluster;
    o.config = load_json_file(file);
    return o;
  }
  // Reconciles until `pred` holds on the cluster document, for up to 10 s of real time (setup
  // tasks are real processes).
  template <typename Pred>
  Json wait_cluster(const WorkspaceRef& ws, const std::string& name, Pred pred) {
    Json doc;
    for (int i = 0; i < 500; ++i) {
      doc = cp_->clusters().show(ws, name);
      if (pred(doc)) return doc;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return doc;
  }

  batchai::test::TempDir tmp_{"batchai-cp-test"};
  std::filesystem::path root_ = tmp_.path();
  batchai::test::ScopedEnv home_env_{"HOME", (root_ / "user").string()};
  std::shared_ptr<ManualClock> clock_;
  std::shared_ptr<ProcessLauncher> launcher_ = make_posix_process_launcher();  // tests may swap in a fake
  std::unique_ptr<ControlPlane> cp_;
};

// Expects `fn` to throw exception type E with exactly `message`.
template <typename E, typename F>
void expect_error(F&& fn, const std::string& message) {
  try {
    fn();
    ADD_FAILURE() << "expected an error: " << message;
  } catch (const E& e) {
    EXPECT_EQ(std::string(e.what()), message);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type, message: " << e.what();
  }
}

}  // namespace batchai::control_plane::testing
