// Node counts are range-checked where they enter the control plane (issue 13): negative
// counts, counts past int32 in configuration files, and sizes past the regional vCPU quota of
// list-usages are refused; rows stored before these checks neither crash nor flood the disk.
#include <string>

#include "cluster_rules.hpp"
#include "mount_rules.hpp"
#include "vm_sizes.hpp"
#include "fixture.hpp"

namespace batchai::control_plane {
namespace {

using testing::ControlPlaneTest;
using testing::expect_error;
using testing::kSshKey;
using testing::write_file;
namespace fs = std::filesystem;

std::string quota_error(int in_use, int requested, const std::string& quota = "Total Cluster Dedicated Regional vCPUs") {
  return "Operation results in exceeding quota limits of " + quota + " in eastus. Maximum allowed: 100, Current in use: " +
         std::to_string(in_use) + ", Additional requested: " + std::to_string(requested) +
         ". Ask for fewer nodes or a smaller VM size, or shrink or delete other clusters (each counts its target, or its "
         "auto-scale maximum; 'batchai list-usages -l eastus' shows the usage).";
}

TEST_F(ControlPlaneTest, NegativeNodeCountsAreRefused) {
  auto ws = make_workspace();
  ClusterCreateOptions o = cluster_options("c", 0);
  o.target.reset();
  o.min_nodes = -2;
  o.max_nodes = -1;
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); }, "properties.scaleSettings.autoScale.minimumNodeCount must be 0 or more nodes, got -2.");
  o = cluster_options("c", -1);
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); },
                                "properties.scaleSettings.manual.targetNodeCount must be 0 or more nodes, got -1.");
  EXPECT_TRUE(cp_->clusters().list(ws).empty());
  cp_->clusters().create(cluster_options("c", 0));
  expect_error<InvalidArgument>([&] { cp_->clusters().auto_scale(ws, "c", -2, -1); },
                                "properties.scaleSettings.autoScale.minimumNodeCount and maximumNodeCount must be 0 or more nodes, got -2 and -1.");
  expect_error<InvalidArgument>([&] { cp_->clusters().resize(ws, "c", -1); },
                                "properties.scaleSettings.manual.targetNodeCount must be 0 or more nodes, got -1.");
}

TEST_F(ControlPlaneTest, StoredNegativeOrHugeSizesNeitherCrashNorFlood) {
  auto ws = make_workspace();
  cp_->clusters().create(cluster_options("c", 1));
  EXPECT_EQ(cp_->clusters().show(ws, "c")["currentNodeCount"], 1);
  // As `cluster create --min -2 --max -1` stored them before counts were checked: every
  // reconciling command died with SIGSEGV.
  cp_->store().write([&] {
    cp_->store().prepare("UPDATE clusters SET scale_mode = 'auto', target = 0, min_nodes = -2, max_nodes = -1, pending = 1").run();
  });
  EXPECT_EQ(cp_->clusters().show(ws, "c")["currentNodeCount"], 0);
  // As `-t 1000000000` stored it: never more nodes than the quota allows of the smallest VM.
  cp_->store().write([&] {
    cp_->store().prepare("UPDATE clusters SET scale_mode = 'manual', target = 150, min_nodes = 0, max_nodes = 0, pending = 1").run();
  });
  EXPECT_EQ(cp_->clusters().show(ws, "c")["currentNodeCount"], kRegionalVcpuQuota);
}

TEST_F(ControlPlaneTest, RegionalVcpuQuotaBoundsCreateResizeAndAutoScale) {
  auto ws = make_workspace();
  // Standard_NC6 has 6 vCPUs: 16 nodes (96 vCPUs) is the largest cluster that fits.
  cp_->clusters().create(cluster_options("nc", 16));
  ClusterCreateOptions d1 = cluster_options("d1", 5);
  d1.vm_size = "Standard_D1";
  try {
    cp_->clusters().create(d1);
    ADD_FAILURE() << "a cluster past the quota was created";
  } catch (const Conflict& e) {
    EXPECT_EQ(std::string(e.what()), quota_error(96, 5));
    EXPECT_EQ(e.code(), "OperationNotAllowed");
  }
  d1.target = 4;  // exactly the 100 vCPUs of the quota
  cp_->clusters().create(d1);
  expect_error<Conflict>([&] { cp_->clusters().resize(ws, "d1", 5); }, quota_error(100, 1));
  expect_error<Conflict>([&] { cp_->clusters().auto_scale(ws, "d1", 0, 6); }, quota_error(100, 2));
  cp_->clusters().auto_scale(ws, "d1", 0, 4);  // the same room as before is fine
  cp_->clusters().resize(ws, "nc", 15);        // shrinking always is
  cp_->clusters().resize(ws, "d1", 10);        // and frees room for others
  expect_error<Conflict>([&] { cp_->clusters().create(cluster_options("more", 1)); }, quota_error(100, 6));
  // Low priority nodes have a quota of their own.
  ClusterCreateOptions low = cluster_options("low", 16);
  low.vm_priority = "lowpriority";
  cp_->clusters().create(low);
  low.name = "low2";
  low.target = 1;
  expect_error<Conflict>([&] { cp_->clusters().create(low); }, quota_error(96, 6, "Total Cluster Low Priority Regional vCPUs"));
  // -t 1000000000 (which hung every later command) ends with the same error, nothing stored.
  d1.name = "huge";
  d1.target = 1000000000;
  expect_error<Conflict>([&] { cp_->clusters().create(d1); }, quota_error(100, 1000000000));
  EXPECT_EQ(cp_->clusters().list(ws).size(), 3u);
}

