// Schema steps applied to a store made by an older batchai: its rows keep their meaning.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/cluster_kind.hpp"
#include "store/jobs.hpp"
#include "store/rows.hpp"
#include "store/store.hpp"

namespace batchai::control_plane {
namespace {

namespace fs = std::filesystem;

// The steps up to and including `version`: the schema an older batchai left.
std::vector<Migration> steps_up_to(int version) {
  std::vector<Migration> out;
  for (const auto& step : control_plane_migrations())
    if (step.version <= version) out.push_back(step);
  return out;
}

class Migration7 : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("batchai-migration-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    db_ = dir_ / "state.db";
    auto v6 = Store::open(db_, steps_up_to(6));
    v6->write([&] {
      v6->exec(R"sql(
INSERT INTO resource_groups VALUES ('rg', 'rg', 'eastus', '{}');
INSERT INTO workspaces(id, rg_lc, name_lc, name, location, doc) VALUES (1, 'rg', 'ws', 'ws', 'eastus', '{}');
INSERT INTO experiments(id, workspace_id, name_lc, name, doc) VALUES (1, 1, 'exp', 'exp', '{}');
INSERT INTO clusters(id, workspace_id, name_lc, name, doc, location, vm_size, vm_priority, scale_mode, target,
                     alloc_started_us, alloc_state, alloc_changed_us, node_prefix, public_ip, private)
  VALUES (1, 1, 'sim', 'sim', '{}', 'eastus', 'Standard_D1', 'dedicated', 'manual', 0, 0, 'steady', 0, 'tvm-1',
          '1.2.3.4', '{"setupSecrets": []}'),
         (2, 1, 'onslurm', 'onSlurm', '{}', 'eastus', 'Standard_D1', 'dedicated', 'manual', 2, 0, 'steady', 0,
          'tvm-2', '1.2.3.5', '{"setupSecrets": [], "slurm": {"partition": "debug", "nodes": []}}');
INSERT INTO jobs(job_key, experiment_id, cluster_id, name_lc, name, state, priority, node_count, created_us, doc,
                 private)
  VALUES ('k-sim', 1, 1, 'a', 'a', 'queued', 1, 1, 1, '{}', '{"secrets": {}}'),
         ('k-held', 1, 2, 'b', 'b', 'queued', 1, 1, 2, '{}', '{"secrets": {}, "slurm": {"partition": "debug"}}'),
         ('k-sent', 1, 2, 'c', 'c', 'running', 1, 1, 3, '{}',
          '{"secrets": {}, "slurm": {"partition": "debug", "jobId": 77, "nodeList": "node1"}}');
)sql");
    });
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  fs::path db_;
};

// v7: the engine became a column, and Slurm's job id left the JSON that reads searched as text.
TEST_F(Migration7, EachRowKeepsItsEngineAndSlurmsJobId) {
  auto store = Store::open(db_);
  EXPECT_EQ(store->schema_version(), control_plane_migrations().back().version);
  store->read([&] {
    EXPECT_EQ(detail::load_cluster(*store, 1)->kind, ClusterKind::kSimulated);
    EXPECT_EQ(detail::load_cluster(*store, 2)->kind, ClusterKind::kSlurm);
    const auto sim = jobs_detail::load_job_by_key(*store, "k-sim");
    const auto held = jobs_detail::load_job_by_key(*store, "k-held");
    const auto sent = jobs_detail::load_job_by_key(*store, "k-sent");
    ASSERT_TRUE(sim && held && sent);
    EXPECT_EQ(sim->kind, ClusterKind::kSimulated);
    EXPECT_EQ(sim->engine_job_id, std::nullopt);
    EXPECT_EQ(held->kind, ClusterKind::kSlurm);
    EXPECT_EQ(held->engine_job_id, std::nullopt);  // not submitted yet
    EXPECT_EQ(sent->kind, ClusterKind::kSlurm);
    EXPECT_EQ(sent->engine_job_id, 77);
    // The rest of Slurm's entry stays with the job; the id is in one place only.
    EXPECT_EQ(sent->private_data["slurm"], Json({{"partition", "debug"}, {"nodeList", "node1"}}));
  });
}

TEST(EngineColumn, AnEngineThisVersionDoesNotKnowIsRefused) {
  EXPECT_EQ(kind_of_engine_column(engine_column(ClusterKind::kSlurm)), ClusterKind::kSlurm);
  EXPECT_EQ(kind_of_engine_column(engine_column(ClusterKind::kSimulated)), ClusterKind::kSimulated);
  EXPECT_THROW(kind_of_engine_column("kubernetes"), Error);
}

}  // namespace
}  // namespace batchai::control_plane
