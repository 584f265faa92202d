// Many `batchai` processes on one BATCHAI_HOME at once (nothing lost, nothing duplicated, no
// errors), and a process killed with SIGKILL in the middle of a create leaves a usable store.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include "cli_harness.hpp"

namespace batchai::cli::testing {
namespace {

constexpr int kProcesses = 50;

std::set<std::string> experiment_names(const CliHarness& cli) {
  CliResult r = cli.run({"experiment", "list", "-g", "rg", "-w", "ws", "--query", "[].name", "-o", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> names;
  for (const auto& n : r.json()) {
    EXPECT_TRUE(names.insert(n.get<std::string>()).second) << "duplicate " << n;
  }
  return names;
}

TEST(ConcurrencyScenario, FiftyProcessesCreateAndDeleteWithoutLoss) {
  CliHarness cli;
  ASSERT_EQ(cli.run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
  ASSERT_EQ(cli.run({"workspace", "create", "-g", "rg", "-n", "ws"}).exit_code, 0);

  std::vector<pid_t> pids;
  for (int i = 0; i < kProcesses; ++i) {
    pids.push_back(cli.spawn({"experiment", "create", "-g", "rg", "-w", "ws", "-n", "a" + std::to_string(i)}));
  }
  for (pid_t pid : pids) EXPECT_EQ(CliHarness::wait(pid), 0);
  std::set<std::string> expected;
  for (int i = 0; i < kProcesses; ++i) expected.insert("a" + std::to_string(i));
  EXPECT_EQ(experiment_names(cli), expected);

  // Second wave: half delete old experiments, half create new ones, all at once.
  pids.clear();
  for (int i = 0; i < kProcesses; ++i) {
    if (i % 2 == 0) {
      pids.push_back(cli.spawn({"experiment", "delete", "-g", "rg", "-w", "ws", "-n", "a" + std::to_string(i), "-y"}));
      expected.erase("a" + std::to_string(i));
    } else {
      pids.push_back(cli.spawn({"experiment", "create", "-g", "rg", "-w", "ws", "-n", "b" + std::to_string(i)}));
      expected.insert("b" + std::to_string(i));
    }
  }
  for (pid_t pid : pids) EXPECT_EQ(CliHarness::wait(pid), 0);
  EXPECT_EQ(experiment_names(cli), expected);
}

TEST(ConcurrencyScenario, FiftyClusterCreatesInOneWorkspace) {
  CliHarness cli;
  ASSERT_EQ(cli.run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
  ASSERT_EQ(cli.run({"workspace", "create", "-g", "rg", "-n", "ws"}).exit_code, 0);
  std::vector<pid_t> pids;
  for (int i = 0; i < kProcesses; ++i) {
    pids.push_back(cli.spawn({"cluster", "create", "-g", "rg", "-w", "ws", "-n", "c" + std::to_string(i), "-s",
                              "Standard_D1", "-t", "1", "-u", "me", "-p", "pw"}));
  }
  for (pid_t pid : pids) EXPECT_EQ(CliHarness::wait(pid), 0);
  CliResult r = cli.run({"cluster", "list", "-g", "rg", "-w", "ws", "--query", "length(@)"});
  EXPECT_EQ(r.out, std::to_string(kProcesses) + "\n") << r.err;
}

TEST(KillScenario, SigkillDuringCreateLeavesAConsistentStore) {
  CliHarness cli;
  ASSERT_EQ(cli.run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
  ASSERT_EQ(cli.run({"workspace", "create", "-g", "rg", "-n", "ws"}).exit_code, 0);
  for (int i = 0; i < 12; ++i) {
    std::string name = "k" + std::to_string(i);
    pid_t pid = cli.spawn({"cluster", "create", "-g", "rg", "-w", "ws", "-n", name, "-s", "Standard_D1", "-t", "2",
                           "-u", "me", "-p", "pw"});
    std::this_thread::sleep_for(std::chrono::milliseconds(i * 3));
    kill(pid, SIGKILL);
    CliHarness::wait(pid);
    CliResult list = cli.run({"cluster", "list", "-g", "rg", "-w", "ws", "-o", "json"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    CliResult show = cli.run({"cluster", "show", "-g", "rg", "-w", "ws", "-n", name});
    ASSERT_TRUE(show.exit_code == 0 || show.exit_code == 3) << show.err;
    if (show.exit_code == 0) {
      EXPECT_EQ(show.json()["name"], name);
    } else {
      // Nothing half-made: the same create now succeeds.
      CliResult again = cli.run({"cluster", "create", "-g", "rg", "-w", "ws", "-n", name, "-s", "Standard_D1", "-t",
                                 "2", "-u", "me", "-p", "pw"});
      EXPECT_EQ(again.exit_code, 0) << again.err;
    }
  }
  CliResult r = cli.run({"cluster", "list", "-g", "rg", "-w", "ws", "--query", "length(@)"});
  EXPECT_EQ(r.out, "12\n") << r.err;
  EXPECT_EQ(cli.run({"experiment", "create", "-g", "rg", "-w", "ws", "-n", "after"}).exit_code, 0);
}

}  // namespace
}  // namespace batchai::cli::testing
