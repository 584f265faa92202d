// Hostile names and locations at the command line (issue 24 rows 7, 9, 12): a location that is no
// Azure region is refused in one ERROR line and nothing is stored (so `-o tsv`/`-o table` can print
// no forged row); storage listings survive names a job made that are not UTF-8; names over
// Azure's lengths are refused cleanly instead of failing on disk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "cli_harness.hpp"

namespace batchai::cli::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
namespace fs = std::filesystem;

class NamesScenario : public ::testing::Test {
 protected:
  CliResult run(const std::vector<std::string>& args) { return cli_.run(args); }
  static void expect_refusal(const CliResult& r, const std::string& text) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, StartsWith("ERROR: "));
    EXPECT_THAT(r.err, HasSubstr(text));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  CliHarness cli_;
};

TEST_F(NamesScenario, LocationsMustBeAzureRegions) {
  expect_refusal(run({"group", "create", "-n", "forged", "-l", "east\nus\tforged"}),
                 "The provided location 'east\\nus\\tforged' is not available for resource group.");
  expect_refusal(run({"group", "create", "-n", "forged", "-l", "atlantis"}), "List of available regions is 'eastus,");
  EXPECT_EQ(run({"group", "show", "-n", "forged"}).exit_code, 3);
  EXPECT_EQ(run({"group", "list", "-o", "tsv"}).out, "");
  // ARM's matching: "East US" is eastus, stored the way ARM stores it.
  auto ok = run({"group", "create", "-n", "rg", "-l", "East US", "--query", "location", "-o", "tsv"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "eastus\n");
  expect_refusal(run({"workspace", "create", "-g", "rg", "-n", "ws", "-l", "east\nus"}),
                 "is not available for resource type 'Microsoft.BatchAI/workspaces'");
  EXPECT_EQ(run({"workspace", "list", "-o", "tsv"}).out, "");
  expect_refusal(run({"storage", "account", "create", "-g", "rg", "-n", "acct1", "-l", "eastus\tx"}),
                 "is not available for resource type 'Microsoft.Storage/storageAccounts'");
  EXPECT_EQ(run({"storage", "account", "list", "-o", "tsv"}).out, "");
  auto table = run({"group", "list", "-o", "table"});
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_EQ(std::count(table.out.begin(), table.out.end(), '\n'), 3) << table.out;  // header, rule, one row
}

TEST_F(NamesScenario, StorageListingsSurviveNamesThatAreNotUtf8) {
  ASSERT_EQ(run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
  ASSERT_EQ(run({"storage", "account", "create", "-g", "rg", "-n", "acct1"}).exit_code, 0);
  ASSERT_EQ(run({"storage", "share", "create", "-n", "logs", "--account-name", "acct1"}).exit_code, 0);
  ASSERT_EQ(run({"storage", "container", "create", "-n", "models", "--account-name", "acct1"}).exit_code, 0);
  // What a job with the share or container mounted can leave there.
  const fs::path account = cli_.home() / "storage" / "acct1";
  std::ofstream(account / "shares" / "logs" / "bad\xff") << "1";
  std::ofstream(account / "blobs" / "models" / "bad\xfe") << "2";
  auto files = run({"storage", "file", "list", "-s", "logs", "--account-name", "acct1", "-o", "json"});
  EXPECT_EQ(files.exit_code, 0) << files.err;
  EXPECT_EQ(files.json()[0]["name"], "bad\xEF\xBF\xBD");
  auto blobs = run({"storage", "blob", "list", "-c", "models", "--account-name", "acct1", "--query", "[].name", "-o", "tsv"});
  EXPECT_EQ(blobs.exit_code, 0) << blobs.err;
  EXPECT_EQ(blobs.out, "bad\xEF\xBF\xBD\n");
  // The name itself is refused as an argument: it is no name the service can hold.
  expect_refusal(run({"storage", "file", "delete", "-s", "logs", "-p", "bad\xff", "--account-name", "acct1"}),
                 "not valid UTF-8");
  // Azure's lengths: a 300-character blob name is refused, not a failure of the disk.
  const fs::path local = cli_.write_file("x.bin", "x");
  expect_refusal(run({"storage", "blob", "upload", "-c", "models", "-n", std::string(300, 'b'), "-f", local.string(),
                      "--account-name", "acct1"}),
                 "The specified resource name length is not within the permissible limits.");
}

}  // namespace
}  // namespace batchai::cli::testing