TEST_F(ControlPlaneTest, ConfigFileScaleSettingsAreRangeChecked) {
  auto ws = make_workspace();
  ClusterCreateOptions o = cluster_options("c", 0);
  o.target.reset();
  auto with_scale = [&](const std::string& scale) {
    o.config = Json::parse(R"({"properties": {"scaleSettings": )" + scale + "}}");
  };
  with_scale(R"({"autoScale": {"minimumNodeCount": -2, "maximumNodeCount": -1}})");
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); },
                                "scaleSettings.autoScale.minimumNodeCount must be at least 0 and at most 2147483647, got -2.");
  with_scale(R"({"manual": {"targetNodeCount": 2147483648}})");
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); },
                                "scaleSettings.manual.targetNodeCount must be at least 0 and at most 2147483647, got 2147483648.");
  with_scale(R"({"manual": {"targetNodeCount": "2"}})");
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); },
                                "scaleSettings.manual.targetNodeCount must be an integer (at least 0 and at most "
                                "2147483647), got \"2\".");
  with_scale(R"({"autoScale": {"minimumNodeCount": 3, "maximumNodeCount": 2}})");
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); },
                                "scaleSettings.autoScale.maximumNodeCount (2) must be greater or equal to minimumNodeCount (3).");
  with_scale(R"({"autoScale": {"maximumNodeCount": 2}})");
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); },
                                "scaleSettings.autoScale.minimumNodeCount is required in the cluster configuration.");
  o.config = Json::parse(R"({"properties": {"vmSize": 5, "scaleSettings": {"manual": {"targetNodeCount": 1}}}})");
  o.vm_size.reset();
  expect_error<InvalidArgument>([&] { cp_->clusters().create(o); },
                                "The cluster configuration has a value of the wrong type: type must be string, but is number.");
  o.vm_size = "Standard_NC6";
  with_scale(R"({"autoScale": {"minimumNodeCount": 0, "maximumNodeCount": 16, "initialNodeCount": 1}})");
  EXPECT_EQ(cp_->clusters().create(o)["scaleSettings"]["autoScale"]["maximumNodeCount"], 16);
  EXPECT_EQ(cp_->clusters().list(ws).size(), 1u);
}

TEST_F(ControlPlaneTest, FileServerDisksAreRangeChecked) {
  auto ws = make_workspace();
  FileServerCreateOptions o;
  o.where = ws;
  o.name = "nfs";
  o.admin.user_name = "u";
  o.admin.ssh_key = kSshKey;
  o.vm_size = "Standard_D14";
  o.storage_sku = "Standard_LRS";
  o.disk_size = 4096;
  o.disk_count = 1;
  expect_error<InvalidArgument>([&] { cp_->file_servers().create(o); }, "--disk-size must be at least 1 and at most 4095, got 4096.");
  o.disk_size = -5;
  expect_error<InvalidArgument>([&] { cp_->file_servers().create(o); }, "--disk-size must be at least 1 and at most 4095, got -5.");
  o.disk_size = 4095;
  o.disk_count = 65;
  expect_error<InvalidArgument>([&] { cp_->file_servers().create(o); }, "--disk-count must be at least 1 and at most 64, got 65.");
  o.disk_count = 64;
  Json created = *cp_->file_servers().create(o);
  EXPECT_EQ(created["dataDisks"]["diskCount"], 64);
  EXPECT_EQ(created["dataDisks"]["diskSizeInGb"], 4095);
  o.name = "nfs2";
  o.disk_size.reset();
  o.disk_count.reset();
  o.config = Json::parse(R"({"properties": {"dataDisks": {"diskSizeInGB": 10, "diskCount": 4294967297}}})");
  expect_error<InvalidArgument>([&] { cp_->file_servers().create(o); },
                                "dataDisks.diskCount must be at least 1 and at most 64, got 4294967297.");
  o.config = Json::parse(R"({"properties": {"dataDisks": {"diskSizeInGB": 10.5, "diskCount": 1}}})");
  expect_error<InvalidArgument>([&] { cp_->file_servers().create(o); },
                                "dataDisks.diskSizeInGB must be an integer (at least 1 and at most 4095), got 10.5.");
}

TEST_F(ControlPlaneTest, ClusterFileListExpiryIsFiveToSixHundredMinutes) {
  auto ws = make_workspace();
  cp_->clusters().create(cluster_options("c", 0));
  expect_error<InvalidArgument>([&] { cp_->nodes().file_list(ws, "c", ".", 4); },
                                "linkexpiryinminutes must be at least 5 and at most 600, got 4.");
  expect_error<InvalidArgument>([&] { cp_->nodes().file_list(ws, "c", ".", 601); },
                                "linkexpiryinminutes must be at least 5 and at most 600, got 601.");
  EXPECT_EQ(cp_->nodes().file_list(ws, "c", ".", 600), Json::array());
  EXPECT_EQ(cp_->nodes().file_list(ws, "c", ".", 5), Json::array());
}

}  // namespace
}  // namespace batchai::control_plane
