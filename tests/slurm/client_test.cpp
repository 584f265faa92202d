// SlurmClient over a fake ProcessLauncher: the commands it runs (argv, environment), and how it
// reads their answers and failures, without a Slurm.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>

#include "batchai/common/errors.hpp"
#include "batchai/slurm/client.hpp"

namespace batchai::slurm {
namespace {

struct Answer {
  int exit_code = 0;
  std::string out;
  std::string err;
  bool hang = false;  // never exits: wait() times out
};

class FakeLauncher final : public ProcessLauncher {
 public:
  std::function<Answer(const std::vector<std::string>&)> answer;
  std::vector<ProcessSpec> specs;
  int killed = 0;

  pid_t spawn(const ProcessSpec& spec) override {
    specs.push_back(spec);
    Answer a = answer(spec.argv);
    std::ofstream(*spec.stdout_file) << a.out;
    std::ofstream(*spec.stderr_file) << a.err;
    answers_.push_back(a);
    return static_cast<pid_t>(1000 + answers_.size() - 1);
  }
  std::optional<ProcessExit> wait(pid_t pid, std::optional<std::chrono::milliseconds> timeout) override {
    const Answer& a = answers_.at(static_cast<std::size_t>(pid - 1000));
    if (a.hang && timeout && killed == 0) return std::nullopt;
    return ProcessExit{a.exit_code, false};
  }
  bool signal_group(pid_t, int) override {
    ++killed;
    return true;
  }
  pid_t spawn_detached(const ProcessSpec&) override { return -1; }

