// What enters a job and what a job cannot take down: a job sees its node's environment plus
// what its job file declares (never the submitter's AZURE_STORAGE_KEY), mounts refuse a
// storage key that is not their account's (job and cluster create, as the storage commands
// do), and a job that fills the disk fails saying so, recorded by its surviving supervisor.
#include <signal.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <thread>

#include "job_harness.hpp"

namespace fs = std::filesystem;

namespace batchai::test {
namespace {

using JobsIsolation = JobsFixture;

// Sets a variable of this process (and so of every `batchai` the test runs) for one scope.
struct ScopedEnv {
  ScopedEnv(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  const char* name_;
};

TEST_F(JobsIsolation, AJobSeesItsNodeAndItsJobFileNotTheSubmitter) {
  make_cluster("c2", 2);
  ScopedEnv submitter("AZURE_STORAGE_KEY", "submitter-secret-value");
  ScopedEnv other("SUBMITTER_ONLY_SETTING", "submitter-setting");
  const Json declared = {{"environmentVariables", {{{"name", "DECLARED"}, {"value", "from-the-job-file"}}}},
                         {"secrets", {{{"name", "JOB_SECRET"}, {"value", "secret-from-the-job-file"}}}},
                         {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"}};
  Json custom = declared;
  custom["nodeCount"] = 1;
  custom["customToolkitSettings"] = {{"commandLine", "env | sort"}};
  create("custom", custom, "c2");
  Json mpi = declared;
  mpi["nodeCount"] = 2;
  mpi["customMpiSettings"] = {{"commandLine", "env | sort | sed \"s/^/rank$OMPI_COMM_WORLD_RANK: /\""}, {"processCount", 2}};
  const bool have_mpirun = std::system("command -v mpirun >/dev/null 2>&1") == 0;
  if (have_mpirun) create("mpi", mpi, "c2");
  for (const std::string name : {"custom", "mpi"}) {
    if (name == "mpi" && !have_mpirun) continue;
    Json job = wait_state(name, {"succeeded", "failed"}, std::chrono::seconds(60));
    ASSERT_EQ(job["executionState"], "succeeded") << job.dump();
    const std::string env = read_file(stdouterr_file(home_, name, "stdout.txt"));
    SCOPED_TRACE(name + " job's environment:\n" + env);
    EXPECT_EQ(env.find("AZURE_STORAGE_KEY"), std::string::npos);
    EXPECT_EQ(env.find("submitter-secret-value"), std::string::npos);
    EXPECT_EQ(env.find("SUBMITTER_ONLY_SETTING"), std::string::npos);
    EXPECT_NE(env.find("DECLARED=from-the-job-file\n"), std::string::npos);
    EXPECT_NE(env.find("JOB_SECRET=secret-from-the-job-file\n"), std::string::npos);
    EXPECT_NE(env.find("AZ_BATCHAI_JOB_TEMP="), std::string::npos);
    EXPECT_NE(env.find("AZ_BATCHAI_STDOUTERR_DIR="), std::string::npos);
    // The system PATH behind the running batchai's folder (§4.8), never the submitter's.
    const std::string exe_dir = fs::path(BATCHAI_EXE).lexically_normal().parent_path().string();
    EXPECT_NE(env.find("PATH=" + exe_dir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"),
              std::string::npos);
    EXPECT_NE(env.find("BATCHAI_JOB_KEY="), std::string::npos);  // the marker that finds its processes
    if (name == "mpi") {
      EXPECT_NE(env.find("rank1: OMPI_COMM_WORLD_RANK=1\n"), std::string::npos);
      EXPECT_NE(env.find("rank1: BATCHAI_NODE_ID="), std::string::npos);
    }
  }
}

TEST_F(JobsIsolation, MountsRefuseAKeyThatIsNotTheAccounts) {
  const std::string acct = "keysacct" + std::to_string(::getpid() % 100000);
  ASSERT_EQ(run("storage account create -n " + acct + " -g rg -l eastus").code, 0);
  ASSERT_EQ(run("storage share create -n share1 --account-name " + acct).code, 0);
  Json keys = json("storage account keys list -n " + acct + " -g rg");
  ASSERT_EQ(keys.size(), 2u);
  const std::string key2 = keys[1]["value"];
  make_cluster("c1", 1);
  auto job_with_key = [&](const std::string& key) {
    return Json{{"nodeCount", 1},
                {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                {"customToolkitSettings", {{"commandLine", "true"}}},
                {"mountVolumes",
                 {{"azureFileShares",
                   {{{"accountName", acct},
                     {"azureFileUrl", "https://" + acct + ".file.core.windows.net/share1"},
                     {"credentials", {{"accountKey", key}}},
                     {"relativeMountPath", "afs"}}}}}}};
  };
  const std::string create = "batchai job create " + scope_ + " -c c1 ";
  Result wrong = run(create + "-n wrong -f " + job_file("wrong", job_with_key("bm90IHRoZSBrZXk=")));
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("ERROR: The account key given for storage account '" + acct + "'"), std::string::npos)
      << wrong.err;
  EXPECT_NE(wrong.err.find("is not valid (authentication failed)"), std::string::npos) << wrong.err;
  EXPECT_EQ(run("batchai job show " + scope_ + " -n wrong").code, 3);  // nothing was created
  Result cli_key = run(create + "-n clikey -f " + job_file("clikey", {{"nodeCount", 1},
      {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"}, {"customToolkitSettings", {{"commandLine", "true"}}}}) +
      " --afs-name share1 --storage-account-name " + acct + " --storage-account-key 'bm90IHRoZSBrZXk='");
  EXPECT_EQ(cli_key.code, 1);
  EXPECT_NE(cli_key.err.find("is not valid (authentication failed)"), std::string::npos) << cli_key.err;
  // Either of the account's keys is its key.
  Result right = run(create + "-n right -f " + job_file("right", job_with_key(key2)));
  EXPECT_EQ(right.code, 0) << right.err;

  // Cluster create: a config file's mount and a command-line mount.
  const Json cluster_file = {{"properties",
                              {{"nodeSetup", {{"mountVolumes", job_with_key("bm90IHRoZSBrZXk=")["mountVolumes"]}}}}}};
  std::ofstream(work_ / "cluster.json") << cluster_file.dump();
  Result cluster = run("batchai cluster create -g rg -w ws -n bad -s Standard_D1 -t 1 -u tester -p Secret.123 -f " +
                       (work_ / "cluster.json").string());
  EXPECT_EQ(cluster.code, 1);
  EXPECT_NE(cluster.err.find("is not valid (authentication failed)"), std::string::npos) << cluster.err;
  Result cluster_cli = run("batchai cluster create -g rg -w ws -n bad2 -s Standard_D1 -t 1 -u tester -p Secret.123 "
                           "--afs-name share1 --storage-account-name " + acct + " --storage-account-key 'bm90IHRoZSBrZXk='");
  EXPECT_EQ(cluster_cli.code, 1);
  EXPECT_NE(cluster_cli.err.find("is not valid (authentication failed)"), std::string::npos) << cluster_cli.err;
  EXPECT_EQ(run("batchai cluster show -g rg -w ws -n bad").code, 3);
  EXPECT_EQ(run("batchai cluster show -g rg -w ws -n bad2").code, 3);
}

// A 24 MB tmpfs holds the whole BATCHAI_HOME, so a job (or the test) can fill the disk the state
// lives on. Needs mount(2) (root with CAP_SYS_ADMIN); skipped where the machine does not allow it.
class JobsOnASmallDisk : public JobsFixture {
 protected:
  void SetUp() override {
    JobsFixture::SetUp();
    small_ = work_ / "small";
    fs::create_directories(small_);
    if (::mount("tmpfs", small_.c_str(), "tmpfs", 0, "size=24m") != 0)
      GTEST_SKIP() << "cannot mount a small tmpfs here: " << std::strerror(errno);
    mounted_ = true;
    saved_home_ = home_;
    home_ = small_ / "home";
    ::setenv("BATCHAI_HOME", home_.c_str(), 1);
    ASSERT_EQ(run("group create -n rg -l eastus").code, 0);
    ASSERT_EQ(run("batchai workspace create -g rg -n ws -l eastus").code, 0);
    ASSERT_EQ(run("batchai experiment create -g rg -w ws -n exp1").code, 0);
  }
  void TearDown() override {
    if (mounted_) {  // the filled folder is unmounted whatever happened
      run("batchai workspace delete -g rg -n ws -y");
      ::umount2(small_.c_str(), MNT_DETACH);
      home_ = saved_home_;
      ::setenv("BATCHAI_HOME", saved_home_.c_str(), 1);
    }
    JobsFixture::TearDown();
  }
  // Writes zeros beside the home until the disk is full; returns the file.
  fs::path fill_disk(const std::string& name = "filler") {
    const fs::path filler = small_ / name;
    std::ofstream out(filler, std::ios::binary);
    const std::string block(1 << 16, '\0');
    while (out.write(block.data(), static_cast<std::streamsize>(block.size()))) {
    }
    return filler;
  }

  fs::path small_, saved_home_;
  bool mounted_ = false;
};

TEST_F(JobsOnASmallDisk, AJobThatFillsTheDiskFailsSayingSoAndItsSupervisorRecordsIt) {
  make_cluster("c1", 1);
  create("fill", {{"nodeCount", 1},
                  {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                  {"customToolkitSettings", {{"commandLine", "head -c 200000000 /dev/zero > $AZ_BATCHAI_JOB_TEMP/fill"}}}});
  Json job = wait_state("fill", {"succeeded", "failed"}, std::chrono::seconds(60));
  EXPECT_EQ(job["executionState"], "failed") << job.dump();
  const Json& error = job["executionInfo"]["errors"][0];
  EXPECT_EQ(error["code"], "JobFailed") << job.dump();  // not SupervisorDied: the supervisor recorded it
  EXPECT_EQ(job["executionInfo"]["exitCode"], 1) << job.dump();
  EXPECT_NE(error["message"].get<std::string>().find("is full (no space left on device)"), std::string::npos)
      << job.dump();
  std::cout << "[disk-full] " << error["code"].get<std::string>() << ": " << error["message"].get<std::string>() << "\n";
}

// A full disk must not hide the state it holds: a command that only shows state answers from
// what is stored (with a warning) even when bringing it up to date would need a write; a command
// that changes state fails saying why; once space is back, the next command catches up.
TEST_F(JobsOnASmallDisk, AFullDiskStillShowsWhatIsStored) {
  make_cluster("c1", 1);
  create("orphan", {{"nodeCount", 1},
                    {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                    {"customToolkitSettings", {{"commandLine", "exec -a " + marker_ + " sleep 300"}}}});
  ASSERT_EQ(wait_state("orphan", {"running"})["executionState"], "running");
  // The scheduler stores `running`, then starts the supervisor, which writes its pid into the lock
  // when it takes it: read it once there (bounded; under load it came after the state once).
  pid_t supervisor = 0;
  for (int i = 0; i < 200 && supervisor <= 1; ++i) {
    for (const auto& dir : fs::directory_iterator(home_ / "jobs")) std::ifstream(dir.path() / "supervisor.lock") >> supervisor;
    if (supervisor <= 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GT(supervisor, 1);
  const fs::path filler = fill_disk();
  // Its supervisor gone, the next reconcile must write the job's failure: the disk takes nothing.
  ASSERT_EQ(::kill(supervisor, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Result shown = run("batchai job show " + scope_ + " -n orphan");
  ASSERT_EQ(shown.code, 0) << shown.err;
  EXPECT_EQ(Json::parse(shown.out)["executionState"], "running");  // what is stored
  EXPECT_NE(shown.err.find("could not be brought up to date"), std::string::npos) << shown.err;
  EXPECT_NE(shown.err.find("disk is full"), std::string::npos) << shown.err;
  // The show, the last connection, removed the WAL: fill what that freed, or a small create fits.
  const fs::path refill = fill_disk("refill");
  // No room for a new WAL now: the state is read from the file as it is.
  Result shown_again = run("batchai job show " + scope_ + " -n orphan");
  ASSERT_EQ(shown_again.code, 0) << shown_again.err;
  EXPECT_EQ(Json::parse(shown_again.out)["executionState"], "running");
  EXPECT_NE(shown_again.err.find("disk is full"), std::string::npos) << shown_again.err;
  Result created = run("batchai job create " + scope_ + " -c c1 -n second -f " +
                       job_file("second", {{"nodeCount", 1},
                                                    {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
                                                    {"customToolkitSettings", {{"commandLine", "true"}}}}));
  EXPECT_NE(created.code, 0);
  EXPECT_NE(created.err.find("disk is full"), std::string::npos) << created.err;
  fs::remove(filler);
  fs::remove(refill);
  Json job = show("orphan");
  EXPECT_EQ(job["executionState"], "failed");
  EXPECT_EQ(job["executionInfo"]["errors"][0]["code"], "SupervisorDied") << job.dump();
  EXPECT_TRUE(no_processes_within(marker_, std::chrono::seconds(5)));
}

}  // namespace
}  // namespace batchai::test
