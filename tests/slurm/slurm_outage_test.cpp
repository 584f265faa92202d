// Slurm outages stay in their lane (issue 24 rows 13-14, docs/slurm.md "When the controller does
// not answer" and "A job's run starts once"), through the control plane over a stand-in Slurm
// (fake_slurm.hpp): no Slurm needed. The same behaviour against the private Slurm with its
// controller killed and restarted is in slurm_outage_live_test.cpp.
#include <sys/wait.h>

#include <chrono>
#include <fstream>

#include "fake_slurm_fixture.hpp"
#include "engine/slurm/run_exchange.hpp"
#include "engine/slurm/runner_records.hpp"
#include "engine/slurm/slurm_jobs.hpp"

namespace batchai::control_plane::testing {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class SlurmOutage : public FakeSlurmTest {
 protected:
  void SetUp() override {
    FakeSlurmTest::SetUp();
    cp_->experiments().create(ws_, "simexp");
    cp_->clusters().create(cluster_options("sim", 1));
    cp_->jobs().create(slurm_job("job"));
    slurm_->queue[42] = "RUNNING";
    ASSERT_EQ(show("job")["executionState"], "running");
  }
  JobCreateOptions slurm_job(const std::string& name) {
    JobCreateOptions o = custom_job_options(name, "sc");
    return o;
  }
  jobs_detail::RunExchange exchange(const std::string& name) {
    return jobs_detail::RunExchange(cp_->layout().job_exchange(job_key(name)));
  }
  static bool has_silence_entry(const Json& doc) {
    return doc.contains("errors") && doc["errors"].is_array() && !doc["errors"].empty() &&
           doc["errors"][0]["code"] == "SlurmControllerUnreachable";
  }
};

// Row 13: what touches no Slurm cluster never runs a Slurm command, silent controller or not.
TEST_F(SlurmOutage, CommandsThatTouchNoSlurmClusterNeverAskSlurm) {
  slurm_->silent = true;
  const int before = slurm_->slurm_commands();
  const auto start = Clock::now();
  cp_->groups().list();
  cp_->clusters().show(ws_, "sim");
  cp_->jobs().list(ws_, "simexp", {});
  cp_->nodes().list(ws_, "sim");
  cp_->experiments().list(ws_);
  EXPECT_EQ(slurm_->slurm_commands(), before);
  EXPECT_LT(Clock::now() - start, 1s);
}

// Row 13: the first command that finds the controller silent answers within the budget, with the
// last known state and an errors entry; the next ones do not ask at all.
TEST_F(SlurmOutage, SilentControllerGivesTheLastKnownStateWithAnErrorsEntryWithinTwoSeconds) {
  slurm_->silent = true;
  auto start = Clock::now();
  Json job = show("job");
  EXPECT_LT(Clock::now() - start, 2s);
  EXPECT_EQ(job["executionState"], "running");
  ASSERT_TRUE(has_silence_entry(job)) << job.dump();
  EXPECT_TRUE(job["executionInfo"]["errors"].is_null());  // the job's own outcome is untouched
  const int asked = slurm_->slurm_commands();
  start = Clock::now();
  Json cluster = cp_->clusters().show(ws_, "sc");
  Json listed = cp_->jobs().list(ws_, "exp", {});
  EXPECT_LT(Clock::now() - start, 500ms);
  EXPECT_EQ(slurm_->slurm_commands(), asked);  // backing off
  EXPECT_EQ(cluster["currentNodeCount"], 2);
  EXPECT_TRUE(has_silence_entry(cluster)) << cluster.dump();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_TRUE(has_silence_entry(listed[0]));
}

// Row 13: the back-off is kept in the store: another process of the home (its own connection)
// backs off too, and once it ends the first answer clears the entries everywhere.
TEST_F(SlurmOutage, BackOffIsSharedByEveryProcessOfTheHome) {
  slurm_->silent = true;
  show("job");
  Settings s;
  s.home = root_ / "home";
  s.slurm_conf = std::getenv("SLURM_CONF");  // the same controller, as the back-off is keyed
  auto other_launcher = std::make_shared<slurm_testing::FakeSlurm>();
  other_launcher->silent = true;
  auto other = ControlPlane::open(s, Services{clock_, other_launcher});
  const auto start = Clock::now();
  Json seen = other->jobs().show({ws_, "exp", "job"});
  EXPECT_LT(Clock::now() - start, 500ms);
  EXPECT_EQ(other_launcher->slurm_commands(), 0);
  EXPECT_TRUE(has_silence_entry(seen));
  // The back-off ends (the injected clock); the controller answers again.
  clock_->advance(11s);
  other_launcher->silent = false;
  other_launcher->queue[42] = "RUNNING";
  seen = other->jobs().show({ws_, "exp", "job"});
  EXPECT_GT(other_launcher->slurm_commands(), 0);
  EXPECT_FALSE(seen.contains("errors")) << seen.dump();
  EXPECT_TRUE(other->clusters().show(ws_, "sc")["errors"].is_null());
}

// Row 13: terminate while the controller is silent is bounded; the cancel is queued and sent
// once the controller answers.
TEST_F(SlurmOutage, TerminateWhileSilentIsBoundedAndCancelsLater) {
  slurm_->silent = true;
  auto start = Clock::now();
  cp_->jobs().terminate({ws_, "exp", "job"});
  EXPECT_LT(Clock::now() - start, 2500ms);
  Json job = show("job");
  EXPECT_EQ(job["executionState"], "failed");
  EXPECT_EQ(job["executionInfo"]["errors"][0]["code"], "JobTerminated");
  // A second terminate-like command while backing off does not wait at all.
  start = Clock::now();
  cp_->jobs().create(slurm_job("job2"));
  cp_->jobs().terminate({ws_, "exp", "job2"});
  EXPECT_LT(Clock::now() - start, 500ms);
  clock_->advance(11s);
  slurm_->silent = false;
  cp_->clusters().show(ws_, "sc");  // any command on the cluster: the queued cancel goes out
  bool cancelled = false;
  for (const auto& argv : slurm_->commands())
    if (argv.size() == 2 && argv[0] == "scancel" && argv[1] == "42") cancelled = true;
  EXPECT_TRUE(cancelled);
  EXPECT_EQ(cp_->store().read([&] {
    auto st = cp_->store().prepare("SELECT count(*) FROM slurm_cancels");
    st.step();
    return st.integer(0);
  }), 0);
}

// A controller restarted without its state hands its ids out again. An id Slurm now shows in
// another folder is another job's: batchai's job ends lost, and the other job is never taken for
// it, nor cancelled by the cancel a terminate queued during the outage.
TEST_F(SlurmOutage, AnIdGivenToAnotherJobIsNeitherTakenForTheJobNorCancelled) {
  cp_->jobs().create(slurm_job("job3"));
  slurm_->queue[43] = "RUNNING";
  ASSERT_EQ(show("job3")["executionState"], "running");
  slurm_->silent = true;
  cp_->jobs().terminate({ws_, "exp", "job"});  // 42: the cancel waits for the controller
  clock_->advance(11s);
  slurm_->silent = false;
  // the controller is back without either job; its new jobs 42 and 43 run in other folders
  slurm_->work_dirs[42] = "/home/someone/jobs/their-first";
  slurm_->work_dirs[43] = "/home/someone/jobs/their-second";
  Json lost = show("job3");
  EXPECT_EQ(lost["executionState"], "failed");
  EXPECT_EQ(lost["executionInfo"]["errors"][0]["code"], "SlurmJobLost") << lost.dump();
  EXPECT_EQ(show("job")["executionInfo"]["errors"][0]["code"], "JobTerminated");
  for (const auto& argv : slurm_->commands()) EXPECT_NE(argv[0], "scancel") << argv.back();
  EXPECT_EQ(cp_->store().read([&] {
    auto st = cp_->store().prepare("SELECT count(*) FROM slurm_cancels");
    st.step();
    return st.integer(0);
  }), 0);  // tried once, not kept
  slurm_->work_dirs.erase(42);
  slurm_->work_dirs.erase(43);
}

// Row 14: a restarted controller that says PENDING for a job whose run was claimed does not move
// it back to queued; once the runner recorded its end, the job ends so.
TEST_F(SlurmOutage, PendingAfterARestartDoesNotRequeueAClaimedRun) {
  const std::string started = show("job")["executionInfo"]["startTime"];
  EXPECT_TRUE(exchange("job").try_claim("runner one"));
  EXPECT_FALSE(exchange("job").try_claim("runner two"));  // claimed once
  slurm_->queue[42] = "PENDING";
  Json job = show("job");
  EXPECT_EQ(job["executionState"], "running");
  EXPECT_EQ(job["executionInfo"]["startTime"], started);
  // An unclaimed job Slurm requeues goes back to queued, as before.
  cp_->jobs().create(slurm_job("other"));
  slurm_->queue[43] = "RUNNING";
  EXPECT_EQ(show("other")["executionState"], "running");
  slurm_->queue[43] = "PENDING";
  EXPECT_EQ(show("other")["executionState"], "queued");
  // The claimed run ends (the runner's word) while Slurm still says PENDING.
  EXPECT_TRUE(exchange("job").record_outcome({{"succeeded", true}, {"exitCode", 0}, {"errors", nullptr}}));
  EXPECT_FALSE(exchange("job").record_outcome({{"succeeded", false}}));  // the first word stays
  job = show("job");
  EXPECT_EQ(job["executionState"], "succeeded") << job.dump();
  EXPECT_EQ(job["executionInfo"]["exitCode"], 0);
}

// Row 14: a second batch script of the same job (a restarted controller started it again) runs
// nothing: it waits for the first run and ends with its status. Both are the real executable.
TEST_F(SlurmOutage, ASecondBatchScriptOfAClaimedRunRunsNothing) {
  const fs::path marker = root_ / "runs.txt";
  const fs::path file = root_ / "runs-twice.json";  // not twice.json: custom_job_options writes that
  write_file(file, R"({"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
      "customToolkitSettings": {"commandLine": "echo run >> )" + marker.string() + R"(; sleep 2; exit 3"}}})");
  JobCreateOptions o = slurm_job("twice");
  o.config = load_json_file(file);
  cp_->jobs().create(o);
  const std::string key = job_key("twice");
  const std::string id = std::to_string(slurm_->next_job_id - 1);
  std::vector<fs::path> logs;
  auto runner = [&] {
    ProcessSpec spec;
    spec.argv = {BATCHAI_EXE, "_slurm-run", "--job-key", key};
    // A compute host: the shared folder, and a home that does not exist (the store is never opened)
    spec.env = {{"BATCHAI_SHARED_DIR", cp_->layout().shared().string()},
                {"BATCHAI_HOME", (root_ / "no-home-on-this-host").string()}, {"SLURM_JOB_ID", id},
                {"SLURM_JOB_NODELIST", "node1"}, {"SLURMD_NODENAME", "node1"}, {"HOME", (root_ / "user").string()}};
    spec.stdout_file = root_ / ("runner-" + std::to_string(logs.size()) + ".log");
    spec.stderr_file = spec.stdout_file;
    logs.push_back(*spec.stdout_file);
    return slurm_->spawn(spec);
  };
  const pid_t first = runner();
  for (int i = 0; i < 100 && read_file(marker).empty(); ++i) std::this_thread::sleep_for(50ms);
  if (read_file(marker).empty()) {
    auto exited = slurm_->wait(first, 0ms);
    FAIL() << "the first runner ran nothing (exit " << (exited ? std::to_string(exited->exit_code) : "-") << "): "
           << read_file(logs[0]) << cp_->jobs().show({ws_, "exp", "twice"}).dump();
  }
  EXPECT_EQ(read_file(marker), "run\n");
  const pid_t second = runner();
  auto first_exit = slurm_->wait(first, 30s);
  auto second_exit = slurm_->wait(second, 30s);
  ASSERT_TRUE(first_exit && second_exit);
  EXPECT_EQ(first_exit->exit_code, 3);
  EXPECT_EQ(second_exit->exit_code, 3) << read_file(logs[1]);  // the first run's status, for Slurm's record
  EXPECT_EQ(read_file(marker), "run\n");  // the command ran once
  EXPECT_FALSE(fs::exists(root_ / "no-home-on-this-host"));  // no store was made where none is
  slurm_->queue[43] = "FAILED";
  const Json done = show("twice");
  EXPECT_EQ(done["executionState"], "failed") << done.dump();
  EXPECT_EQ(done["executionInfo"]["exitCode"], 3) << done.dump();
  EXPECT_FALSE(fs::exists(exchange("twice").dir() / "run.json"));  // its secrets leave with its end
}

