// Helpers of the tests that use the private Slurm (see slurm_test_util.hpp).
#include "slurm_test_util.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <regex>
#include <sstream>

#include "batchai/common/process.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace batchai::slurm_testing {
namespace fs = std::filesystem;

fs::path slurm_conf() {
  const char* env = std::getenv("SLURM_CONF");
  if (env == nullptr || *env == '\0') ADD_FAILURE() << "SLURM_CONF is not set: run through ctest (fixture slurm)";
  return env == nullptr ? fs::path() : fs::path(env);
}

namespace {
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}
}  // namespace

fs::path dead_controller_conf(const fs::path& dir) {
  const std::string conf =
      std::regex_replace(test::read_file(slurm_conf()), std::regex("SlurmctldPort=\\d+"), "SlurmctldPort=" + std::to_string(free_port()));
  fs::path out = dir / "dead-slurm.conf";
  return test::write_file(out, conf);
}

std::string configured_node_addr() {
  std::smatch m;
  const std::string conf = test::read_file(slurm_conf());
  if (!std::regex_search(conf, m, std::regex("NodeAddr=([^ \\n]+)"))) {
    ADD_FAILURE() << "no NodeAddr in " << slurm_conf();
    return {};
  }
  return m[1].str();
}

void scontrol(const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.argv = {"scontrol"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  EXPECT_EQ(make_posix_process_launcher()->run(spec).exit_code, 0) << "scontrol " << args.front();
}

std::string output_of(const std::vector<std::string>& argv) {
  const test::TempDir tmp("slurm-test-output");
  const fs::path out = tmp / "output";
  ProcessSpec spec;
  spec.argv = argv;
  spec.stdout_file = out;
  spec.stderr_file = out;
  make_posix_process_launcher()->run(spec);
  return test::read_file(out);
}

void wait_for_idle_partition() {
  std::string states;
  for (int i = 0; i < 150; ++i) {
    states = output_of({"sinfo", "-h", "-N", "-p", "batchai", "-o", "%N|%T|%E"});
    std::istringstream lines(states);
    bool all_idle = !states.empty();
    for (std::string line; std::getline(lines, line);) {
      const auto first = line.find('|'), second = line.find('|', first + 1);
      if (first == std::string::npos || second == std::string::npos) continue;
      if (line.compare(first + 1, second - first - 1, "idle") == 0) continue;
      all_idle = false;
      if (line.find("Duplicate jobid", second) != std::string::npos)
        output_of({"scontrol", "update", "nodename=" + line.substr(0, first), "state=resume"});
    }
    if (all_idle) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ADD_FAILURE() << "the partition's nodes did not become idle: " << states;
}

namespace {
// The fixture's folder: SLURM_CONF is BASE/etc/slurm.conf (private_slurm.sh).
fs::path slurm_base() { return slurm_conf().parent_path().parent_path(); }

pid_t controller_pid() {
  std::ifstream in(slurm_base() / "run" / "slurmctld.pid");
  long pid = 0;
  in >> pid;
  return static_cast<pid_t>(pid);
}

// The highest job id the controller has handed out that is still on record (queued, running or
// recently ended: MinJobAge keeps them), and the highest the completion log names; 0 when none.
long highest_job_id() {
  long highest = 0;
  std::istringstream ids(output_of({"timeout", "5", "squeue", "-h", "-t", "all", "-o", "%i"}));
  const std::regex number("[0-9]{1,9}");
  for (std::string line; std::getline(ids, line);)
    if (std::regex_match(line, number)) highest = std::max(highest, std::stol(line));
  std::ifstream log(slurm_base() / "log" / "jobcomp.txt");
  const std::regex entry("JobId=([0-9]{1,9})");
  for (std::string line; std::getline(log, line);) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) highest = std::max(highest, std::stol(m[1].str()));
  }
  return highest;
}

bool controller_answers() {
  ProcessSpec spec;
  spec.argv = {"timeout", "3", "scontrol", "ping"};
  spec.stdout_file = "/dev/null";
  spec.stderr_file = "/dev/null";
  return make_posix_process_launcher()->run(spec).exit_code == 0;
}
}  // namespace

void ControllerOutage::kill_controller() {
  const pid_t pid = controller_pid();
  ASSERT_GT(pid, 1) << "no slurmctld pid in " << slurm_base();
  highest_job_id_ = highest_job_id();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  dead_ = true;
  for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_NE(::kill(pid, 0), 0) << "slurmctld " << pid << " outlived SIGKILL";
}

void ControllerOutage::restart_controller() {
  ProcessSpec spec;
  spec.argv = {"slurmctld", "-f", slurm_conf().string(), "-i"};  // daemonises; recovers its saved state
  ASSERT_EQ(make_posix_process_launcher()->run(spec).exit_code, 0);
  for (int i = 0; i < 60 && !controller_answers(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  ASSERT_TRUE(controller_answers()) << "slurmctld did not come back";
  dead_ = false;
  skip_lost_job_ids();
}

void ControllerOutage::skip_lost_job_ids() const {
  // Held jobs take the ids the restarted controller would hand out again, each cancelled at once;
  // bounded (a controller that lost more than 50 ids is a failure of its own).
  for (int i = 0; i < 50; ++i) {
    const std::string out = output_of({"timeout", "5", "sbatch", "--parsable", "--hold", "-p", "batchai", "-J",
                                       "skip-lost-id", "-o", "/dev/null", "--wrap", "true"});
    std::smatch m;
    if (!std::regex_search(out, m, std::regex("^([0-9]{1,9})"))) {
      ADD_FAILURE() << "sbatch of a placeholder job failed: " << out;
      return;
    }
    output_of({"timeout", "5", "scancel", m[1].str()});
    if (std::stol(m[1].str()) > highest_job_id_) return;
  }
  ADD_FAILURE() << "the restarted controller still hands out ids at or below " << highest_job_id_;
}

ControllerOutage::~ControllerOutage() {
  if (dead_) restart_controller();
  output_of({"timeout", "10", "scancel", "--partition=batchai"});
  wait_for_idle_partition();
}

}  // namespace batchai::slurm_testing
