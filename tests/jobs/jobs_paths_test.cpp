// Paths built from job data stay inside the job: `job file stream/list` refuse absolute and '..'
// names, never follow links the job planted, stream in bounded memory; stdOutErrPathPrefix,
// pathSuffix and mount names cannot point outside; a missing share fails the job with its name.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "job_harness.hpp"

namespace fs = std::filesystem;

namespace batchai::test {
namespace {

class JobsPaths : public JobsFixture {
 protected:
  void SetUp() override {
    JobsFixture::SetUp();
    make_cluster("c1", 1);
  }
  Json props(const std::string& command) {
    return {{"nodeCount", 1},
            {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"},
            {"customToolkitSettings", {{"commandLine", command}}}};
  }
};

TEST_F(JobsPaths, StreamRefusesNamesOutsideTheOutputFolder) {
  create("j", props("echo hello"));
  ASSERT_EQ(wait_state("j", {"succeeded", "failed"})["executionState"], "succeeded");
  for (const std::string name : {"/etc/passwd", "../../../../../../etc/passwd", "../stdouterr/stdout.txt"}) {
    Result r = run("batchai job file stream " + scope_ + " -j j -f '" + name + "'");
    EXPECT_EQ(r.code, 1) << name << "\n" << r.out << r.err;
    EXPECT_EQ(r.out, "") << name;
    EXPECT_EQ(r.err.rfind("ERROR: The file name '" + name + "' must ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  Result list = run("batchai job file list " + scope_ + " -j j -p ../..");
  EXPECT_EQ(list.code, 1);
  EXPECT_EQ(list.err.rfind("ERROR: The path '../..' must not contain '..'", 0), 0u) << list.err;
  Result ok = run("batchai job file stream " + scope_ + " -j j -f stdout.txt");
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(ok.out, "hello\n");
}

TEST_F(JobsPaths, LinksTheJobPlantsAreListedAsLinksNeverFollowed) {
  const fs::path secret = work_ / "secret.txt";
  std::ofstream(secret) << "TOP SECRET, 29 bytes of it..\n";
  create("j", props("ln -s " + secret.string() + " $AZ_BATCHAI_STDOUTERR_DIR/leak.txt && "
                    "ln -s " + work_.string() + " $AZ_BATCHAI_STDOUTERR_DIR/outdir && "
                    "ln -s stdout.txt $AZ_BATCHAI_STDOUTERR_DIR/inside.txt && echo data"));
  ASSERT_EQ(wait_state("j", {"succeeded", "failed"})["executionState"], "succeeded");
  Json listed = json("batchai job file list " + scope_ + " -j j");
  std::map<std::string, Json> by_name;
  for (const auto& f : listed) by_name[f["name"]] = f;
  ASSERT_TRUE(by_name.count("leak.txt")) << listed.dump();
  EXPECT_TRUE(by_name["leak.txt"]["contentLength"].is_null()) << listed.dump();
  EXPECT_TRUE(by_name["leak.txt"]["downloadUrl"].is_null()) << listed.dump();
  EXPECT_EQ(by_name["outdir"]["fileType"], "file") << "a link out is no folder of the job";
  EXPECT_EQ(by_name["inside.txt"]["contentLength"], 5) << "a link inside is the file it names";
  Result leak = run("batchai job file stream " + scope_ + " -j j -f leak.txt");
  EXPECT_EQ(leak.code, 1);
  EXPECT_EQ(leak.out.find("TOP SECRET"), std::string::npos);
  EXPECT_EQ(leak.err.rfind("ERROR: The file name 'leak.txt' leads out of the output directory 'stdouterr' of job 'j'", 0),
            0u) << leak.err;
  Result through = run("batchai job file stream " + scope_ + " -j j -f outdir/secret.txt");
  EXPECT_EQ(through.code, 1);
  EXPECT_EQ(through.out.find("TOP SECRET"), std::string::npos);
  EXPECT_EQ(run("batchai job file list " + scope_ + " -j j -p outdir").code, 1);
}

TEST_F(JobsPaths, FieldsThatWouldLeaveAreRefusedAtCreate) {
  const std::vector<std::pair<Json, std::string>> cases = {
      {{{"stdOutErrPathPrefix", "/tmp"}}, "ERROR: stdOutErrPathPrefix '/tmp' must start with $AZ_BATCHAI_MOUNT_ROOT"},
      {{{"stdOutErrPathPrefix", "relative/dir"}}, "ERROR: stdOutErrPathPrefix 'relative/dir' must start with"},
      {{{"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT/../../../../x"}},
       "ERROR: stdOutErrPathPrefix '$AZ_BATCHAI_JOB_MOUNT_ROOT/../../../../x' must not contain '..': it would leave "
       "$AZ_BATCHAI_JOB_MOUNT_ROOT."},
      {{{"outputDirectories", {{{"id", "OUT"}, {"pathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT"}, {"pathSuffix", "../../.."}}}}},
       "ERROR: outputDirectories[id=OUT].pathSuffix '../../..' must not contain '..'"},
      {{{"outputDirectories", {{{"id", "OUT"}, {"pathPrefix", "/tmp"}}}}},
       "ERROR: outputDirectories[id=OUT].pathPrefix '/tmp' must start with $AZ_BATCHAI_MOUNT_ROOT"},
      {{{"mountVolumes", {{"unmanagedFileSystems", {{{"mountCommand", "true"}, {"relativeMountPath", "../../x"}}}}}}},
       "ERROR: mountVolumes.unmanagedFileSystems[0].relativeMountPath '../../x' must not contain '..'"},
      {{{"mountVolumes", {{"fileServers", {{{"fileServer", {{"id", "/subscriptions/s/resourceGroups/rg/providers/"
                                                                   "Microsoft.BatchAI/workspaces/ws/fileServers/.."}}},
                                             {"relativeMountPath", "nfs"}}}}}}},
       "ERROR: validation error: Parameter 'file_server_name'"},
  };
  int i = 0;
  for (const auto& [patch, expected] : cases) {
    Json p = props("true");
    p.update(patch);
    const std::string name = "bad" + std::to_string(i++);
    Result r = run("batchai job create " + scope_ + " -n " + name + " -c c1 -f " + job_file(name, p));
    EXPECT_EQ(r.code, 1) << p.dump() << "\n" << r.out;
    EXPECT_EQ(r.err.rfind(expected, 0), 0u) << r.err;
  }
  EXPECT_FALSE(fs::exists(home_ / "x"));
}

TEST_F(JobsPaths, MountNamesAreCheckedAndAMissingShareFailsTheJob) {
  ASSERT_EQ(run("storage account create -n pathsacct -g rg --sku Standard_LRS -l eastus").code, 0);
  const std::string acct = " --storage-account-name pathsacct";
  for (const std::string bad : {"../../..", "/tmp", "a/b"}) {
    Result r = run("batchai job create " + scope_ + " -n afs -c c1 -f " + job_file("afs", props("true")) +
                   " --afs-name '" + bad + "'" + acct);
    EXPECT_EQ(r.code, 1) << bad;
    EXPECT_EQ(r.err, "ERROR: The share name '" + bad + "' is not valid: use 3-63 lower-case letters, digits and single "
                     "hyphens.\n");
    r = run("batchai job create " + scope_ + " -n bfs -c c1 -f " + job_file("bfs", props("true")) + " --bfs-name '" +
            bad + "'" + acct);
    EXPECT_EQ(r.code, 1) << bad;
    EXPECT_EQ(r.err.rfind("ERROR: The container name '" + bad + "' is not valid", 0), 0u) << r.err;
  }
  Result r = run("batchai job create " + scope_ + " -n noshare -c c1 -f " + job_file("noshare", props("true")) +
                 " --afs-name nosuchshare" + acct);
  ASSERT_EQ(r.code, 0) << r.err;  // as on the service: the mount fails when the job runs
  Json job = wait_state("noshare", {"succeeded", "failed"});
  ASSERT_EQ(job["executionState"], "failed");
  const std::string message = job["executionInfo"]["errors"][0]["message"];
  EXPECT_NE(message.find("Cannot mount the Azure File share 'nosuchshare' of storage account 'pathsacct' at 'afs': "
                         "it does not exist."),
            std::string::npos)
      << message;
  EXPECT_FALSE(fs::exists(home_ / "storage" / "pathsacct" / "shares" / "nosuchshare"));
}

TEST_F(JobsPaths, SuperviseRefusesAKeyThatIsAPath) {
  Result r = run("_supervise --job-key ../../escaped");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--job-key '../../escaped' is not a job key"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(home_ / ".." / "escaped"));
  EXPECT_FALSE(fs::exists(work_.parent_path() / "escaped"));
}

// Streams a 64 MiB stdout.txt and measures the stream process's peak memory (getrusage of the child).
TEST_F(JobsPaths, StreamReadsInBoundedMemory) {
  constexpr long kFileMiB = 64;
  create("big", props("head -c " + std::to_string(kFileMiB << 20) + " /dev/zero | tr '\\0' x"));
  ASSERT_EQ(wait_state("big", {"succeeded", "failed"}, std::chrono::seconds(60))["executionState"], "succeeded");
  const fs::path out = work_ / "streamed.txt";
  pid_t pid = ::fork();
  if (pid == 0) {
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen("/dev/null", "w", stderr)) ::_exit(127);
    ::execl(BATCHAI_EXE, BATCHAI_EXE, "job", "file", "stream", "-g", "rg", "-w", "ws", "-e", "exp1", "-j", "big", "-f",
            "stdout.txt", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  ASSERT_EQ(::wait4(pid, &status, 0, &usage), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(fs::file_size(out), static_cast<std::uintmax_t>(kFileMiB << 20));
  const long peak_mib = usage.ru_maxrss / 1024;
  std::cout << "job file stream of a " << kFileMiB << " MiB file: peak RSS " << peak_mib << " MiB\n";
  EXPECT_LT(peak_mib, 48) << "the stream held the file in memory";
}

}  // namespace
}  // namespace batchai::test