// Slurm says FAILED or COMPLETED: the runner's own word when it left one. Without it, a claimed run
// was lost (seen in CI: a controller restarted as the job started, killed the run it had lost
// track of and failed the job with exit 1), and an unclaimed one never started: Slurm could not
// start the runner (seen on hosts without the shared folder: exit 181). Never succeeded.
TEST(SlurmJobEnd, ABatchScriptWithoutTheRunnersWordNeverSucceeds) {
  jobs_detail::JobRow job;
  job.state = JobState::kRunning;
  job.doc = {{"executionState", "running"}, {"executionInfo", {{"startTime", "2026-11-26T09:02:17.000000+00:00"}}}};
  job.private_data = {{"slurm", {{"jobId", 21}}}};
  slurm::JobInfo info;
  info.id = 21;
  info.node_list = "h1";
  for (const char* state : {"FAILED", "COMPLETED"}) {
    info.slurm_state = state;
    info.exit = std::string(state) == "FAILED" ? slurm::ExitStatus{1, 0} : slurm::ExitStatus{0, 0};
    jobs_detail::JobRow claimed = job;
    jobs_detail::RunnerRecord record;
    record.claim = "Slurm job 21 on h1, pid 7";
    jobs_detail::finish_from_slurm(claimed, info, record, 1795000000000000);
    EXPECT_EQ(claimed.state, JobState::kFailed) << state;
    EXPECT_EQ(claimed.doc["executionInfo"]["errors"][0]["code"], "JobRunLost") << claimed.doc.dump();

    jobs_detail::JobRow never = job;
    record = {};
    record.batch_log_tail = "slurmstepd: error: couldn't chdir to `/shared/jobs/k': No such file or directory";
    info.reason = "NonZeroExitCode";
    jobs_detail::finish_from_slurm(never, info, record, 1795000000000000);
    EXPECT_EQ(never.state, JobState::kFailed) << state;
    const std::string message = never.doc["executionInfo"]["errors"][0]["message"];
    EXPECT_EQ(never.doc["executionInfo"]["errors"][0]["code"], "JobRunnerNotStarted") << message;
    EXPECT_NE(message.find("h1"), std::string::npos) << message;
    EXPECT_NE(message.find("couldn't chdir"), std::string::npos) << message;
    EXPECT_NE(message.find("NonZeroExitCode"), std::string::npos) << message;
  }

}

