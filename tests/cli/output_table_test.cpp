// `-o table`: tabulate "simple" layout, generic table rules and the docs/output.md §2.3 transformers.
#include <gtest/gtest.h>

#include "batchai/common/errors.hpp"
#include "output/formats.hpp"
#include "output/table.hpp"
#include "output/transformers.hpp"

namespace batchai::cli::output {
namespace {

OJson cluster_doc(const std::string& name, int idle) {
  return OJson::parse(R"({"allocationState": "steady", "id":
    "/subscriptions/S/resourceGroups/demoGroup/providers/Microsoft.BatchAI/workspaces/demoWks/clusters/)" +
                      name + R"(", "name": ")" + name + R"(", "nodeStateCounts": {"idleNodeCount": )" +
                      std::to_string(idle) + R"(, "leavingNodeCount": 0, "preparingNodeCount": 0,
    "runningNodeCount": 0, "unusableNodeCount": 0}, "provisioningState": "succeeded",
    "resourceGroup": "demoGroup", "vmSize": "STANDARD_D1"})");
}

TEST(TableTest, ClusterTableMatchesTheTutorialLayout) {
  std::string text = render_table(cluster_doc("dsvm", 1), cluster_table, false);
  EXPECT_EQ(text,
            "Name    Resource Group    Workspace    VM Size      State      Idle    Running    Preparing    Leaving"
            "    Unusable\n"
            "------  ----------------  -----------  -----------  -------  ------  ---------  -----------  ---------"
            "  ----------\n"
            "dsvm    demoGroup         demoWks      STANDARD_D1  steady        1          0            0          0"
            "           0\n");
}

TEST(TableTest, DeletingClusterShowsDeletingState) {
  OJson c = cluster_doc("c1", 0);
  c["provisioningState"] = "deleting";
  OJson rows = cluster_table(c);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["State"], "deleting");
  EXPECT_EQ(rows[0]["Idle"], "0");
}

TEST(TableTest, JobTableExitCodeColumn) {
  OJson jobs = OJson::parse(R"([
    {"name": "job1", "cluster": {"id": "/subscriptions/S/resourceGroups/demo/providers/Microsoft.BatchAI/workspaces/demoWorkspace/clusters/demo", "resourceGroup": "demo"},
     "toolType": "custom", "nodeCount": 1, "provisioningState": "succeeded", "executionState": "succeeded",
     "executionInfo": {"exitCode": 0}},
    {"name": "job3", "cluster": {"id": "/subscriptions/S/resourceGroups/tests/providers/Microsoft.BatchAI/workspaces/default/clusters/nc6", "resourceGroup": "tests"},
     "toolType": "caffe", "nodeCount": 1, "provisioningState": "succeeded", "executionState": "queued",
     "executionInfo": null}])");
  // Cells are padded to the column width, so rows keep trailing spaces (tabulate does the same).
  EXPECT_EQ(render_table(jobs, job_table, false),
            "Name    Cluster    Cluster RG    Cluster Workspace    Tool      Nodes  State        Exit code\n"
            "------  ---------  ------------  -------------------  ------  -------  ---------  -----------\n"
            "job1    demo       demo          demoWorkspace        custom        1  succeeded            0\n"
            "job3    nc6        tests         default              caffe         1  queued                \n");
}

TEST(TableTest, EmptyListPrintsOneEmptyLine) { EXPECT_EQ(render_table(OJson::array(), nullptr, false), "\n"); }

TEST(TableTest, GenericTableSkipsIdTypeNullsAndContainers) {
  // Service documents reach the table with sorted keys (to_ordered).
  OJson doc = to_ordered(Json::parse(R"({"id": "x", "type": "t", "name": "a", "tags": null, "list": [1], "obj": {}, "count": 5})"));
  EXPECT_EQ(render_table(doc, nullptr, false), "  Count  Name  \n-------  ------\n      5  a     \n");
}

TEST(TableTest, ScalarResultUsesResultHeader) {
  EXPECT_EQ(render_table(OJson("hello"), nullptr, true), "Result  \n--------\nhello   \n");
}

TEST(TableTest, NothingPrintableIsAnError) {
  OJson doc = OJson::parse(R"({"id": "x", "nested": {"a": 1}})");
  try {
    render_table(doc, nullptr, false);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "Table output unavailable. Use the --query option to specify an appropriate query. "
                 "Use --debug for more info.");
  }
}

TEST(TableTest, QueryDisablesTransformerAndKeepsProjectionOrder) {
  OJson doc = OJson::parse(R"({"zeta": "z", "alpha": "a"})");
  EXPECT_EQ(render_table(doc, cluster_table, true), "Zeta    Alpha  \n------  -------\nz       a      \n");
}

