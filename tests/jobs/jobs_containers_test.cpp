// Jobs with containerSettings run in their image with Podman (docs/job-runtime.md §4.14):
// a tiny image built offline for each test (busybox-static, bash and its libraries, `podman
// import`), removed after it with every container of the test. Skipped, saying why, only where
// Podman cannot run a container on this machine.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "batchai/common/process_tree.hpp"
#include "job_harness.hpp"
#include "support/shell.hpp"

namespace batchai::test {
namespace {

namespace fs = std::filesystem;

std::string shell_output(const std::string& command) { return run_shell(command).out; }

class JobsContainers : public JobsFixture {
 protected:
  void SetUp() override {
    if (std::system("command -v podman >/dev/null 2>&1") != 0) GTEST_SKIP() << "podman is not installed (cmake/install-deps.sh)";
    JobsFixture::SetUp();
    image_ = "localhost/batchai-test-" + std::to_string(::getpid()) + ":1";
    const fs::path root = work_ / "image";
    const std::string build =
        "set -e; d='" + root.string() + "'; mkdir -p \"$d/bin\" \"$d/etc\" \"$d/tmp\"; cp /bin/busybox \"$d/bin/\"; "
        "for a in $(/bin/busybox --list); do [ -e \"$d/bin/$a\" ] || ln -s busybox \"$d/bin/$a\"; done; "
        "cp /bin/bash \"$d/bin/bash\"; for l in $(ldd /bin/bash | grep -o '/[^ ]*'); do "
        "mkdir -p \"$d$(dirname $l)\"; cp -L \"$l\" \"$d$l\"; done; echo batchai-test-image > \"$d/etc/batchai-test-image\"; "
        "tar -C \"$d\" -cf \"$d.tar\" .; podman import -q \"$d.tar\" " + image_ + " >/dev/null";
    ASSERT_EQ(std::system(build.c_str()), 0) << "could not build the test image offline";
    built_ = true;
    auto limit = [](const char* name, int resource) {  // as batchai sets them (job_containers.cpp)
      rlimit r{};
      ::getrlimit(resource, &r);
      rlim_t pid_max = RLIM_INFINITY;
      std::ifstream("/proc/sys/kernel/pid_max") >> pid_max;
      if (resource == RLIMIT_NPROC) r.rlim_cur = std::min(r.rlim_cur, pid_max), r.rlim_max = std::min(r.rlim_max, pid_max);
      auto text = [](rlim_t v) { return v == RLIM_INFINITY ? std::string("-1") : std::to_string(v); };
      return std::string(" --ulimit ") + name + "=" + text(r.rlim_cur) + ":" + text(r.rlim_max);
    };
    ulimits_ = limit("nofile", RLIMIT_NOFILE) + limit("nproc", RLIMIT_NPROC);
    const std::string probe = "podman --runtime runc run --rm --network=host" + ulimits_ + " " + image_ + " true >" +
                              (work_ / "probe").string() + " 2>&1";
    if (std::system(probe.c_str()) != 0)
      GTEST_SKIP() << "podman cannot run containers here: " << read_file(work_ / "probe");
  }

  void TearDown() override {
    if (work_.empty()) return;  // skipped before the fixture was made
    note_keys();
    JobsFixture::TearDown();  // deletes the workspace: its jobs end
    // Removed after each job's end, within the runner's own bound: two tries of podman rm, 30 s each
    // (job_containers.cpp). Under the whole suite on 2 cores, 2 of 4 were still there after 20 s once.
    const bool gone = containers_gone_within(std::chrono::seconds(70));
    std::string left = containers_of_test();
    EXPECT_TRUE(gone) << "containers left behind: " << left;
    std::replace(left.begin(), left.end(), '\n', ' ');  // a name a line: all of them to one podman rm
    if (!left.empty()) std::system(("podman rm -f -t 0 " + left + " >/dev/null 2>&1").c_str());  // not into the next test
    if (built_) std::system(("podman rmi -f " + image_ + " >/dev/null 2>&1").c_str());
  }

