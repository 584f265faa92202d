// Argument parsing as az's argparse does it, through real commands: `-d=OUTPUT` as the Azure CLI's
// own scenario tests type it, `--name=VALUE` and attached short values, the last of repeated
// options, unique prefixes, values beginning with '-', and az's answer to a misspelled command
// (the most similar choice, exit 2). argparse_compat_test.py compares far more argv with Python.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli_harness.hpp"

namespace batchai::cli::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(CliArgparseTest, EqualsFormsAttachedValuesAndPrefixesReachTheCommand) {
  CliHarness cli;
  ASSERT_EQ(cli.run({"group", "create", "--name=rg", "-l=eastus", "--tags=team=ml"}).exit_code, 0);
  ASSERT_EQ(cli.run({"group", "create", "-nrg2", "--loc", "westus", "--tags", "-1"}).exit_code, 0);
  CliResult r = cli.run({"group", "show", "--resource-gr=rg", "--query", "[location, tags.team]", "-ojson"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json(), nlohmann::json({"eastus", "ml"}));
  r = cli.run({"group", "show", "-n", "rg2", "--query=tags", "-o", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json(), nlohmann::json({{"-1", ""}}));  // "-1" reads as a value, as argparse reads it
}

TEST(CliArgparseTest, RepeatedOptionsKeepTheLast) {
  CliHarness cli;
  ASSERT_EQ(cli.run({"group", "create", "-n", "first", "-n", "rg", "-l", "eastus", "--tags", "a=1", "b=2",
                     "--tags", "c=3"}).exit_code, 0);
  CliResult r = cli.run({"group", "list", "-o", "json", "-o", "tsv", "--query", "[].name"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "rg\n");
  r = cli.run({"group", "show", "-n", "rg", "--query", "tags"});
  EXPECT_EQ(r.json(), nlohmann::json({{"c", "3"}}));
}

TEST(CliArgparseTest, JobFileListReadsDashDEqualsAsTheDirectoryId) {
  CliHarness cli;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"group", "create", "-n", "rg", "-l", "eastus"},
           {"workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus"},
           {"experiment", "create", "-g", "rg", "-w", "ws", "-n", "ex"},
           {"cluster", "create", "-g", "rg", "-w", "ws", "-n", "c", "-s", "Standard_D1", "-t", "1", "-u", "me",
            "-p", "pw"}}) {
    ASSERT_EQ(cli.run(args).exit_code, 0) << args[0];
  }
  auto job = cli.write_file("job.json", R"({"properties": {"nodeCount": 1,
      "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
      "outputDirectories": [{"id": "OUTPUT", "pathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/out"}],
      "customToolkitSettings": {"commandLine": "echo hi > $AZ_BATCHAI_OUTPUT_OUTPUT/result.txt"}}})");
  ASSERT_EQ(cli.run({"job", "create", "-g", "rg", "-w", "ws", "-e", "ex", "-n", "j", "-c", "c", "-f", job.string()})
                .exit_code, 0);
  CliResult r = cli.run({"job", "wait", "-g", "rg", "-w", "ws", "-e", "ex", "-n", "j", "--interval", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* d : {"-d=OUTPUT", "-dOUTPUT", "--output-directory-id=OUTPUT"}) {
    r = cli.run({"job", "file", "list", "-g", "rg", "-w", "ws", "-e", "ex", "-j", "j", d, "--query", "[].name",
                 "-o", "tsv"});
    EXPECT_EQ(r.exit_code, 0) << d << "\n" << r.err;
    EXPECT_EQ(r.out, "result.txt\n") << d;
  }
}

TEST(CliArgparseTest, RefusalsReadLikeArgparseAndExit2) {
  CliHarness cli;
  CliResult r = cli.run({"group", "create", "-n", "--location", "eastus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("usage: batchai group create [-h]"));
  EXPECT_THAT(r.err, HasSubstr("\nbatchai group create: error: argument --name/-n/--resource-group/-g: expected one "
                               "argument\n"));
  // The required check comes before the unrecognized arguments, as in argparse.
  r = cli.run({"group", "create", "--nmae", "rg"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("error: the following arguments are required: --name/-n/--resource-group/-g, "
                               "--location/-l\n"));
  r = cli.run({"group", "create", "-n", "rg", "-l", "eastus", "--nmae", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("batchai group create: error: unrecognized arguments: --nmae x\n"));
  r = cli.run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "c", "--m", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("error: ambiguous option: --m could match --min, --max\n"));
  r = cli.run({"job", "delete", "-g", "rg", "-w", "ws", "-e", "e", "-n", "j", "--yes=1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("error: argument --yes/-y: ignored explicit argument '1'\n"));
  EXPECT_EQ(cli.run({"group", "list"}).out, "[]\n");  // nothing was created by a refused command
}

TEST(CliArgparseTest, MisspelledCommandsNameTheMostSimilarChoice) {
  CliHarness cli;
  CliResult r = cli.run({"clustr", "list"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "ERROR: batchai: 'clustr' is not in the 'batchai' command group. See 'batchai --help'.\n"
            "\nThe most similar choice to 'clustr' is:\n\tcluster\n");
  r = cli.run({"cluster", "craete", "-h"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "ERROR: batchai cluster: 'craete' is not in the 'batchai cluster' command group. See 'batchai cluster "
            "--help'.\n\nThe most similar choice to 'craete' is:\n\tcreate\n");
  r = cli.run({"batchai", "job", "file", "lst"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "ERROR: batchai batchai job file: 'lst' is not in the 'batchai batchai job file' command group. See "
            "'batchai batchai job file --help'.\n\nThe most similar choice to 'lst' is:\n\tlist\n");
  r = cli.run({"cluster", "crelete"});  // several close names, best first (a tie: the larger name first)
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("\nThe most similar choices to 'crelete' are:\n\tdelete\n\tcreate\n"));
  r = cli.run({"frobnicate"});  // nothing close: the error line alone
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ERROR: batchai: 'frobnicate' is not in the 'batchai' command group. See 'batchai --help'.\n");
}

}  // namespace
}  // namespace batchai::cli::testing