TEST(TableTest, MissingCellsStayEmptyAndHeadersKeepFirstAppearance) {
  OJson rows = OJson::parse(R"([{"b": "x"}, {"a": "y", "b": "z"}])");
  EXPECT_EQ(render_table(rows, nullptr, true), "B    A  \n---  ---\nx       \nz    y  \n");
}

TEST(TableTest, DecimalAlignmentAndFloatFormatting) {
  std::vector<std::string> headers = {"V"};
  std::vector<std::vector<TableCell>> rows = {{{OJson(1.5)}}, {{OJson(10)}}, {{OJson(50000.0)}}};
  EXPECT_EQ(tabulate_simple(headers, rows), "      V\n-------\n    1.5\n   10  \n50000  ");
}

TEST(TableTest, BooleansPrintLikePython) {
  OJson doc = OJson::parse(R"({"flag": true})");
  EXPECT_EQ(render_table(doc, nullptr, false), "Flag  \n------\nTrue  \n");
}

TEST(TransformerTest, FileServerColumnsDependOnPresentParts) {
  OJson fs = OJson::parse(R"({"name": "nfs", "resourceGroup": "rg", "vmSize": "STANDARD_D14",
    "dataDisks": {"diskCount": 2, "diskSizeInGb": 10}, "mountSettings": null})");
  OJson rows = file_server_table(fs);
  EXPECT_EQ(rows[0].dump(), R"({"Name":"nfs","Resource Group":"rg","Size":"STANDARD_D14","Disks":"2 x 10 Gb"})");
  fs["mountSettings"] = OJson::parse(R"({"fileServerPublicIp": "1.2.3.4", "fileServerInternalIp": "10.0.0.4", "mountPoint": "/mnt/data"})");
  EXPECT_EQ(file_server_table(fs)[0]["Mount Point"], "/mnt/data");
}

TEST(TransformerTest, RemoteLoginPortIsInt) {
  OJson nodes = OJson::parse(R"([{"nodeId": "tvm-1", "ipAddress": "127.0.0.1", "port": 50000.0}])");
  EXPECT_EQ(render_table(nodes, remote_login_table, false),
            "ID     IP           SSH Port\n-----  ---------  ----------\ntvm-1  127.0.0.1       50000\n");
}

TEST(TransformerTest, SetupFilesAndUsages) {
  OJson files = OJson::parse(R"([{"name": "logs", "is_directory": true, "size": null, "download_url": null},
                                  {"name": "stdout.txt", "is_directory": false, "size": 0, "download_url": "u"}])");
  OJson rows = setup_file_table(files);
  EXPECT_EQ(rows[0]["Is directory"], "yes");
  EXPECT_EQ(rows[0]["Size"], "");
  EXPECT_EQ(rows[1]["Size"], 0);
  OJson usages = OJson::parse(R"([{"currentValue": 0, "limit": 24, "name": {"localizedValue": "Total Cluster vCPUs", "value": "x"}, "unit": "Count"}])");
  OJson u = usage_table(usages);
  EXPECT_EQ(u[0]["Usage"], "0");
  EXPECT_EQ(u[0]["Limit"], 24);
  EXPECT_EQ(u[0]["Value"], "Total Cluster vCPUs");
}

TEST(TransformerTest, JobFilesAndExperimentsAndWorkspaces) {
  OJson files = OJson::parse(R"([{"name": "out", "fileType": "directory", "contentLength": null, "lastModified": null},
                                  {"name": "stdout.txt", "fileType": "file", "contentLength": 12, "lastModified": "2018-01-01T00:00:00+00:00"}])");
  OJson rows = job_file_table(files);
  EXPECT_EQ(rows[0]["Size"], "");
  EXPECT_EQ(rows[0]["Modified"], " ");
  EXPECT_EQ(rows[1]["Size"], "12");
  OJson exp = OJson::parse(R"({"name": "e", "resourceGroup": "rg", "provisioningState": "succeeded",
    "id": "/subscriptions/S/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws/experiments/e"})");
  EXPECT_EQ(experiment_table(exp)[0].dump(), R"({"Name":"e","Resource Group":"rg","Workspace":"ws","State":"succeeded"})");
  OJson ws = OJson::parse(R"({"name": "ws", "resourceGroup": "rg", "location": "eastus", "provisioningState": "succeeded"})");
  EXPECT_EQ(workspace_table(ws)[0].dump(), R"({"Name":"ws","Resource Group":"rg","Location":"eastus","State":"succeeded"})");
}

}  // namespace
}  // namespace batchai::cli::output
