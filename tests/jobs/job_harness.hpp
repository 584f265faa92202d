// Test harness for the job suites: a temporary BATCHAI_HOME with a resource group, workspace,
// experiment and clusters, a runner for the built `batchai` executable, and process checks.
#pragma once
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "batchai/common/json_util.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace batchai::test {

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

class JobsFixture : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Runs `batchai <args>` (args are shell words, quoted by the caller where needed).
  Result run(const std::string& args);
  // As run(), failing the test on a non-zero exit.
  Json json(const std::string& args);
  void make_cluster(const std::string& name, int nodes);
  // Writes {"properties": props} to a file and returns its path.
  std::string job_file(const std::string& name, const Json& props);
  // Creates the job (exp1) and returns its document.
  Json create(const std::string& name, const Json& props, const std::string& cluster = "c1");
  Json show(const std::string& name);
  // Polls `job show` until executionState is one of `states` (or the timeout passes).
  Json wait_state(const std::string& name, const std::vector<std::string>& states,
                  std::chrono::seconds timeout = std::chrono::seconds(30));
  // The file `job file list` gives for `name` (stdouterr by default).
  std::filesystem::path output_file(const std::string& job, const std::string& name, const std::string& dir = "stdouterr");

  TempDir work_dir_{"batchai-jobs"};
  std::filesystem::path work_ = work_dir_.path();  // removed with all it holds after TearDown
  std::filesystem::path home_ = work_ / "home";
  std::string scope_;  // -g rg -w ws -e exp1
  std::string marker_;  // unique text for process checks
};

// A file of a job's stdouterr folder, found on disk (.../jobs/<job>/<uuid>/stdouterr/<name>)
// rather than through `job file list`, so checks that use it stand on their own.
std::filesystem::path stdouterr_file(const std::filesystem::path& home, const std::string& job,
                                     const std::string& name);

// Number of processes whose command line contains `text` (excluding this process).
int count_processes(const std::string& text);
// Polls until no process carries `text`; true when none is left.
bool no_processes_within(const std::string& text, std::chrono::milliseconds timeout);

// Supervisors of this home that hold their job's lock now (one per job they supervise).
int held_supervisor_locks(const std::filesystem::path& home);
// The pid each job's supervisor wrote into its lock, by job folder.
std::map<std::string, std::string> supervisor_pids(const std::filesystem::path& home);
// True when some process holds one of the home's waiting places (idle_supervisors.hpp).
bool a_waiting_place_is_held(const std::filesystem::path& home);

}  // namespace batchai::test
