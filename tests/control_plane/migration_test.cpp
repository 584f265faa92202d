// Schema steps applied to a store made by an older batchai: its rows keep their meaning.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/cluster_kind.hpp"
#include "store/clusters.hpp"
#include "store/jobs.hpp"
#include "store/rows.hpp"
#include "store/slurm.hpp"
#include "store/store.hpp"
#include "support/temp_dir.hpp"

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

// The group, workspace (id 1) and experiment (id 1) the rows of an older store stand in.
constexpr const char* kParents = R"sql(
INSERT INTO resource_groups VALUES ('rg', 'rg', 'eastus', '{}');
INSERT INTO workspaces(id, rg_lc, name_lc, name, location, doc) VALUES (1, 'rg', 'ws', 'ws', 'eastus', '{}');
INSERT INTO experiments(id, workspace_id, name_lc, name, doc) VALUES (1, 1, 'exp', 'exp', '{}');
)sql";

class Migration7 : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("batchai-migration-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    db_ = dir_ / "state.db";
    auto v6 = Store::open(db_, steps_up_to(6));
    v6->write([&] {
      v6->exec(kParents);
      v6->exec(R"sql(
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
  auto store = Store::open(db_, steps_up_to(7));
  EXPECT_EQ(store->schema_version(), 7);
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

// A v7 store as that version left it: Slurm's partition and nodes, and what Slurm said of each job,
// in a "slurm" entry of the rows' private JSON (with rows of older versions and wrong types in it).
class Migration8 : public ::testing::Test {
 protected:
  void SetUp() override {
    auto v7 = Store::open(db_, steps_up_to(7));
    v7->write([&] {
      v7->exec(kParents);
      v7->exec(R"sql(
INSERT INTO clusters(id, workspace_id, name_lc, name, doc, location, vm_size, vm_priority, scale_mode, target,
                     alloc_started_us, alloc_state, alloc_changed_us, node_prefix, public_ip, private, engine)
  VALUES (1, 1, 'sim', 'sim', '{}', 'eastus', 'Standard_D1', 'dedicated', 'manual', 0, 0, 'steady', 0, 'tvm-1',
          '1.2.3.4', '{"setupSecrets": [{"name": "s", "value": "v"}]}', 'simulated'),
         (2, 1, 'onslurm', 'onSlurm', '{}', 'eastus', 'Standard_NC6', 'dedicated', 'manual', 2, 0, 'steady', 0,
          'tvm-2', '1.2.3.5', '{"setupSecrets": [], "slurm": {"partition": "gpu", "nodes": [
            {"address": "10.1.0.9", "gpus": 2, "name": "node9", "state": "running", "slurmState": "allocated"},
            {"address": "10.1.0.4", "gpus": 0, "name": "node1", "state": "unusable", "slurmState": "down*"},
            {"gpus": "two", "name": "node2", "state": "idle", "slurmState": "idle"},
            {"state": "idle"}]}}', 'slurm'),
         (3, 1, 'empty', 'empty', '{}', 'eastus', 'Standard_D1', 'dedicated', 'manual', 1, 0, 'steady', 0,
          'tvm-3', '1.2.3.6', '{"setupSecrets": [], "slurm": {"partition": "debug", "nodes": []}}', 'slurm');
INSERT INTO jobs(id, job_key, experiment_id, cluster_id, name_lc, name, state, priority, node_count, created_us, doc,
                 private, engine, engine_job_id)
  VALUES (1, 'k-sim', 1, 1, 'a', 'a', 'queued', 1, 1, 1, '{}', '{"secrets": {"k": "v"}}', 'simulated', NULL),
         (2, 'k-held', 1, 2, 'b', 'b', 'queued', 1, 1, 2, '{}', '{"secrets": {}, "slurm": {"partition": "gpu"}}',
          'slurm', NULL),
         (3, 'k-waits', 1, 2, 'c', 'c', 'queued', 1, 1, 3, '{}', '{"secrets": {}, "registryPassword": "p",
          "slurm": {"partition": "gpu", "submittedUs": 1795000000000000, "gpusPerNode": 1,
                    "pendingReason": "Resources"}}', 'slurm', 78),
         (4, 'k-ended', 1, 2, 'd', 'd', 'failed', 1, 2, 4, '{}', '{"secrets": {}, "nodes": ["node9", "node1"],
          "folders": {"x": "y"}, "slurm": {"partition": "gpu", "submittedUs": 1795000000000001, "gpusPerNode": 0,
          "pendingReason": "None", "nodeList": "node[1,9]", "finalState": "NODE_FAIL"}}', 'slurm', 79),
         (5, 'k-odd', 1, 3, 'e', 'e', 'running', 1, 1, 5, '{}', '{"slurm": {"partition": 7, "submittedUs": "soon",
          "nodeList": ["node1"]}}', 'slurm', 80);
)sql");
    });
  }

  test::TempDir tmp_{"batchai-migration"};
  fs::path db_ = tmp_ / "state.db";
};

// v8: each Slurm cluster's partition and nodes, and what Slurm said of each Slurm job, are rows of
// Slurm's tables; the "slurm" entry left the private JSON, and nothing else of it did.
TEST_F(Migration8, SlurmsStateMovesFromThePrivateJsonToSlurmsTables) {
  auto store = Store::open(db_, steps_up_to(8));
  EXPECT_EQ(store->schema_version(), 8);
  store->read([&] {
    using detail::SlurmNodeRow;
    EXPECT_EQ(detail::load_slurm_cluster(*store, 1), std::nullopt);
    const auto gpu = detail::load_slurm_cluster(*store, 2);
    ASSERT_TRUE(gpu);
    EXPECT_EQ(gpu->partition, "gpu");
    // In sinfo's order, as stored; a value of another type reads as unknown, a node without a name is dropped.
    EXPECT_EQ(gpu->nodes, (std::vector<SlurmNodeRow>{{"node9", "10.1.0.9", 2, "running", "allocated"},
                                                      {"node1", "10.1.0.4", 0, "unusable", "down*"},
                                                      {"node2", "", 0, "idle", "idle"}}));
    const auto empty = detail::load_slurm_cluster(*store, 3);
    ASSERT_TRUE(empty);
    EXPECT_EQ(empty->partition, "debug");
    EXPECT_TRUE(empty->nodes.empty());
    EXPECT_EQ(detail::slurm_partition_of(*store, 3), "debug");

    EXPECT_EQ(detail::load_slurm_job(*store, 1), std::nullopt);
    const auto held = detail::load_slurm_job(*store, 2);
    ASSERT_TRUE(held);
    EXPECT_EQ(held->partition, "gpu");
    EXPECT_EQ(held->submitted_us, std::nullopt);
    EXPECT_EQ(held->gpus_per_node, std::nullopt);
    const auto waits = detail::load_slurm_job(*store, 3);
    ASSERT_TRUE(waits);
    EXPECT_EQ(waits->submitted_us, 1795000000000000);
    EXPECT_EQ(waits->gpus_per_node, 1);
    EXPECT_EQ(waits->pending_reason, "Resources");
    EXPECT_EQ(waits->node_list, "");
    EXPECT_EQ(waits->final_state, "");
    const auto ended = detail::load_slurm_job(*store, 4);
    ASSERT_TRUE(ended);
    EXPECT_EQ(ended->gpus_per_node, 0);
    EXPECT_EQ(ended->node_list, "node[1,9]");
    EXPECT_EQ(ended->final_state, "NODE_FAIL");
    const auto odd = detail::load_slurm_job(*store, 5);
    ASSERT_TRUE(odd);
    EXPECT_EQ(odd->partition, "");
    EXPECT_EQ(odd->submitted_us, std::nullopt);
    EXPECT_EQ(odd->node_list, "");

    for (std::int64_t id : {1, 2, 3}) {
      const Json data = detail::load_cluster(*store, id)->private_data;
      EXPECT_FALSE(data.contains("slurm")) << data.dump();
      EXPECT_TRUE(data.contains("setupSecrets")) << data.dump();
    }
    EXPECT_EQ(detail::load_cluster(*store, 1)->private_data["setupSecrets"][0]["value"], "v");
    for (const char* key : {"k-sim", "k-held", "k-waits", "k-ended", "k-odd"})
      EXPECT_FALSE(jobs_detail::load_job_by_key(*store, key)->private_data.contains("slurm")) << key;
    const Json ended_data = jobs_detail::load_job_by_key(*store, "k-ended")->private_data;
    EXPECT_EQ(ended_data, Json::parse(R"({"secrets": {}, "nodes": ["node9", "node1"], "folders": {"x": "y"}})"));
    EXPECT_EQ(jobs_detail::load_job_by_key(*store, "k-waits")->private_data["registryPassword"], "p");
    EXPECT_EQ(jobs_detail::load_job_by_key(*store, "k-waits")->engine_job_id, 78);
  });
}

// Slurm's rows go with the cluster or job they belong to, however it goes: its own delete, or its
// workspace's or experiment's (the foreign keys cascade).
TEST_F(Migration8, SlurmsRowsGoWithTheirClusterAndJob) {
  auto store = Store::open(db_);
  auto count = [&](const char* table) {
    auto st = store->prepare(std::string("SELECT count(*) FROM ") + table);
    return st.step() ? st.integer(0) : -1;
  };
  ASSERT_EQ(count("slurm_clusters"), 2);
  ASSERT_EQ(count("slurm_cluster_nodes"), 3);
  ASSERT_EQ(count("slurm_jobs"), 4);
  store->write([&] {
    detail::delete_cluster(*store, 2);
    jobs_detail::delete_job(*store, 4);
  });
  EXPECT_EQ(count("slurm_clusters"), 1);
  EXPECT_EQ(count("slurm_cluster_nodes"), 0);
  EXPECT_EQ(count("slurm_jobs"), 3);  // the cluster's jobs stay, without their cluster
  store->write([&] {
    detail::save_slurm_cluster(*store, 3, {"debug", {{"n1", "", 0, "idle", "idle"}, {"n2", "", 0, "idle", "idle"}}});
    store->exec("DELETE FROM experiments; DELETE FROM workspaces");
  });
  EXPECT_EQ(count("slurm_clusters"), 0);
  EXPECT_EQ(count("slurm_cluster_nodes"), 0);
  EXPECT_EQ(count("slurm_jobs"), 0);
}

TEST(EngineColumn, AnEngineThisVersionDoesNotKnowIsRefused) {
  EXPECT_EQ(kind_of_engine_column(engine_column(ClusterKind::kSlurm)), ClusterKind::kSlurm);
  EXPECT_EQ(kind_of_engine_column(engine_column(ClusterKind::kSimulated)), ClusterKind::kSimulated);
  EXPECT_THROW(kind_of_engine_column("kubernetes"), Error);
}

}  // namespace
}  // namespace batchai::control_plane
