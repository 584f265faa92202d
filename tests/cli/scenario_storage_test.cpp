// `batchai group` and `batchai storage ...` as the Batch AI tutorial uses them: the uploaded
// files land where mounts will see them, and a wrong account key is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "cli_harness.hpp"
#include "support/files.hpp"

namespace batchai::cli::testing {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

class StorageScenario : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
    CliResult r = run({"storage", "account", "create", "-n", "acct1", "-g", "rg", "--sku", "Standard_LRS"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    CliResult keys = run({"storage", "account", "keys", "list", "-n", "acct1", "-g", "rg", "--query", "[0].value",
                          "-o", "tsv"});
    ASSERT_EQ(keys.exit_code, 0) << keys.err;
    key_ = keys.out.substr(0, keys.out.size() - 1);
    ASSERT_FALSE(key_.empty());
  }
  CliResult run(std::vector<std::string> args) { return cli_.run(args); }
  CliResult data(std::vector<std::string> args) {
    args.insert(args.end(), {"--account-name", "acct1", "--account-key", key_});
    return cli_.run(args);
  }
  CliHarness cli_;
  std::string key_;
};

TEST_F(StorageScenario, GroupsAndAccounts) {
  CliResult r = run({"group", "show", "-n", "rg"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json()["location"], "eastus");
  EXPECT_EQ(run({"group", "list", "--query", "[].name", "-o", "tsv"}).out, "rg\n");
  r = run({"storage", "account", "show", "-n", "acct1", "-g", "rg"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json()["name"], "acct1");
  EXPECT_EQ(run({"storage", "account", "list", "-g", "rg", "--query", "length(@)"}).out, "1\n");
  EXPECT_EQ(run({"storage", "account", "show", "-n", "nosuch", "-g", "rg"}).exit_code, 3);
  r = run({"storage", "account", "delete", "-n", "acct1", "-g", "rg", "-y"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(run({"storage", "account", "list", "-g", "rg", "--query", "length(@)"}).out, "0\n");
  r = run({"group", "delete", "-n", "rg", "-y"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(run({"group", "exists", "-n", "rg"}).out, "false\n");
}

TEST_F(StorageScenario, SharesDirectoriesAndFiles) {
  EXPECT_EQ(data({"storage", "share", "create", "-n", "share1"}).json()["created"], true);
  EXPECT_EQ(data({"storage", "share", "exists", "-n", "share1"}).json()["exists"], true);
  EXPECT_EQ(data({"storage", "share", "exists", "-n", "other"}).json()["exists"], false);
  EXPECT_THAT(data({"storage", "share", "list", "--query", "[].name", "-o", "tsv"}).out, HasSubstr("share1"));
  EXPECT_EQ(data({"storage", "directory", "create", "-s", "share1", "-n", "scripts"}).exit_code, 0);
  EXPECT_THAT(data({"storage", "directory", "list", "-s", "share1", "--query", "[].name", "-o", "tsv"}).out,
              HasSubstr("scripts"));
  auto source = cli_.write_file("train.py", "print('hello')\n");
  CliResult r = data({"storage", "file", "upload", "-s", "share1", "--source", source.string(), "--path", "scripts"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = data({"storage", "file", "list", "-s", "share1", "--path", "scripts", "--query", "[].name", "-o", "tsv"});
  EXPECT_EQ(r.out, "train.py\n") << r.err;
  auto dest = cli_.dir() / "copy.py";
  r = data({"storage", "file", "download", "-s", "share1", "-p", "scripts/train.py", "--dest", dest.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(test::read_file(dest), "print('hello')\n");
  EXPECT_EQ(data({"storage", "file", "delete", "-s", "share1", "-p", "scripts/train.py"}).exit_code, 0);
  EXPECT_EQ(data({"storage", "file", "list", "-s", "share1", "--path", "scripts"}).out, "[]\n");
  EXPECT_EQ(data({"storage", "directory", "delete", "-s", "share1", "-n", "scripts"}).exit_code, 0);
  EXPECT_EQ(data({"storage", "share", "delete", "-n", "share1"}).exit_code, 0);
  // Path traversal is refused.
  r = data({"storage", "file", "upload", "-s", "share1", "--source", source.string(), "--path", "../../escape"});
  EXPECT_NE(r.exit_code, 0);
}

TEST_F(StorageScenario, ContainersAndBlobs) {
  EXPECT_EQ(data({"storage", "container", "create", "-n", "cont1"}).exit_code, 0);
  EXPECT_THAT(data({"storage", "container", "list", "--query", "[].name", "-o", "tsv"}).out, HasSubstr("cont1"));
  auto file = cli_.write_file("data/a.bin", "AAAA");
  cli_.write_file("data/b.txt", "BB");
  CliResult r = data({"storage", "blob", "upload", "-c", "cont1", "-f", file.string(), "-n", "x/a.bin"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = data({"storage", "blob", "upload-batch", "-d", "cont1", "-s", (cli_.dir() / "data").string(), "--pattern", "*.txt"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A list result prints one row per item.
  r = data({"storage", "blob", "list", "-c", "cont1", "--query", "sort([].name)", "-o", "tsv"});
  EXPECT_EQ(r.out, "b.txt\nx/a.bin\n") << r.err;
  r = data({"storage", "blob", "list", "-c", "cont1", "--prefix", "x/", "--query", "[].name", "-o", "tsv"});
  EXPECT_EQ(r.out, "x/a.bin\n");
  auto dest = cli_.dir() / "a.copy";
  EXPECT_EQ(data({"storage", "blob", "download", "-c", "cont1", "-n", "x/a.bin", "-f", dest.string()}).exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(dest));
  EXPECT_EQ(data({"storage", "blob", "delete", "-c", "cont1", "-n", "x/a.bin"}).exit_code, 0);
  EXPECT_EQ(data({"storage", "container", "delete", "-n", "cont1"}).exit_code, 0);
}

TEST_F(StorageScenario, WrongKeyAndMissingAccountName) {
  CliResult r = run({"storage", "share", "create", "-n", "s", "--account-name", "acct1", "--account-key", "bogus"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("ERROR: "));
  r = run({"storage", "share", "create", "-n", "s"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("the following arguments are required: --account-name"));
  r = cli_.run({"storage", "share", "create", "-n", "share2"}, {{"AZURE_STORAGE_ACCOUNT", "acct1"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace batchai::cli::testing
