// What Slurm says of a Slurm cluster and its jobs is kept in Slurm's own tables (store/slurm.hpp),
// over the stand-in Slurm (fake_slurm.hpp): sinfo's nodes, and squeue's pending reason, node list
// and final state of a submitted job, read back where the commands show them; the rows go with
// their job and cluster. No Slurm needed.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "batchai/control_plane/dashboard_reads.hpp"
#include "fake_slurm_fixture.hpp"
#include "engine/slurm/container_cleanups.hpp"
#include "engine/slurm/run_claim.hpp"
#include "store/jobs.hpp"
#include "store/slurm.hpp"

namespace batchai::control_plane::testing {
namespace {

class SlurmState : public FakeSlurmTest {
 protected:
  // Row ids of the cluster and of the job, as stored.
  std::int64_t cluster_id() {
    return cp_->store().read([&] { return detail::require_cluster(cp_->store(), ws_, "sc").id; });
  }
  std::int64_t job_id(const std::string& name) {
    return cp_->store().read([&] { return jobs_detail::load_job_by_key(cp_->store(), job_key(name)).value().id; });
  }
  std::optional<detail::SlurmJobRow> slurm_job(std::int64_t id) {
    return cp_->store().read([&] { return detail::load_slurm_job(cp_->store(), id); });
  }
  // A container job (Slurm job 42) whose batch step died: it ended FAILED with its containers'
  // record still in its exchange folder. Returns that folder.
  std::filesystem::path job_whose_step_left_containers(const std::string& name) {
    cp_->jobs().create(custom_job_options(name, "sc"));
    slurm_->queue[42] = "RUNNING";
    EXPECT_EQ(show(name)["executionState"], "running");
    const std::filesystem::path exchange = slurm_->work_dirs[42];
    std::ofstream(exchange / "containers") << "batchai-" << job_key(name) << "-node1\n";  // as the runner records them
    slurm_->queue[42] = "FAILED";
    EXPECT_EQ(show(name)["executionState"], "failed");
    return exchange;
  }
  std::optional<detail::SlurmCleanupRow> cleanup(const std::string& key) {
    return cp_->store().read([&] { return detail::load_slurm_cleanup(cp_->store(), key); });
  }
  std::size_t sbatch_count() {
    const auto commands = slurm_->commands();
    return static_cast<std::size_t>(std::count_if(commands.begin(), commands.end(), [](const auto& c) { return c[0] == "sbatch"; }));
  }
};

TEST_F(SlurmState, WhatSlurmSaidIsKeptInSlurmsTablesAndShown) {
  const std::int64_t cluster = cluster_id();
  const auto stored = cp_->store().read([&] { return detail::load_slurm_cluster(cp_->store(), cluster); });
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->partition, "batchai");
  EXPECT_EQ(stored->nodes, (std::vector<detail::SlurmNodeRow>{{"node1", "127.0.0.1", 0, "idle", "idle"},
                                                              {"node2", "127.0.0.1", 0, "idle", "idle"}}));
  EXPECT_FALSE(cp_->store().read([&] { return detail::load_cluster(cp_->store(), cluster)->private_data; })
                   .contains("slurm"));

  cp_->jobs().create(custom_job_options("job", "sc"));  // submitted at once: sbatch gives it 42
  const std::int64_t job = job_id("job");
  auto seen = slurm_job(job);
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->partition, "batchai");
  EXPECT_TRUE(seen->submitted_us.has_value());
  EXPECT_EQ(seen->gpus_per_node, 0);

  // Slurm holds it: its reason is stored and the dashboard gives it.
  slurm_->reasons[42] = "Priority";
  EXPECT_EQ(show("job")["executionState"], "queued");
  EXPECT_EQ(slurm_job(job)->pending_reason, "Priority");
  const auto page = DashboardReads(*cp_).jobs(ws_, "exp", "", 0, 10);
  ASSERT_EQ(page.jobs.size(), 1u);
  const std::string why = page.jobs[0].wait_reason.value_or("");
  EXPECT_NE(why.find("In Slurm's queue as job 42 (Slurm's reason: Priority)"), std::string::npos) << why;

  // Slurm runs it on node1 before its runner recorded anything: `job node list` shows Slurm's node
  // list at the node's stored NodeAddr.
  slurm_->queue[42] = "RUNNING";
  EXPECT_EQ(show("job")["executionState"], "running");
  EXPECT_EQ(slurm_job(job)->node_list, "node1");
  EXPECT_EQ(cp_->jobs().node_list({ws_, "exp", "job"}),
            Json::parse(R"([{"ipAddress": "127.0.0.1", "nodeId": "node1", "port": 22.0}])"));

