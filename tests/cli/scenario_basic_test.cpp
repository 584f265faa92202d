// The command tree from the outside: help on every group and command, argparse-style usage
// errors (exit 2), configured defaults, confirmation prompts and the exit codes of docs/output.md §2.5.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli_harness.hpp"

namespace batchai::cli::testing {
namespace {

using ::testing::HasSubstr;

const std::vector<std::vector<std::string>> kLeafCommands = {
    {"group", "create"}, {"group", "show"}, {"group", "list"}, {"group", "delete"}, {"group", "exists"},
    {"storage", "account", "create"}, {"storage", "account", "show"}, {"storage", "account", "list"},
    {"storage", "account", "delete"}, {"storage", "account", "keys", "list"},
    {"storage", "share", "create"}, {"storage", "share", "delete"}, {"storage", "share", "list"},
    {"storage", "share", "exists"}, {"storage", "directory", "create"}, {"storage", "directory", "delete"},
    {"storage", "directory", "list"}, {"storage", "file", "upload"}, {"storage", "file", "download"},
    {"storage", "file", "list"}, {"storage", "file", "delete"}, {"storage", "container", "create"},
    {"storage", "container", "delete"}, {"storage", "container", "list"}, {"storage", "blob", "upload"},
    {"storage", "blob", "upload-batch"}, {"storage", "blob", "download"}, {"storage", "blob", "list"},
    {"storage", "blob", "delete"},
    {"workspace", "create"}, {"workspace", "show"}, {"workspace", "list"}, {"workspace", "delete"},
    {"experiment", "create"}, {"experiment", "show"}, {"experiment", "list"}, {"experiment", "delete"},
    {"cluster", "create"}, {"cluster", "show"}, {"cluster", "list"}, {"cluster", "delete"},
    {"cluster", "resize"}, {"cluster", "auto-scale"}, {"cluster", "node", "list"}, {"cluster", "node", "exec"},
    {"cluster", "file", "list"}, {"file-server", "create"}, {"file-server", "show"}, {"file-server", "list"},
    {"file-server", "delete"}, {"list-usages"}};

TEST(CliHelpTest, EveryCommandHasHelpWithExamplesAndGlobalOptions) {
  CliHarness cli;
  for (const auto& command : kLeafCommands) {
    for (bool alias : {false, true}) {
      if (alias && (command[0] == "group" || command[0] == "storage")) continue;
      // Built front to back: GCC 12 warns (-Wnull-dereference, a false positive) on a vector
      // insert at begin().
      std::vector<std::string> args;
      if (alias) args.emplace_back("batchai");
      args.insert(args.end(), command.begin(), command.end());
      std::string name;
      for (const auto& a : args) name += a + " ";
      args.push_back("-h");
      CliResult r = cli.run(args);
      EXPECT_EQ(r.exit_code, 0) << name << r.err;
      EXPECT_THAT(r.out, HasSubstr("Examples")) << name;
      EXPECT_THAT(r.out, HasSubstr("--output")) << name;
      EXPECT_THAT(r.out, HasSubstr("--query")) << name;
      EXPECT_THAT(r.out, HasSubstr("--only-show-errors")) << name;
    }
  }
}

TEST(CliHelpTest, GroupsAndRootPrintHelp) {
  CliHarness cli;
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {}, {"cluster"}, {"cluster", "node"}, {"storage"}, {"batchai"}, {"batchai", "cluster"}, {"--help"},
           {"file-server", "-h"}}) {
    CliResult r = cli.run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("Usage"));
  }
  EXPECT_THAT(cli.run({"cluster"}).out, HasSubstr("auto-scale"));
}

TEST(CliStartupTest, CommandsDoNotLoadTheGpuLibraries) {
  // The dynamic loader lists what the executable loads at start-up: the CUDA libraries belong to
  // the on-demand plugin only (their initialisers alone cost tens of milliseconds per command).
  CliHarness cli;
  CliResult r = cli.run({"group", "list"}, {{"LD_TRACE_LOADED_OBJECTS", "1"}});
  EXPECT_THAT(r.out, HasSubstr("libsqlite3"));  // the trace really ran
  for (const char* lib : {"libcudart", "libcublas", "libcudnn", "libnccl"})
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr(lib))) << r.out;
}

