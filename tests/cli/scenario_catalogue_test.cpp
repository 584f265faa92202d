// The CLI-side message catalogue of docs/behaviour.md §4.11 as printed by the executable (`ERROR: <text>`,
// exit 1), beyond the cluster-create ones in scenario_cluster_test.cpp, plus logging switches.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli_harness.hpp"

namespace batchai::cli::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class CatalogueScenario : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
    ASSERT_EQ(run({"workspace", "create", "-g", "rg", "-n", "ws"}).exit_code, 0);
  }
  CliResult run(std::vector<std::string> args) { return cli_.run(args); }
  std::string error_of(std::vector<std::string> args) {
    CliResult r = run(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out, "");
    return r.err;
  }
  CliHarness cli_;
};

TEST_F(CatalogueScenario, StorageMountMessages) {
  std::vector<std::string> base = {"cluster", "create", "-g", "rg", "-w", "ws", "-n", "c", "-s", "Standard_D1",
                                   "-t", "1", "-u", "me", "-p", "pw"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  EXPECT_THAT(error_of(with({"--afs-name", "share"})),
              HasSubstr("ERROR: Please configure Azure Storage account name via AZURE_BATCHAI_STORAGE_ACCOUNT or "
                        "provide storage_account value in batchai section of your az configuration file."));
  EXPECT_THAT(error_of(with({"--afs-name", "share", "--storage-account-name", "nosuchacct"})),
              HasSubstr("ERROR: Cannot find \"nosuchacct\" storage account."));
  EXPECT_THAT(error_of(with({"--afs-name", "share", "--storage-account-name", "a", "--storage-account-key", "k",
                             "--afs-mount-path", ""})),
              HasSubstr("ERROR: Azure File share relative mount path cannot be empty."));
}

TEST_F(CatalogueScenario, AdminAccountMessages) {
  // HOME is the test folder: no ~/.ssh/id_rsa.pub to fall back on.
  EXPECT_THAT(error_of({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "c", "-s", "Standard_D1", "-t", "1"}),
              HasSubstr("ERROR: Please provide admin user password or ssh key."));
  EXPECT_THAT(error_of({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "c", "-s", "Standard_D1", "-t", "1",
                        "-k", "not-a-key"}),
              HasSubstr("ERROR: Incorrect ssh public key value."));
}

TEST_F(CatalogueScenario, FileServerMessages) {
  std::vector<std::string> base = {"file-server", "create", "-g", "rg", "-w", "ws", "-n", "fs", "-u", "me", "-p", "pw"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  EXPECT_THAT(error_of(with({"-s", "Standard_D14", "--disk-size", "10", "--storage-sku", "Standard_LRS"})),
              HasSubstr("ERROR: Please provide number of data disks (at least one disk is required)."));
  EXPECT_THAT(error_of(with({"-s", "Standard_D14", "--disk-size", "10", "--disk-count", "1"})),
              HasSubstr("ERROR: Please provide storage account type (storage sku)."));
  EXPECT_THAT(error_of(with({"--disk-size", "10", "--disk-count", "1", "--storage-sku", "Standard_LRS"})),
              HasSubstr("ERROR: Please provide VM size."));
}

TEST_F(CatalogueScenario, NodeExecAndSetupFileMessages) {
  ASSERT_EQ(run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "empty", "-s", "Standard_D1", "-t", "0", "-u",
                 "me", "-p", "pw"}).exit_code, 0);
  EXPECT_THAT(error_of({"cluster", "node", "exec", "-g", "rg", "-w", "ws", "-c", "empty", "--exec", "true"}),
              HasSubstr("ERROR: No nodes available in the cluster"));
  ASSERT_EQ(run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "one", "-s", "Standard_D1", "-t", "1", "-u",
                 "me", "-p", "pw", "--setup-task", "true", "--setup-task-output", "$AZ_BATCHAI_MOUNT_ROOT/local"})
                .exit_code,
            0);
  EXPECT_THAT(error_of({"cluster", "node", "exec", "-g", "rg", "-w", "ws", "-c", "one", "-n", "nosuchnode", "--exec",
                        "true"}),
              HasSubstr("ERROR: Cannot find a node with id=nosuchnode"));
  EXPECT_THAT(error_of({"cluster", "file", "list", "-g", "rg", "-w", "ws", "-c", "one"}),
              HasSubstr("ERROR: List files is supported only for clusters with startup task configure to store its "
                        "output on Azure File Share or Azure Blob Container"));
}

// The setup task's logs stay beneath the node's mount root: a folder of this machine named
// outright, or reached with "..", is refused before anything is created.
TEST_F(CatalogueScenario, SetupTaskOutputStaysInTheNodesMounts) {
  for (const std::string& out : {(cli_.dir() / "outside").string(), std::string("relative/logs"),
                                std::string("$AZ_BATCHAI_MOUNT_ROOT/../../../outside"), std::string("$AZ_BATCHAI_MOUNT_ROOTX")}) {
    CliResult r = run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "st", "-s", "Standard_D1", "-t", "1", "-u",
                       "me", "-p", "pw", "--setup-task", "true", "--setup-task-output", out});
    EXPECT_EQ(r.exit_code, 1) << out;
    EXPECT_THAT(r.err, HasSubstr("ERROR: The setup task output path")) << out;
  }
  EXPECT_FALSE(std::filesystem::exists(cli_.dir() / "outside"));
  EXPECT_EQ(run({"cluster", "show", "-g", "rg", "-w", "ws", "-n", "st"}).exit_code, 3);
}

TEST_F(CatalogueScenario, LoggingSwitches) {
  CliResult r = run({"workspace", "show", "-g", "rg", "-n", "ws", "--debug", "--subscription", "mysub"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("DEBUG: "));
  r = run({"workspace", "show", "-g", "rg", "-n", "ws", "--subscription", "mysub"});
  EXPECT_THAT(r.err, Not(HasSubstr("DEBUG: ")));
  r = run({"workspace", "show", "-g", "rg", "-n", "nope", "--only-show-errors"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("ERROR: The specified workspace nope is not found"));
}

}  // namespace
}  // namespace batchai::cli::testing
