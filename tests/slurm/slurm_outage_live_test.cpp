// Issue 24 rows 13-14 against the private Slurm of the fixture "slurm": its slurmctld killed
// while a job runs, then restarted (slurm_test_util.hpp, ControllerOutage), through the built
// executable. Times are measured here and asserted (docs/slurm.md, "When the controller does not
// answer"); the stand-in version of each rule is in slurm_outage_test.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "cli/cli_harness.hpp"
#include "slurm_test_util.hpp"

namespace batchai::cli::testing {
namespace {
using namespace std::chrono_literals;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

class SlurmOutageLive : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = {{"SLURM_CONF", slurm_testing::slurm_conf().string()}, {"BATCHAI_SIM_DELAY_S", "0"}};
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"group", "create", "-n", "rg", "-l", "eastus"},
             {"workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus"},
             {"experiment", "create", "-g", "rg", "-w", "ws", "-n", "exp"},
             {"experiment", "create", "-g", "rg", "-w", "ws", "-n", "simexp"},
             {"cluster", "create", "-g", "rg", "-w", "ws", "-n", "sc", "-s", "Standard_D3", "-t", "2", "-u", "alice",
              "-p", "secret", "--slurm-partition", "batchai"},
             {"cluster", "create", "-g", "rg", "-w", "ws", "-n", "sim", "-s", "Standard_D3", "-t", "1", "-u", "alice",
              "-p", "secret"}}) {
      CliResult r = run(args);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  CliResult run(const std::vector<std::string>& args) const { return cli_.run(args, env_); }
  // Runs the command and returns how long it took; expects exit 0.
  Clock::duration timed(const std::vector<std::string>& args, CliResult* out = nullptr) const {
    const auto start = Clock::now();
    CliResult r = run(args);
    const auto took = Clock::now() - start;
    EXPECT_EQ(r.exit_code, 0) << args[0] << " " << args[1] << ": " << r.err;
    if (out) *out = r;
    return took;
  }
  void create_job(const std::string& experiment, const std::string& cluster, const std::string& name,
                  const std::string& command) const {
    const auto file = cli_.write_file(name + ".json", json{{"properties",
                                                            {{"nodeCount", 1},
                                                             {"customToolkitSettings", {{"commandLine", command}}},
                                                             {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT/out"}}}}
                                                          .dump());
    CliResult r = run({"job", "create", "-g", "rg", "-w", "ws", "-e", experiment, "-n", name, "-c", cluster, "-f",
                       file.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  json show(const std::string& name) const {
    CliResult r = run({"job", "show", "-g", "rg", "-w", "ws", "-e", "exp", "-n", name, "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? r.json() : json::object();
  }
  // Polls until the job is in one of `states` (bounded); records every state seen on the way.
  json wait_for(const std::string& name, const std::set<std::string>& states, std::set<std::string>& seen,
                std::chrono::seconds limit = 90s) const {
    const auto deadline = Clock::now() + limit;
    json doc;
    do {
      doc = show(name);
      seen.insert(doc.value("executionState", ""));
      if (states.count(doc.value("executionState", ""))) return doc;
      std::this_thread::sleep_for(250ms);
    } while (Clock::now() < deadline);
    ADD_FAILURE() << name << " never reached the state asked for: " << doc.dump();
    return doc;
  }
  static bool silence_entry(const json& doc) {
    return doc.contains("errors") && doc["errors"].is_array() && !doc["errors"].empty() &&
           doc["errors"][0].value("code", "") == "SlurmControllerUnreachable";
  }
  int runs_in(const std::string& marker) const {
    std::ifstream in(cli_.home() / marker);
    int n = 0;
    for (std::string line; std::getline(in, line);) n += line == "run";
    return n;
  }

  CliHarness cli_;
  std::map<std::string, std::string> env_;
};

TEST_F(SlurmOutageLive, KilledControllerStaysInItsLaneAndARestartDoesNotRunTheJobTwice) {
  const std::string marker = (cli_.home() / "runs-long.txt").string();
  create_job("simexp", "sim", "simjob", "true");
  create_job("exp", "sc", "long", "echo run >> " + marker + "; sleep 12");
  std::set<std::string> seen;
  wait_for("long", {"running"}, seen);
  seen.clear();  // from here on, never queued again
  slurm_testing::ControllerOutage outage;
  outage.kill_controller();
  // Commands that touch no Slurm cluster: never wait for Slurm.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"group", "list", "-o", "json"},
           {"job", "list", "-g", "rg", "-w", "ws", "-e", "simexp", "-o", "json"},
           {"cluster", "show", "-g", "rg", "-w", "ws", "-n", "sim", "-o", "json"}})
    EXPECT_LT(timed(args), 1s) << args[0] << " " << args[1];
  // The first command on the Slurm cluster: within 2 s, the last known state and an errors entry.
  CliResult r;
  EXPECT_LT(timed({"job", "show", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "long", "-o", "json"}, &r), 2s);
  EXPECT_EQ(r.json()["executionState"], "running");
  EXPECT_TRUE(silence_entry(r.json())) << r.out;
  // Another process (a second CLI command) shares the back-off: it does not ask Slurm at all.
  EXPECT_LT(timed({"cluster", "show", "-g", "rg", "-w", "ws", "-n", "sc", "-o", "json"}, &r), 1s);
  EXPECT_TRUE(silence_entry(r.json())) << r.out;
  EXPECT_EQ(r.json()["currentNodeCount"], 3);
  EXPECT_LT(timed({"job", "list", "-g", "rg", "-w", "ws", "-e", "exp", "-o", "json"}, &r), 1s);
  outage.restart_controller();
  // The job ends, once; it is never shown queued again. A controller that saved the allocation lets
  // it finish; one that came back without it (PENDING, or no record) has killed the run as an
  // orphan, and the job fails saying so: it is not run again.
  json done = wait_for("long", {"succeeded", "failed"}, seen);
  if (done["executionState"] == "failed") {
    const std::string code = done["executionInfo"]["errors"][0].value("code", "");
    EXPECT_TRUE(code == "JobRunLost" || code == "SlurmJobLost") << done.dump();
  }
  EXPECT_FALSE(done.contains("errors")) << done.dump();  // the silence's entry went with the answer
  EXPECT_EQ(seen.count("queued"), 0u);
  EXPECT_EQ(runs_in("runs-long.txt"), 1);
}

// Row 14: killed and restarted right as the job starts (the controller may come back with the job
// PENDING, RUNNING, or not at all): never queued again once running, never run twice.
TEST_F(SlurmOutageLive, ControllerRestartedAsTheJobStartsNeverRunsItTwice) {
  const std::string marker = (cli_.home() / "runs-quick.txt").string();
  create_job("exp", "sc", "quick", "echo run >> " + marker + "; sleep 8");
  std::set<std::string> seen;
  wait_for("quick", {"running"}, seen);
  seen.clear();
  slurm_testing::ControllerOutage outage;
  outage.kill_controller();
  outage.restart_controller();
  json done = wait_for("quick", {"succeeded", "failed"}, seen);
  EXPECT_EQ(seen.count("queued"), 0u) << done.dump();
  if (done["executionState"] == "failed") {
    const std::string code = done["executionInfo"]["errors"][0].value("code", "");
    EXPECT_TRUE(code == "JobRunLost" || code == "SlurmJobLost") << done.dump();
  }
  EXPECT_LE(runs_in("runs-quick.txt"), 1);
  std::this_thread::sleep_for(3s);  // a batch script Slurm started again would have run by now
  EXPECT_LE(runs_in("runs-quick.txt"), 1);
}

}  // namespace
}  // namespace batchai::cli::testing