 private:
  std::vector<Answer> answers_;
};

std::string joined(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

ClientOptions conf() {
  ClientOptions o;
  o.slurm_conf = "/etc/test-slurm/slurm.conf";
  return o;
}

TEST(SlurmClientFake, CommandsRunWithACleanEnvironmentAndSlurmConf) {
  FakeLauncher fake;
  fake.answer = [](const auto&) { return Answer{0, "node1|idle|2|2048|10.0.0.4|gpu:2\n", ""}; };
  SlurmClient client(fake, conf());
  auto nodes = client.partition_nodes("batchai");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].address, "10.0.0.4");
  EXPECT_EQ(nodes[0].gpus, 2);
  ASSERT_EQ(fake.specs.size(), 1u);
  EXPECT_EQ(joined(fake.specs[0].argv), "sinfo -h -N -p batchai -o %N|%T|%c|%m|%o|%G");
  EXPECT_TRUE(fake.specs[0].clear_env);
  EXPECT_EQ(fake.specs[0].env.at("SLURM_CONF"), "/etc/test-slurm/slurm.conf");
}

TEST(SlurmClientFake, VersionTooOldIsRefused) {
  FakeLauncher fake;
  fake.answer = [](const auto&) { return Answer{0, "SLURM_VERSION           = 20.02.7\n", ""}; };
  SlurmClient client(fake, conf());
  try {
    client.check_version();
    FAIL() << "20.02 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "SlurmTooOld");
    EXPECT_NE(std::string(e.what()).find("20.11 or later"), std::string::npos);
  }
  EXPECT_NO_THROW(require_supported({20, 11}));
  EXPECT_THROW(require_supported({19, 5}), Error);
}

TEST(SlurmClientFake, UnknownPartitionIsNotFound) {
  FakeLauncher fake;
  fake.answer = [](const std::vector<std::string>& argv) {
    if (argv[0] == "sinfo") return Answer{0, "", ""};
    return Answer{1, "", "Partition nosuch not found\n"};
  };
  SlurmClient client(fake, conf());
  EXPECT_THROW(client.partition_nodes("nosuch"), NotFound);
  EXPECT_THROW(client.partition_nodes("-p"), InvalidArgument);
}

TEST(SlurmClientFake, EmptyPartitionHasNoNodes) {
  FakeLauncher fake;
  fake.answer = [](const std::vector<std::string>& argv) {
    if (argv[0] == "sinfo") return Answer{0, "", ""};
    return Answer{0, "PartitionName=empty Nodes=(null)\n", ""};
  };
  SlurmClient client(fake, conf());
  EXPECT_TRUE(client.partition_nodes("empty").empty());
}

TEST(SlurmClientFake, ControllerErrorsSaySo) {
  FakeLauncher fake;
  fake.answer = [](const auto&) {
    return Answer{1, "", "slurm_load_partitions: Unable to contact slurm controller (connect failure)\n"};
  };
  SlurmClient client(fake, conf());
  try {
    client.partition_nodes("batchai");
    FAIL();
  } catch (const SystemError& e) {
    EXPECT_EQ(e.code(), "SlurmControllerUnreachable");
    EXPECT_NE(std::string(e.what()).find("does not answer"), std::string::npos);
  }
}

TEST(SlurmClientFake, HangingCommandIsKilledAtItsBound) {
  FakeLauncher fake;
  fake.answer = [](const auto&) { return Answer{0, "", "", true}; };
  ClientOptions o = conf();
  o.command_timeout = std::chrono::milliseconds(50);
  SlurmClient client(fake, o);
  try {
    client.partition_nodes("batchai");
    FAIL() << "a hanging command was waited for";
  } catch (const SystemError& e) {
    EXPECT_EQ(e.code(), "SlurmControllerUnreachable");
    EXPECT_NE(std::string(e.what()).find("within 50 ms"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fake.killed, 1);
}

TEST(SlurmClientFake, MissingCommandsSaySo) {
  FakeLauncher fake;
  fake.answer = [](const auto&) { return Answer{127, "", "batchai: command not found: sinfo\n"}; };
  SlurmClient client(fake, conf());
  try {
    client.partition_nodes("batchai");
    FAIL();
  } catch (const SystemError& e) {
    EXPECT_NE(std::string(e.what()).find("not installed"), std::string::npos);
  }
}

TEST(SlurmClientFake, JobFromSqueueWhileRunning) {
  FakeLauncher fake;
  fake.answer = [](const auto&) { return Answer{0, "7|RUNNING|2|node[1-2]|/home/a/jobs/k7\x1fNone\n", ""}; };
  SlurmClient client(fake, conf());
  auto j = client.job(7);
  EXPECT_EQ(j.slurm_state, "RUNNING");
  EXPECT_EQ(j.work_dir, "/home/a/jobs/k7");
  EXPECT_EQ(joined(fake.specs[0].argv), "squeue -h -t all -j 7 -o %i|%T|%D|%N|%Z\x1f%r");
  EXPECT_EQ(fake.specs.size(), 1u);
}

// A restarted controller that lost job 7 gave its id to a job of another folder: cancelling "our"
// job 7 must not cancel that one.
TEST(SlurmClientFake, AnIdThatNamesAJobOfAnotherFolderIsNotCancelled) {
  FakeLauncher fake;
  fake.answer = [](const std::vector<std::string>& argv) {
    if (argv[0] == "squeue") return Answer{0, "7|RUNNING|1|node1|/home/b/jobs/theirs\x1fNone\n", ""};
    return Answer{0, "", ""};
  };
  SlurmClient client(fake, conf());
  EXPECT_THROW(client.cancel(7, "/home/a/jobs/k7"), NotFound);
  for (const auto& s : fake.specs) EXPECT_NE(s.argv[0], "scancel");
  client.cancel(7, "/elsewhere/jobs/theirs/");  // the same last component: that job, cancelled
  EXPECT_EQ(joined(fake.specs.back().argv), "scancel 7");
}

// Job 7 ended and the controller forgot it; then a controller started on fresh state gave 7 to
// another job, which runs now and has an earlier run of its own in the accounting. Asked with its
// folder, job 7 is its own accounting record.
TEST(SlurmClientFake, AnIdGivenOutAgainStillFindsTheJobsOwnRecord) {
  FakeLauncher fake;
  fake.answer = [&](const std::vector<std::string>& argv) {
    if (argv[0] == "scontrol" && argv[1] == "show" && argv[2] == "config")
      return Answer{0, "AccountingStorageType = accounting_storage/slurmdbd\n", ""};
    if (argv[0] == "squeue") return Answer{0, "7|RUNNING|1|node2|/home/b/jobs/y\x1fNone\n", ""};
    if (argv[0] == "sacct")
      return Answer{0,
                    "7|COMPLETED|0:0|1|node1|None|/home/a/jobs/k7\n"
                    "7|FAILED|3:0|1|node2|None|/home/b/jobs/x\n",
                    ""};
    return Answer{1, "", "slurm_load_jobs error: Invalid job id specified\n"};
  };
  SlurmClient client(fake, conf());
  auto known = client.jobs({7}, {{7, "/home/a/jobs/k7"}});
  ASSERT_EQ(known.count(7), 1u);
  EXPECT_EQ(known[7].slurm_state, "COMPLETED");
  EXPECT_EQ(known[7].node_list, "node1");
  EXPECT_EQ(client.job(7).slurm_state, "RUNNING");  // without a folder: whatever has the id
  EXPECT_TRUE(client.jobs({7}, {{7, "/home/c/jobs/z"}}).empty());  // no record of that job at all
  client.cancel(7, "/home/a/jobs/k7");  // it has ended: nothing to cancel, and the other is left alone
  for (const auto& s : fake.specs) EXPECT_NE(s.argv[0], "scancel");
}

// An ended job comes from Slurm's commands only: scontrol while the controller remembers it, and
// sacct never runs where Slurm keeps no accounting. No file of the controller's is opened, even
// where slurm.conf names a completion log (the login host need not be the controller).
TEST(SlurmClientFake, EndedJobsComeFromSlurmsCommandsNotItsFiles) {
  FakeLauncher fake;
  fake.answer = [&](const std::vector<std::string>& argv) {
    if (argv[0] == "scontrol" && argv[1] == "show" && argv[2] == "config")
      return Answer{0, "AccountingStorageType = accounting_storage/none\nJobCompType = jobcomp/filetxt\n"
                       "JobCompLoc = /nonexistent/jobcomp.txt\n", ""};
    if (argv[0] == "scontrol" && argv.back() == "7") return Answer{0, "JobId=7 JobState=COMPLETED ExitCode=0:0 NumNodes=1\n", ""};
    if (argv[0] == "scontrol") return Answer{1, "", "slurm_load_jobs error: Invalid job id specified\n"};
    return Answer{0, "", ""};  // squeue: no longer queued
  };
  SlurmClient client(fake, conf());
  auto known = client.jobs({7, 8});
  ASSERT_EQ(known.count(7), 1u);
  EXPECT_EQ(known[7].slurm_state, "COMPLETED");
  EXPECT_EQ(known.count(8), 0u);  // forgotten, and no accounting to ask: the runner's record decides
  for (const auto& s : fake.specs) EXPECT_NE(s.argv[0], "sacct");
}

TEST(SlurmClientFake, UnknownJobIsNotFoundAndNotCancelled) {
  FakeLauncher fake;
  fake.answer = [](const std::vector<std::string>& argv) {
    if (argv[0] == "scontrol" && argv[1] == "show" && argv[2] == "config")
      return Answer{0, "JobCompType = jobcomp/none\n", ""};
    return Answer{1, "", "slurm_load_jobs error: Invalid job id specified\n"};
  };
  SlurmClient client(fake, conf());
  EXPECT_THROW(client.job(99), NotFound);
  EXPECT_THROW(client.cancel(99), NotFound);
  for (const auto& s : fake.specs) EXPECT_NE(s.argv[0], "scancel");
}

TEST(SlurmClientFake, BadConfigurationPathsAreRefused) {
  FakeLauncher fake;
  ClientOptions o;
  o.slurm_conf = "relative/slurm.conf";
  EXPECT_THROW(SlurmClient(fake, o), InvalidArgument);
  o.slurm_conf = "/a\nb";
  EXPECT_THROW(SlurmClient(fake, o), InvalidArgument);
  o = conf();
  o.command_timeout = std::chrono::milliseconds(0);
  EXPECT_THROW(SlurmClient(fake, o), InvalidArgument);
}

}  // namespace
}  // namespace batchai::slurm
