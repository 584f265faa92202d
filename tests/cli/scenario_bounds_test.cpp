// Counts, sizes and special files at the command line (issue 13, "Counts and sizes"): each
// refusal is one `ERROR:` line with exit 1 (never a signal, an abort or a C++ exception text),
// each bound's largest value is accepted, and the repros of the issue leave later commands working.
// Job counts are in tests/jobs/jobs_bounds_test.cpp: an accepted job starts a supervisor, which
// would hold this harness's output pipes open.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <string>

#include "cli_harness.hpp"

namespace batchai::cli::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using nlohmann::json;

class BoundsScenario : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
    ASSERT_EQ(run({"workspace", "create", "-g", "rg", "-n", "ws"}).exit_code, 0);
    ASSERT_EQ(run({"experiment", "create", "-g", "rg", "-w", "ws", "-n", "exp"}).exit_code, 0);
  }
  CliResult run(const std::vector<std::string>& args) { return cli_.run(args); }
  CliResult cluster_create(const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args = {"cluster", "create", "-g", "rg", "-w", "ws", "-n", name, "-u", "me", "-p", "pw"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args);
  }
  // Only for files that are refused: an accepted job would start a supervisor.
  CliResult job_create(const std::string& name, const std::string& file) {
    return run({"job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", name, "-c", "c1", "-f", file, "-o", "json"});
  }
  // The one line a refusal prints (exit 1, nothing on stdout, no C++ exception text).
  static std::string refusal(const CliResult& r) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, StartsWith("ERROR: "));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (const char* leak : {"json.exception", "std::", "terminate called", "what()"}) {
      EXPECT_EQ(r.err.find(leak), std::string::npos) << r.err;
    }
    return r.err;
  }
  CliHarness cli_;
};

TEST_F(BoundsScenario, NegativeAutoScaleBoundsAreRefusedAndLaterCommandsWork) {
  EXPECT_EQ(refusal(cluster_create("neg", {"-s", "Standard_D1", "--min", "-2", "--max", "-1"})),
            "ERROR: --min must be 0 or more nodes, got -2.\n");
  EXPECT_EQ(refusal(cluster_create("neg", {"-s", "Standard_D1", "-t", "-1"})), "ERROR: --target must be 0 or more nodes, got -1.\n");
  // The issue's repro: every reconciling command afterwards died with SIGSEGV.
  CliResult list = run({"cluster", "list", "-g", "rg", "-w", "ws", "--query", "length(@)"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out, "0\n");
}

TEST_F(BoundsScenario, RegionalQuotaOfListUsagesBoundsClusterSizes) {
  EXPECT_EQ(refusal(cluster_create("huge", {"-s", "Standard_D1", "-t", "1000000000"})),
            "ERROR: Operation results in exceeding quota limits of Total Cluster Dedicated Regional vCPUs in eastus. "
            "Maximum allowed: 100, Current in use: 0, Additional requested: 1000000000. Ask for fewer nodes or a "
            "smaller VM size, or shrink or delete other clusters (each counts its target, or its auto-scale maximum; "
            "'batchai list-usages -l eastus' shows the usage).\n");
  EXPECT_THAT(refusal(cluster_create("big", {"-s", "Standard_NC6", "-t", "17"})),
              HasSubstr("Maximum allowed: 100, Current in use: 0, Additional requested: 102."));
  // The largest that fits: 100 one-vCPU nodes.
  CliResult r = cluster_create("c1", {"-s", "Standard_D1", "-t", "100", "-o", "none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run({"list-usages", "-l", "eastus", "--query", "[0].currentValue", "-o", "tsv"});
  EXPECT_EQ(r.out, "100\n") << r.err;
  EXPECT_THAT(refusal(run({"cluster", "resize", "-g", "rg", "-w", "ws", "-n", "c1", "-t", "101"})),
              HasSubstr("Current in use: 100, Additional requested: 1."));
  EXPECT_THAT(refusal(run({"cluster", "auto-scale", "-g", "rg", "-w", "ws", "-n", "c1", "--min", "0", "--max", "200"})),
              HasSubstr("Current in use: 100, Additional requested: 100."));
  EXPECT_EQ(run({"cluster", "resize", "-g", "rg", "-w", "ws", "-n", "c1", "-t", "0", "-o", "none"}).exit_code, 0);
}

TEST_F(BoundsScenario, ConfigFilesMustBeSmallRegularShallowJson) {
  ASSERT_EQ(cluster_create("c1", {"-s", "Standard_D1", "-t", "0", "-o", "none"}).exit_code, 0);
  const std::string fifo = (cli_.dir() / "fifo.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(refusal(job_create("j", fifo)), "ERROR: '" + fifo + "' is a FIFO (named pipe); give the path of a JSON file.\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(refusal(job_create("j", "/dev/zero")), "ERROR: '/dev/zero' is a character device; give the path of a JSON file.\n");
  EXPECT_EQ(refusal(job_create("j", cli_.dir().string())), "ERROR: [Errno 21] Is a directory: '" + cli_.dir().string() + "'\n");
  const std::string deep = cli_.write_file("deep.json", std::string(10000, '[') + std::string(10000, ']')).string();
  EXPECT_EQ(refusal(job_create("j", deep)),
            "ERROR: JSON nests deeper than 64 levels: line 1 column 65 (char 64) in '" + deep + "'\n");
  const std::string big = cli_.write_file("big.json", std::string(5 * 1024 * 1024, ' ')).string();
  EXPECT_EQ(refusal(cluster_create("c2", {"-f", big})),
            "ERROR: '" + big + "' is larger than 4194304 bytes (4 MiB), the limit for JSON files; give a smaller file.\n");
  const std::string typed = cli_.write_file("cluster.json", R"({"properties": {"vmSize": 5}})").string();
  EXPECT_EQ(refusal(cluster_create("c2", {"-f", typed, "-t", "1"})),
            "ERROR: The cluster configuration file '" + typed +
                "' has a value of the wrong type: type must be string, but is number.\n");
  const std::string disks = cli_.write_file("nfs.json", R"({"properties": {"dataDisks": {"diskSizeInGB": 10,
      "diskCount": 2147483648, "storageAccountType": "Standard_LRS"}}})").string();
  EXPECT_EQ(refusal(run({"file-server", "create", "-g", "rg", "-w", "ws", "-n", "nfs", "-s", "Standard_D14", "-u", "me",
                         "-p", "pw", "-f", disks})),
            "ERROR: dataDisks.diskCount must be at least 1 and at most 64, got 2147483648.\n");
}

TEST_F(BoundsScenario, QueryResultsAreBoundedInMemory) {
  std::string doubling;
  for (int i = 0; i < 24; ++i) doubling += "[@,@] | ";
  EXPECT_EQ(refusal(run({"group", "list", "--query", doubling + "length(@)"})),
            "ERROR: Invalid --query result: the result grew past 512 MiB while being evaluated; narrow the expression "
            "(filter, or select fewer fields)\n");
  CliResult r = run({"group", "list", "--query", "[@,@] | [@,@] | [][][].name", "-o", "tsv"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "rg\nrg\nrg\nrg\n");
}

}  // namespace
}  // namespace batchai::cli::testing
