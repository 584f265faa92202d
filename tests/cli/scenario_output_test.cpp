// Output through the real executable: golden table/tsv text, --query routing (generic table,
// projection order, quoted strings), yaml/none, and "commands returning nothing print nothing".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli_harness.hpp"

namespace batchai::cli::testing {
namespace {

using ::testing::HasSubstr;

class OutputScenario : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cli_.run({"group", "create", "-n", "demoGroup", "-l", "eastus"}).exit_code, 0);
    ASSERT_EQ(cli_.run({"workspace", "create", "-g", "demoGroup", "-n", "demoWks", "-l", "eastus"}).exit_code, 0);
  }
  CliResult run(std::vector<std::string> args) { return cli_.run(args); }
  void make_cluster(const std::string& name) {
    CliResult r = run({"cluster", "create", "-g", "demoGroup", "-w", "demoWks", "-n", name, "-s", "STANDARD_D1",
                       "-t", "1", "-u", "demoUser", "-p", "Secret#123"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  CliHarness cli_;
};

TEST_F(OutputScenario, ClusterTableGolden) {
  make_cluster("dsvm");
  CliResult r = run({"cluster", "list", "-g", "demoGroup", "-w", "demoWks", "-o", "table"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Name    Resource Group    Workspace    VM Size      State      Idle    Running    Preparing    Leaving"
            "    Unusable\n"
            "------  ----------------  -----------  -----------  -------  ------  ---------  -----------  ---------"
            "  ----------\n"
            "dsvm    demoGroup         demoWks      STANDARD_D1  steady        1          0            0          0"
            "           0\n");
  CliResult show = run({"cluster", "show", "-g", "demoGroup", "-w", "demoWks", "-n", "dsvm", "-o", "table"});
  EXPECT_EQ(show.out, r.out);
}

TEST_F(OutputScenario, WorkspaceTableAndTsvGolden) {
  CliResult r = run({"workspace", "list", "-g", "demoGroup", "-o", "table"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Name     Resource Group    Location    State    \n"
            "-------  ----------------  ----------  ---------\n"
            "demoWks  demoGroup         eastus      succeeded\n");
  r = run({"workspace", "show", "-g", "demoGroup", "-n", "demoWks", "-o", "tsv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // creationTime id location name provisioningState transitionTime resourceGroup tags type
  std::vector<std::string> fields;
  std::string line = r.out.substr(0, r.out.find('\n'));
  for (std::size_t start = 0;;) {
    auto tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  ASSERT_EQ(fields.size(), 9u) << r.out;
  EXPECT_THAT(fields[1], HasSubstr("/resourceGroups/demoGroup/providers/Microsoft.BatchAI/workspaces/demoWks"));
  EXPECT_EQ(fields[2], "eastus");
  EXPECT_EQ(fields[3], "demoWks");
  EXPECT_EQ(fields[4], "succeeded");
  EXPECT_EQ(fields[6], "demoGroup");
  EXPECT_EQ(fields[7], "None");
  EXPECT_EQ(fields[8], "Microsoft.BatchAI/workspaces");
}

TEST_F(OutputScenario, QueryRouting) {
  make_cluster("c1");
  CliResult r = run({"cluster", "show", "-g", "demoGroup", "-w", "demoWks", "-n", "c1", "--query",
                     "{n: name, s: vmSize, i: nodeStateCounts.idleNodeCount}", "-o", "tsv"});
  EXPECT_EQ(r.out, "c1\tSTANDARD_D1\t1\n");
  // A list is one row per item (knack's TSV rule).
  r = run({"cluster", "show", "-g", "demoGroup", "-w", "demoWks", "-n", "c1", "--query", "[name, vmSize]", "-o", "tsv"});
  EXPECT_EQ(r.out, "c1\nSTANDARD_D1\n");
  r = run({"cluster", "show", "-g", "demoGroup", "-w", "demoWks", "-n", "c1", "--query", "allocationState"});
  EXPECT_EQ(r.out, "\"steady\"\n");
  r = run({"cluster", "show", "-g", "demoGroup", "-w", "demoWks", "-n", "c1", "--query", "allocationState", "-o", "tsv"});
  EXPECT_EQ(r.out, "steady\n");
  // With --query the transformer is off: generic table in projection order.
  r = run({"cluster", "list", "-g", "demoGroup", "-w", "demoWks", "--query", "[].{Z: name, A: vmSize}", "-o", "table"});
  EXPECT_EQ(r.out, "Z    A          \n---  -----------\nc1   STANDARD_D1\n");
  r = run({"cluster", "list", "-g", "demoGroup", "-w", "demoWks", "--query", "[].{z: name, a: vmSize}", "-o", "tsv"});
  EXPECT_EQ(r.out, "c1\tSTANDARD_D1\n");
  // JSON output always sorts keys.
  r = run({"cluster", "list", "-g", "demoGroup", "-w", "demoWks", "--query", "[0].{z: name, a: vmSize}"});
  EXPECT_EQ(r.out, "{\n  \"a\": \"STANDARD_D1\",\n  \"z\": \"c1\"\n}\n");
  // A query that selects nothing prints nothing.
  r = run({"cluster", "show", "-g", "demoGroup", "-w", "demoWks", "-n", "c1", "--query", "noSuchKey"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
}

TEST_F(OutputScenario, TableUnavailableIsAnError) {
  CliResult r = run({"workspace", "show", "-g", "demoGroup", "-n", "demoWks", "--query", "{t: tags}", "-o", "table"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("ERROR: Table output unavailable. Use the --query option to specify an appropriate "
                               "query. Use --debug for more info."));
}

TEST_F(OutputScenario, YamlJsoncAndNone) {
  CliResult r = run({"workspace", "show", "-g", "demoGroup", "-n", "demoWks", "-o", "yaml"});
  EXPECT_THAT(r.out, HasSubstr("name: demoWks\n"));
  EXPECT_THAT(r.out, HasSubstr("tags: null\n"));
  r = run({"workspace", "show", "-g", "demoGroup", "-n", "demoWks", "-o", "jsonc"});
  EXPECT_EQ(r.out, run({"workspace", "show", "-g", "demoGroup", "-n", "demoWks"}).out);  // no TTY: no colour
  r = run({"workspace", "show", "-g", "demoGroup", "-n", "demoWks", "-o", "none"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
}

TEST_F(OutputScenario, CommandsReturningNothingPrintNothingInEveryFormat) {
  for (const std::string format : {"json", "jsonc", "table", "tsv", "yaml", "yamlc", "none"}) {
    std::string name = "exp" + format;
    ASSERT_EQ(run({"experiment", "create", "-g", "demoGroup", "-w", "demoWks", "-n", name}).exit_code, 0);
    CliResult r = run({"experiment", "delete", "-g", "demoGroup", "-w", "demoWks", "-n", name, "-y", "-o", format});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "") << format;
  }
}

TEST_F(OutputScenario, GroupExistsPrintsABoolean) {
  EXPECT_EQ(run({"group", "exists", "-n", "demoGroup"}).out, "true\n");
  EXPECT_EQ(run({"group", "exists", "-n", "other"}).out, "false\n");
  EXPECT_EQ(run({"group", "exists", "-n", "demoGroup", "-o", "tsv"}).out, "true\n");
}

TEST_F(OutputScenario, IdsSelectResources) {
  make_cluster("c1");
  std::string id = run({"cluster", "show", "-g", "demoGroup", "-w", "demoWks", "-n", "c1", "--query", "id", "-o", "tsv"}).out;
  id.pop_back();
  CliResult r = run({"cluster", "show", "--ids", id, "--query", "name", "-o", "tsv"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "c1\n");
  r = run({"cluster", "resize", "--ids", id, "-t", "0", "--query", "scaleSettings.manual.targetNodeCount", "-o", "tsv"});
  EXPECT_EQ(r.out, "0\n") << r.err;
  std::string ws_id = run({"workspace", "show", "-g", "demoGroup", "-n", "demoWks", "--query", "id", "-o", "tsv"}).out;
  ws_id.pop_back();
  EXPECT_EQ(run({"workspace", "show", "--ids", ws_id, "--query", "name", "-o", "tsv"}).out, "demoWks\n");
  r = run({"cluster", "show", "--ids", "/not/an/id"});
  EXPECT_EQ(r.exit_code, 1);
}

}  // namespace
}  // namespace batchai::cli::testing