  slurm_->queue[42] = "NODE_FAIL";
  EXPECT_EQ(show("job")["executionState"], "failed");
  EXPECT_EQ(slurm_job(job)->final_state, "NODE_FAIL");
  EXPECT_FALSE(cp_->store().read([&] { return jobs_detail::load_job_by_id(cp_->store(), job)->private_data; })
                   .contains("slurm"));

  // The rows go with their job and cluster.
  cp_->jobs().remove({ws_, "exp", "job"});
  EXPECT_EQ(slurm_job(job), std::nullopt);
  cp_->clusters().remove(ws_, "sc");
  EXPECT_EQ(cp_->store().read([&] { return detail::load_slurm_cluster(cp_->store(), cluster); }), std::nullopt);
}

// A job whose whole batch step died with its containers' record still in its exchange folder: the
// reconcile of its cluster submits ONE cleanup job to its nodes, 20 s after the end; a cleanup job
// still there 3 minutes on (pending behind a dead node) is cancelled and another submitted; once the
// record is gone the row goes, with nothing submitted.
TEST_F(SlurmState, LeftContainersGetOneCleanupJobOnTheJobsNodes) {
  using namespace std::chrono_literals;
  const std::filesystem::path exchange = job_whose_step_left_containers("job");
  const std::string key = job_key("job");
  auto cleanup = [&] { return this->cleanup(key); };
  ASSERT_TRUE(cleanup());
  EXPECT_EQ(cleanup()->node_list, "node1");
  EXPECT_EQ(cleanup()->attempts, 0);
  auto sbatches = [&] {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : slurm_->commands())
      if (c[0] == "sbatch") out.push_back(c);
    return out;
  };
  auto cancels = [&](const std::string& id) {
    int n = 0;
    for (const auto& c : slurm_->commands()) n += c[0] == "scancel" && c.back() == id;
    return n;
  };
  const std::size_t before = sbatches().size();
  cp_->clusters().show(ws_, "sc");  // the script's own cleanup gets its time first
  EXPECT_EQ(sbatches().size(), before);

  clock_->advance(21s);
  cp_->clusters().show(ws_, "sc");
  cp_->clusters().show(ws_, "sc");  // submitted once
  ASSERT_EQ(sbatches().size(), before + 1);
  const auto argv = sbatches().back();
  for (const std::string& want :
       std::vector<std::string>{"--nodelist=node1", "--oversubscribe", "--job-name=batchai-cleanup-" + key})
    EXPECT_NE(std::find(argv.begin(), argv.end(), want), argv.end()) << want;
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--exclusive"), argv.end());
  EXPECT_EQ(cleanup()->cleanup_job_id, 43);
  EXPECT_EQ(cleanup()->attempts, 1);

  // Still pending 3 minutes on, the record still there: cancelled, and one more submitted.
  clock_->advance(181s);
  cp_->clusters().show(ws_, "sc");
  EXPECT_EQ(cancels("43"), 1);
  EXPECT_EQ(sbatches().size(), before + 2);
  EXPECT_EQ(cleanup()->cleanup_job_id, 44);

  // It removed them (and the record): the row goes at its next look, nothing more is submitted.
  std::filesystem::remove(exchange / "containers");
  clock_->advance(181s);
  cp_->clusters().show(ws_, "sc");
  EXPECT_EQ(cleanup(), std::nullopt);
  EXPECT_EQ(sbatches().size(), before + 2);
  EXPECT_EQ(cancels("44"), 0);
}

TEST_F(SlurmState, ALiveRunnersLockHoldsTheCleanupAndTwentyFailedTriesEndIt) {
  using namespace std::chrono_literals;
  const std::filesystem::path exchange = job_whose_step_left_containers("job");
  const std::string key = job_key("job");
  const std::size_t before = sbatch_count();
  {
    // A runner still holds the run's lock: it removes its own containers, no cleanup job goes.
    jobs_detail::RunLock runner(exchange / "run.lock");
    ASSERT_TRUE(runner.try_take());
    clock_->advance(21s);
    cp_->clusters().show(ws_, "sc");
    EXPECT_EQ(sbatch_count(), before);
    ASSERT_TRUE(cleanup(key));
    EXPECT_EQ(cleanup(key)->attempts, 0);
  }
  // Gone: one try every 3 minutes while the record stays, 20 at most, then the row is dropped.
  for (int i = 1; i <= jobs_detail::kCleanupMaxAttempts; ++i) {
    clock_->advance(181s);
    cp_->clusters().show(ws_, "sc");
    ASSERT_EQ(sbatch_count(), before + static_cast<std::size_t>(i)) << "try " << i;
  }
  clock_->advance(181s);
  cp_->clusters().show(ws_, "sc");
  EXPECT_EQ(cleanup(key), std::nullopt);
  clock_->advance(181s);
  cp_->clusters().show(ws_, "sc");
  EXPECT_EQ(sbatch_count(), before + jobs_detail::kCleanupMaxAttempts);
}

}  // namespace
}  // namespace batchai::control_plane::testing