  // `podman ps -a` names of containers of this test's jobs (they carry the batchai.job label).
  std::string containers_of_test() {
    note_keys();
    std::string out;
    for (const auto& key : job_keys_) out += shell_output("podman ps -a --filter label=batchai.job=" + key + " --format '{{.Names}}'");
    return out;
  }

  // A run removes its containers right after it stored the job's end: they go within a bound.
  bool containers_gone_within(std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!containers_of_test().empty()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return true;
  }

  Json container_job(const std::string& command, int nodes = 1) {
    Json props = {{"nodeCount", nodes},
                  {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_TEMP"},
                  {"customToolkitSettings", {{"commandLine", command}}},
                  {"containerSettings", {{"imageSourceRegistry", {{"image", image_}}}, {"shmSize", "64m"}}}};
    return props;
  }

  // Notes the keys of the test's jobs (their folders in the state area) for the container checks.
  void note_keys() {
    for (const auto& e : fs::directory_iterator(home_ / "jobs", ec_)) job_keys_.insert(e.path().filename().string());
  }

  std::string image_;
  std::string ulimits_;  // " --ulimit nofile=S:H --ulimit nproc=S:H", as batchai sets them
  bool built_ = false;
  std::set<std::string> job_keys_;
  std::error_code ec_;
};

TEST_F(JobsContainers, AJobRunsInItsImageOnEveryNodeWithItsFoldersVariablesAndSecrets) {
  make_cluster("c1", 2);
  Json props = container_job(
      "cat /etc/batchai-test-image; echo \"var=$MYVAR secret=$MYSECRET\"; echo \"temp=$AZ_BATCHAI_JOB_TEMP\"; "
      "df -k /dev/shm | tail -1; echo nofile=$(ulimit -n); cat $AZ_BATCHAI_JOB_TEMP/prep.txt", 2);
  props["jobPreparation"] = {{"commandLine", "cat /etc/batchai-test-image > $AZ_BATCHAI_JOB_TEMP/prep.txt"}};
  props["environmentVariables"] = Json::array({{{"name", "MYVAR"}, {"value", "v1"}}});
  props["secrets"] = Json::array({{{"name", "MYSECRET"}, {"value", "s3cret"}}});
  create("j1", props);
  const Json done = wait_state("j1", {"succeeded", "failed"}, std::chrono::seconds(60));
  ASSERT_EQ(done["executionState"], "succeeded") << done.dump(2) << read_file(stdouterr_file(home_, "j1", "stderr.txt"));
  const std::string out = read_file(stdouterr_file(home_, "j1", "stdout.txt"));
  EXPECT_NE(out.find("batchai-test-image\nvar=v1 secret=s3cret\n"), std::string::npos) << out;
  EXPECT_NE(out.find("temp=" + home_.string()), std::string::npos) << out;  // the host's path, the same inside
  EXPECT_NE(out.find(" 65536 "), std::string::npos) << out;                 // shmSize 64m as /dev/shm
  rlimit nofile{};
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  EXPECT_NE(out.find("nofile=" + std::to_string(nofile.rlim_cur)), std::string::npos) << out;
  // The preparation ran in the image on both nodes (each node's job folder).
  int prepared = 0;
  for (const auto& e : fs::recursive_directory_iterator(home_))
    if (e.path().filename() == "prep.txt" && read_file(e.path()) == "batchai-test-image\n") ++prepared;
  EXPECT_EQ(prepared, 2);
  EXPECT_TRUE(containers_gone_within(std::chrono::seconds(20))) << containers_of_test();
}

TEST_F(JobsContainers, TerminateAndWallClockLimitRemoveTheJobsContainers) {
  make_cluster("c1", 2);
  create("j1", container_job("sleep 300; echo " + marker_));
  Json wall = container_job("sleep 301; echo " + marker_);
  wall["constraints"] = {{"maxWallClockTime", "PT4S"}};
  create("j2", wall);
  wait_state("j1", {"running"});
  // Both jobs' containers are up (one each: one node).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  // Only this test's containers count: other tests may run theirs at the same time.
  const auto count_lines = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
  while (count_lines(containers_of_test()) < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_NE(containers_of_test(), "");
  ASSERT_EQ(run("batchai job terminate " + scope_ + " -n j1 -y").code, 0);
  const Json stopped = wait_state("j1", {"succeeded", "failed"});
  EXPECT_EQ(stopped["executionState"], "failed");
  EXPECT_EQ(stopped["executionInfo"]["errors"][0]["code"], "JobTerminated") << stopped.dump(2);
  const Json timed = wait_state("j2", {"succeeded", "failed"});
  EXPECT_EQ(timed["executionState"], "failed");
  EXPECT_EQ(timed["executionInfo"]["errors"][0]["code"], "JobTimedOut") << timed.dump(2);
  EXPECT_TRUE(containers_gone_within(std::chrono::seconds(20))) << containers_of_test();
  EXPECT_TRUE(no_processes_within(marker_, std::chrono::seconds(10)));
}

TEST_F(JobsContainers, ADeadSupervisorsContainersAreRemoved) {
  make_cluster("c1", 1);
  create("j1", container_job("sleep 300; echo " + marker_));
  wait_state("j1", {"running"});
  // The supervisor: the parent of the task's `podman exec` (the process whose argv holds the marker).
  pid_t sup = 0;
  for (int i = 0; i < 150 && sup == 0; ++i) {
    for (const auto& p : list_processes()) {
      const std::string cmdline = read_file("/proc/" + std::to_string(p.pid) + "/cmdline");
      const std::string parent_line = read_file("/proc/" + std::to_string(p.ppid) + "/cmdline");
      if (cmdline.find(marker_) != std::string::npos && parent_line.find("_supervise") != std::string::npos) sup = p.ppid;
    }
    if (sup == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_GT(sup, 1);
  // `podman exec` and bash inside the container, seen from the host.
  for (int i = 0; i < 100 && count_processes(marker_) < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_GE(count_processes(marker_), 2);
  ASSERT_EQ(::kill(sup, SIGKILL), 0);
  const Json done = wait_state("j1", {"succeeded", "failed"});
  EXPECT_EQ(done["executionInfo"]["errors"][0]["code"], "SupervisorDied") << done.dump(2);
  EXPECT_TRUE(containers_gone_within(std::chrono::seconds(20))) << containers_of_test();
  EXPECT_TRUE(no_processes_within(marker_, std::chrono::seconds(10)));
}

// What a runner that died between storing the end and removing the containers leaves: the job
// ended, its record in the home and a container with its label. The next command's reconcile
// removes it; a running job's containers stay.
TEST_F(JobsContainers, TheReconcileRemovesTheContainersOfEndedJobs) {
  make_cluster("c1", 2);
  create("done", container_job("true"));
  ASSERT_EQ(wait_state("done", {"succeeded", "failed"}, std::chrono::seconds(60))["executionState"], "succeeded");
  ASSERT_TRUE(containers_gone_within(std::chrono::seconds(20)));
  note_keys();
  ASSERT_EQ(job_keys_.size(), 1u);
  const std::string done_key = *job_keys_.begin();
  create("busy", container_job("sleep 300; echo " + marker_));
  wait_state("busy", {"running"});
  const std::string stray = "batchai-" + done_key + "-stray";
  ASSERT_EQ(std::system(("podman --runtime runc run -d --name " + stray + " --label batchai.job=" + done_key +
                         " --network=host" + ulimits_ + " --entrypoint sleep " + image_ + " infinity >/dev/null")
                            .c_str()),
            0);
  std::ofstream(home_ / "containers" / done_key) << stray << "\n";
  // The busy job's container is up (with the stray: two) before the reconcile looks.
  auto up = [this] {
    const std::string names = containers_of_test();
    return std::count(names.begin(), names.end(), '\n');
  };
  for (int i = 0; i < 150 && up() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string before = containers_of_test();
  ASSERT_NE(before.find(stray), std::string::npos);
  ASSERT_EQ(run("batchai job list " + scope_).code, 0);  // a command: one reconcile
  const std::string after = containers_of_test();
  EXPECT_EQ(after.find(stray), std::string::npos) << after;
  EXPECT_FALSE(fs::exists(home_ / "containers" / done_key));
  EXPECT_NE(after.find("batchai-"), std::string::npos) << "the running job's container went too";
  ASSERT_EQ(run("batchai job terminate " + scope_ + " -n busy -y").code, 0);
  wait_state("busy", {"succeeded", "failed"});
  EXPECT_TRUE(containers_gone_within(std::chrono::seconds(20))) << containers_of_test();
}

TEST_F(JobsContainers, AnImageThatIsAbsentAndUnpullableFailsTheJobWithinTheBound) {
  make_cluster("c1", 1);
  ::setenv("BATCHAI_IMAGE_PULL_TIMEOUT_S", "20", 1);
  Json props = container_job("true");
  props["containerSettings"]["imageSourceRegistry"]["image"] = "localhost:9/batchai-absent:1";
  props["containerSettings"]["imageSourceRegistry"]["credentials"] = {{"username", "u"}, {"password", "pw-" + marker_}};
  const auto start = std::chrono::steady_clock::now();
  create("j1", props);
  const Json done = wait_state("j1", {"succeeded", "failed"}, std::chrono::seconds(40));
  ::unsetenv("BATCHAI_IMAGE_PULL_TIMEOUT_S");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  ASSERT_EQ(done["executionState"], "failed") << done.dump(2);
  const std::string message = done["executionInfo"]["errors"][0]["message"].get<std::string>();
  EXPECT_EQ(done["executionInfo"]["errors"][0]["code"], "ContainerImageUnavailable");
  for (const char* said : {"'localhost:9/batchai-absent:1'", "registry 'localhost:9'", "podman load", "podman pull"})
    EXPECT_NE(message.find(said), std::string::npos) << said << " in " << message;
  // The password went to the pull in a job-private file, removed after it; it is nowhere else.
  EXPECT_EQ(done.dump().find("pw-" + marker_), std::string::npos);
  for (const auto& e : fs::recursive_directory_iterator(home_)) {
    EXPECT_NE(e.path().filename(), "registry-auth.json") << e.path();
    if (e.is_regular_file() && e.path().filename().string().rfind("state.db", 0) != 0) {  // the store keeps it, as secrets
      EXPECT_EQ(read_file(e.path()).find("pw-" + marker_), std::string::npos) << e.path();
    }
  }
}

// Needs no Podman: everything is refused before anything runs.
using JobsContainerSettings = JobsFixture;

TEST_F(JobsContainerSettings, JobCreateRefusesBadSettingsAndAMissingPodman) {
  make_cluster("c1", 1);
  auto container_job = [](const std::string& command) {
    return Json{{"nodeCount", 1},
                {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_TEMP"},
                {"customToolkitSettings", {{"commandLine", command}}},
                {"containerSettings", {{"imageSourceRegistry", {{"image", "localhost/some-image:1"}}}}}};
  };
  Json props = container_job("true");
  props["containerSettings"]["imageSourceRegistry"]["image"] = "--privileged";
  Result r = run("batchai job create " + scope_ + " -n bad -c c1 -f " + job_file("bad", props));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("is not a Docker image reference"), std::string::npos) << r.err;
  props = container_job("true");
  props["containerSettings"]["shmSize"] = "12parsecs";
  r = run("batchai job create " + scope_ + " -n bad2 -c c1 -f " + job_file("bad2", props));
  EXPECT_NE(r.err.find("is not a size"), std::string::npos) << r.err;
  ::setenv("BATCHAI_PODMAN", "/nonexistent/podman", 1);
  r = run("batchai job create " + scope_ + " -n nopodman -c c1 -f " + job_file("np", container_job("true")));
  ::unsetenv("BATCHAI_PODMAN");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("install the podman package"), std::string::npos) << r.err;
  EXPECT_EQ(run("batchai job show " + scope_ + " -n nopodman").code, 3);  // nothing was created
}

// A pull that hangs (a fake podman: no image is ever there, `pull` sleeps): terminate ends the job
// at once and the pull with it, long before the pull's bound.
TEST_F(JobsContainerSettings, TerminateStopsAPullInProgress) {
  make_cluster("c1", 1);
  const fs::path fake = work_ / "fake-podman";
  std::ofstream(fake) << "#!/bin/sh\n"
                         "for a in \"$@\"; do [ \"$a\" = pull ] && exec sh -c 'sleep 300; echo " << marker_ << "'; done\n"
                         "for a in \"$@\"; do case \"$a\" in run) echo 'Error: image not known' >&2; exit 125;; "
                         "exists) exit 1;; esac; done\nexit 0\n";
  fs::permissions(fake, fs::perms::owner_all);
  ::setenv("BATCHAI_PODMAN", fake.c_str(), 1);
  ::setenv("BATCHAI_IMAGE_PULL_TIMEOUT_S", "300", 1);
  create("j1", Json{{"nodeCount", 1},
                    {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_TEMP"},
                    {"customToolkitSettings", {{"commandLine", "true"}}},
                    {"containerSettings", {{"imageSourceRegistry", {{"image", "example.org/slow/image:1"}}}}}});
  ::unsetenv("BATCHAI_PODMAN");
  ::unsetenv("BATCHAI_IMAGE_PULL_TIMEOUT_S");
  for (int i = 0; i < 300 && count_processes(marker_) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_GT(count_processes(marker_), 0) << "the pull never started";
  const auto asked = std::chrono::steady_clock::now();
  ASSERT_EQ(run("batchai job terminate " + scope_ + " -n j1 -y").code, 0);
  const Json done = wait_state("j1", {"succeeded", "failed"}, std::chrono::seconds(30));
  EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::seconds(15));
  EXPECT_EQ(done["executionInfo"]["errors"][0]["code"], "JobTerminated") << done.dump(2);
  EXPECT_TRUE(no_processes_within(marker_, std::chrono::seconds(10)));
}

// The Debian 12 image with Open MPI and Python for MPI jobs: built once per build folder with
// mmdebstrap from the machine's own Debian mirror (no registry), imported for the test, removed after.
class JobsContainersMpi : public JobsContainers {
 protected:
  void SetUp() override {
    JobsContainers::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const fs::path tar = fs::path(BATCHAI_BINARY_DIR) / "tests" / "jobs" / "mpi-image.tar";
    if (!fs::exists(tar)) {
      if (std::system("command -v mmdebstrap >/dev/null 2>&1") != 0) GTEST_SKIP() << "mmdebstrap is not installed";
      const std::string build = "mmdebstrap --quiet --format=tar --variant=minbase --include=openmpi-bin,python3 bookworm '" +
                                tar.string() + ".part' /etc/apt/sources.list.d/debian.sources >'" +
                                (work_ / "mmdebstrap.log").string() + "' 2>&1 && mv '" + tar.string() + ".part' '" +
                                tar.string() + "'";
      if (std::system(build.c_str()) != 0)
        GTEST_SKIP() << "cannot build the Debian image offline (no Debian mirror?): " << read_file(work_ / "mmdebstrap.log");
    }
    mpi_image_ = "localhost/batchai-test-mpi-" + std::to_string(::getpid()) + ":1";
    ASSERT_EQ(std::system(("podman import -q '" + tar.string() + "' " + mpi_image_ + " >/dev/null").c_str()), 0);
  }
  void TearDown() override {
    if (!mpi_image_.empty()) std::system(("podman rmi -f " + mpi_image_ + " >/dev/null 2>&1").c_str());
    JobsContainers::TearDown();
  }
  std::string mpi_image_;
};

// "val_acc: X" of each epoch in a job's stdout.txt.
std::vector<std::string> validation_accuracies(const std::string& out) {
  std::vector<std::string> found;
  for (std::size_t at = out.find("val_acc: "); at != std::string::npos; at = out.find("val_acc: ", at + 1))
    found.push_back(out.substr(at + 9, out.find_first_of(" \n", at + 9) - at - 9));
  return found;
}

TEST_F(JobsContainersMpi, RanksRunInTheirNodesContainersAndTrainAsOnTheHost) {
  make_cluster("c1", 4);
  // Each rank says which container (host name) it runs in and which node it is.
  Json mpi = {{"nodeCount", 4},
              {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_TEMP"},
              {"customMpiSettings", {{"commandLine", "echo \"rank $OMPI_COMM_WORLD_RANK node $BATCHAI_NODE_ID in $(hostname)\""},
                                     {"processCount", 4}}},
              {"containerSettings", {{"imageSourceRegistry", {{"image", mpi_image_}}}}}};
  create("m", mpi);
  const Json m = wait_state("m", {"succeeded", "failed"}, std::chrono::seconds(120));
  ASSERT_EQ(m["executionState"], "succeeded") << m.dump(2) << read_file(stdouterr_file(home_, "m", "stderr.txt"));
  const std::string said = read_file(stdouterr_file(home_, "m", "stdout.txt"));
  for (int r = 0; r < 4; ++r)
    EXPECT_NE(said.find("rank " + std::to_string(r) + " node "), std::string::npos) << said;
  for (int n = 0; n < 4; ++n)
    EXPECT_NE(said.find(" in batchai-node-" + std::to_string(n) + "\n"), std::string::npos) << said;
  // The tutorial's horovod job, in containers and on the host: the same accuracies each epoch.
  // The 4 containers share node 0's IPC and PID namespaces, so the trainer sees one host as on the
  // host (its shared-memory allreduce, the cores divided among 4 ranks): one reduction order.
  Json horovod = {{"nodeCount", 4},
                  {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_TEMP"},
                  {"horovodSettings", {{"pythonScriptFilePath", "batchai-train"},
                                       {"commandLineArgs", "--dir=$AZ_BATCHAI_JOB_TEMP/out --synthetic=256 --epochs=2 "
                                                           "--steps-per-epoch=4 --validation-images=64"}}}};
  create("host", horovod);
  ASSERT_EQ(wait_state("host", {"succeeded", "failed"}, std::chrono::seconds(300))["executionState"], "succeeded")
      << read_file(stdouterr_file(home_, "host", "stderr.txt"));
  horovod["containerSettings"] = {{"imageSourceRegistry", {{"image", mpi_image_}}}};
  create("boxed", horovod);
  const Json boxed = wait_state("boxed", {"succeeded", "failed"}, std::chrono::seconds(300));
  ASSERT_EQ(boxed["executionState"], "succeeded") << boxed.dump(2) << read_file(stdouterr_file(home_, "boxed", "stderr.txt"));
  const auto on_host = validation_accuracies(read_file(stdouterr_file(home_, "host", "stdout.txt")));
  const auto in_containers = validation_accuracies(read_file(stdouterr_file(home_, "boxed", "stdout.txt")));
  ASSERT_EQ(on_host.size(), 2u) << read_file(stdouterr_file(home_, "host", "stdout.txt"));
  EXPECT_EQ(in_containers, on_host);
  const std::string said_boxed = read_file(stdouterr_file(home_, "boxed", "stderr.txt"));
  EXPECT_NE(said_boxed.find("shared memory within each host: 4 ranks on 1 host(s)"), std::string::npos) << said_boxed;
  std::cout << "[containers] val_acc per epoch on the host " << on_host[0] << ", " << on_host[1]
            << "; in 4 containers " << (in_containers.size() == 2 ? in_containers[0] + ", " + in_containers[1] : "?") << "\n";
}

}  // namespace
}  // namespace batchai::test