TEST(CliUsageTest, MissingRequiredArgumentsReadLikeArgparse) {
  CliHarness cli;
  CliResult r = cli.run({"cluster", "create", "-g", "rg"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("usage: batchai cluster create [-h]"));
  EXPECT_THAT(r.err, HasSubstr("batchai cluster create: error: the following arguments are required: "
                               "--workspace/-w, --name/-n"));
  EXPECT_EQ(r.out, "");
  r = cli.run({"batchai", "cluster", "create", "-w", "ws"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("batchai batchai cluster create: error: the following arguments are required: "
                               "--resource-group/-g, --name/-n"));
}

TEST(CliUsageTest, IntOptionsRejectNonNumbers) {
  CliHarness cli;
  CliResult r = cli.run({"cluster", "resize", "-g", "rg", "-w", "ws", "-n", "c", "-t", "two"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("invalid int value: 'two'"));
  r = cli.run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "c", "--min", "1.5", "--max", "3"});
  EXPECT_EQ(r.exit_code, 2);
  r = cli.run({"file-server", "create", "-g", "rg", "-w", "ws", "-n", "f", "--disk-count", "x"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(CliUsageTest, UnknownOptionsChoicesAndFormatsAreUsageErrors) {
  CliHarness cli;
  CliResult r = cli.run({"workspace", "list", "--bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("batchai workspace list: error: unrecognized arguments"));
  r = cli.run({"workspace", "list", "-o", "xml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("invalid choice: 'xml'"));
  r = cli.run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "c", "--vm-priority", "cheap"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("invalid choice: 'cheap'"));
  r = cli.run({"cluster", "frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  r = cli.run({"workspace", "show", "-g", "rg", "-n"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("batchai workspace show: error: argument --workspace/-n: expected one argument"));
}

TEST(CliUsageTest, InvalidQueryIsAUsageErrorNamingThePosition) {
  CliHarness cli;
  CliResult r = cli.run({"workspace", "list", "--query", "[?name=="});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("argument --query: invalid jmespath_type value: '[?name=='"));
  EXPECT_THAT(r.err, HasSubstr("position"));
}

TEST(CliExitCodeTest, ShowOfMissingResourceExits3OthersExit1) {
  CliHarness cli;
  ASSERT_EQ(cli.run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
  CliResult r = cli.run({"workspace", "show", "-g", "rg", "-n", "nope"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("ERROR: The specified workspace nope is not found"));
  EXPECT_EQ(r.out, "");
  r = cli.run({"experiment", "create", "-g", "rg", "-w", "nope", "-n", "e"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("ERROR: "));
  r = cli.run({"group", "show", "-n", "missing"});
  EXPECT_EQ(r.exit_code, 3);
}

TEST(CliExitCodeTest, ConfirmationWithoutTtyNeedsYes) {
  CliHarness cli;
  ASSERT_EQ(cli.run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
  ASSERT_EQ(cli.run({"workspace", "create", "-g", "rg", "-n", "ws"}).exit_code, 0);
  CliResult r = cli.run({"workspace", "delete", "-g", "rg", "-n", "ws"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("ERROR: Unable to prompt for confirmation as no tty available. Use --yes."));
  EXPECT_EQ(cli.run({"workspace", "show", "-g", "rg", "-n", "ws"}).exit_code, 0);
  r = cli.run({"workspace", "delete", "-g", "rg", "-n", "ws", "-y"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(cli.run({"workspace", "show", "-g", "rg", "-n", "ws"}).exit_code, 3);
}

TEST(CliExitCodeTest, ConfirmationPromptOnATty) {
  if (!std::filesystem::exists("/usr/bin/script")) GTEST_SKIP() << "script(1) not installed";
  CliHarness cli;
  ASSERT_EQ(cli.run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
  ASSERT_EQ(cli.run({"workspace", "create", "-g", "rg", "-n", "ws"}).exit_code, 0);
  CliResult r = cli.run_in_pty({"workspace", "delete", "-g", "rg", "-n", "ws"}, "n\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("Are you sure you want to perform this operation? (y/n): "));
  EXPECT_THAT(r.out, HasSubstr("ERROR: Operation cancelled."));
  EXPECT_EQ(cli.run({"workspace", "show", "-g", "rg", "-n", "ws"}).exit_code, 0);
  r = cli.run_in_pty({"workspace", "delete", "-g", "rg", "-n", "ws"}, "maybe\ny\n");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(cli.run({"workspace", "show", "-g", "rg", "-n", "ws"}).exit_code, 3);
}

TEST(CliDefaultsTest, ConfiguredGroupAndLocationAndOutput) {
  CliHarness cli;
  std::map<std::string, std::string> env = {{"AZURE_DEFAULTS_GROUP", "rg"}, {"AZURE_DEFAULTS_LOCATION", "westus2"}};
  ASSERT_EQ(cli.run({"group", "create", "-n", "rg"}, env).exit_code, 0);
  CliResult r = cli.run({"workspace", "create", "-n", "ws"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json()["location"], "westus2");
  EXPECT_EQ(r.json()["resourceGroup"], "rg");
  r = cli.run({"workspace", "show", "-n", "ws"}, {{"AZURE_DEFAULTS_GROUP", "rg"}, {"AZURE_CORE_OUTPUT", "tsv"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\tws\t"));
}

TEST(CliAliasTest, BatchaiPrefixRunsTheSameCommands) {
  CliHarness cli;
  ASSERT_EQ(cli.run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
  CliResult a = cli.run({"batchai", "workspace", "create", "-g", "rg", "-n", "ws"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  CliResult b = cli.run({"workspace", "show", "-g", "rg", "-n", "ws"});
  EXPECT_EQ(a.json(), b.json());
  CliResult c = cli.run({"batchai", "list-usages", "-l", "eastus", "--query", "length(@)"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
}

}  // namespace
}  // namespace batchai::cli::testing