// The issue-52 failure: Slurm reports the batch script COMPLETED, exit 0, but its runner never
// claimed the run (it found no job and exited 0, or never started): the job fails, saying so.
TEST_F(SlurmOutage, ACompletedBatchScriptWithoutARunIsNotASuccess) {
  slurm_->queue[42] = "COMPLETED";
  const Json job = show("job");
  EXPECT_EQ(job["executionState"], "failed") << job.dump();
  EXPECT_EQ(job["executionInfo"]["errors"][0]["code"], "JobRunnerNotStarted") << job.dump();
}

// The runner's outcome lands although the controller is silent (and backing off): it needs no
// controller, only the job's exchange folder. Slurm's later word does not change it.
TEST_F(SlurmOutage, TheRunnersOutcomeLandsWhileTheControllerIsSilent) {
  ASSERT_TRUE(exchange("job").try_claim("runner one"));
  exchange("job").record_started({{"startUs", 1}, {"folders", {{"stdouterr", "/x"}, {"outputs", Json::object()}}},
                                  {"nodes", {"node1"}}});
  slurm_->silent = true;
  show("job");  // finds the controller silent: it backs off
  ASSERT_TRUE(exchange("job").record_outcome({{"succeeded", false}, {"exitCode", 7},
                                              {"errors", jobs_detail::job_error("JobFailed", "exit 7")}}));
  const int before = slurm_->slurm_commands();
  Json job = show("job");
  EXPECT_EQ(slurm_->slurm_commands(), before);  // backing off: Slurm not asked
  EXPECT_EQ(job["executionState"], "failed") << job.dump();
  EXPECT_EQ(job["executionInfo"]["exitCode"], 7);
  clock_->advance(11s);
  slurm_->silent = false;
  slurm_->queue[42] = "COMPLETED";
  job = show("job");
  EXPECT_EQ(job["executionInfo"]["exitCode"], 7) << job.dump();  // landed once
}

}  // namespace
}  // namespace batchai::control_plane::testing
