// Slurm-backed clusters through the control plane API, against the private Slurm the CTest
// fixture "slurm" starts (3 nodes node1..node3, partition "batchai"; SLURM_CONF names it).
// docs/slurm.md, "Slurm-backed clusters". Never skipped: without the fixture they fail.
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "batchai/control_plane/dashboard_reads.hpp"
#include "control_plane/fixture.hpp"
#include "engine/slurm/slurm_clusters.hpp"
#include "slurm_test_util.hpp"

namespace batchai::control_plane::testing {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Counts the processes the control plane starts; everything else goes to the real launcher.
// With `sinfo_answer` set, sinfo prints that text instead (addresses the private Slurm cannot give).
class CountingLauncher : public ProcessLauncher {
 public:
  pid_t spawn(const ProcessSpec& spec) override {
    ++spawned;
    last_argv = spec.argv;
    if (!sinfo_answer.empty() && !spec.argv.empty() && spec.argv[0] == "sinfo") {
      ProcessSpec fake = spec;
      fake.argv = {"printf", "%s", sinfo_answer};
      return real_->spawn(fake);
    }
    return real_->spawn(spec);
  }
  std::optional<ProcessExit> wait(pid_t pid, std::optional<std::chrono::milliseconds> timeout) override {
    return real_->wait(pid, timeout);
  }
  bool signal_group(pid_t pgid, int signal) override { return real_->signal_group(pgid, signal); }
  pid_t spawn_detached(const ProcessSpec& spec) override {
    ++spawned;
    return real_->spawn_detached(spec);
  }
  int spawned = 0;
  std::vector<std::string> last_argv;
  std::string sinfo_answer;

 private:
  std::unique_ptr<ProcessLauncher> real_ = make_posix_process_launcher();
};

class SlurmCluster : public ControlPlaneTest {
 protected:
  void SetUp() override {
    ControlPlaneTest::SetUp();
    conf_ = slurm_testing::slurm_conf();
    ASSERT_TRUE(fs::exists(conf_)) << conf_;
    counter_ = std::make_shared<CountingLauncher>();
    launcher_ = counter_;
    open(Micros(0));
    ws_ = make_workspace();
  }
  void TearDown() override {
    ::setenv("SLURM_CONF", conf_.c_str(), 1);
    ControlPlaneTest::TearDown();
  }
  ClusterCreateOptions slurm_options(const std::string& name, const std::string& partition = "batchai") {
    ClusterCreateOptions o = cluster_options(name, 2);
    o.slurm_partition = partition;
    return o;
  }
  static int count(const Json& doc, const char* key) { return doc["nodeStateCounts"][key].get<int>(); }

  fs::path conf_;
  std::shared_ptr<CountingLauncher> counter_;
  WorkspaceRef ws_;
};

TEST_F(SlurmCluster, CreateOnThePartitionShowsItsThreeIdleNodes) {
  Json doc = cp_->clusters().create(slurm_options("sc"));
  EXPECT_EQ(doc["currentNodeCount"], 3);
  EXPECT_EQ(count(doc, "idleNodeCount"), 3);
  EXPECT_EQ(doc["allocationState"], "steady");
  EXPECT_EQ(doc["scaleSettings"]["manual"]["targetNodeCount"], 2);  // the bound on the jobs' nodes
  Json shown = cp_->clusters().show(ws_, "sc");
  EXPECT_EQ(shown["currentNodeCount"], 3);
  EXPECT_TRUE(shown["errors"].is_null()) << shown.dump();
  EXPECT_EQ(cp_->clusters().list(ws_).size(), 1u);
  // No simulated nodes and no node folders: the nodes are Slurm's.
  EXPECT_FALSE(fs::exists(cp_->layout().cluster("rg", "ws", "sc")));
  Json nodes = cp_->nodes().list(ws_, "sc");
  std::set<std::string> names;
  for (const auto& n : nodes) {
    names.insert(n["nodeId"].get<std::string>());
    EXPECT_EQ(n["port"], 22);
  }
  EXPECT_EQ(names, (std::set<std::string>{"node1", "node2", "node3"}));
}

TEST_F(SlurmCluster, TheDashboardShowsSlurmsNodesAndTheSlurmJobOnEach) {
  cp_->clusters().create(slurm_options("sc"));
  cp_->experiments().create(ws_, "exp");
  // A job running on node2 as its runner records it (no sbatch here: the row is what is read).
  cp_->store().write([&] {
    cp_->store()
        .prepare(
            "INSERT INTO jobs(job_key, experiment_id, cluster_id, name_lc, name, state, priority, node_count, created_us, "
            "doc, private, engine, engine_job_id) SELECT '00000000-0000-4000-8000-0000000000aa', e.id, c.id, 'onnode2', "
            "'onNode2', 'running', 1, 1, 1, '{}', '{\"nodes\": [\"node2\"]}', 'slurm', 4242 FROM "
            "experiments e, clusters c "
            "WHERE e.name = 'exp' AND c.name = 'sc'")
        .run();
  });
  const auto view = DashboardReads(*cp_).cluster_nodes(ws_, "sc", 1000);
  EXPECT_EQ(view.engine, "slurm");
  std::map<std::string, std::string> jobs;
  for (const auto& n : view.nodes) {
    EXPECT_EQ(n.state, "idle") << n.node_id;  // as the last sinfo saw them
    jobs[n.node_id] = n.job_name ? *n.job_name + "/" + std::to_string(n.engine_job_id.value_or(0)) : "";
  }
  EXPECT_EQ(jobs, (std::map<std::string, std::string>{{"node1", ""}, {"node2", "onNode2/4242"}, {"node3", ""}}));
  EXPECT_EQ(DashboardReads(*cp_).cluster_nodes(ws_, "sc", 2).nodes.size(), 2u);  // bounded
}

TEST_F(SlurmCluster, NodeListShowsEachNodesNodeAddr) {
  counter_->sinfo_answer =
      "node1|idle|2|2048|10.1.0.4|(null)\nnode2|idle|2|2048|gpu-2.example|(null)\nnode3|idle|2|2048|fd00::3|(null)\n";
  cp_->clusters().create(slurm_options("sc"));
  std::map<std::string, std::string> addresses;
  for (const auto& n : cp_->nodes().list(ws_, "sc")) addresses[n["nodeId"]] = n["ipAddress"];
  EXPECT_EQ(addresses, (std::map<std::string, std::string>{
                           {"node1", "10.1.0.4"}, {"node2", "gpu-2.example"}, {"node3", "fd00::3"}}));
  // A NodeAddr outside its alphabet is Slurm output batchai refuses: the create fails, nothing is made.
  counter_->sinfo_answer = "node1|idle|2|2048|10.1.0.4 -oProxyCommand=x|(null)\n";
  EXPECT_THROW(cp_->clusters().create(slurm_options("bad")), SystemError);
  EXPECT_EQ(cp_->clusters().list(ws_).size(), 1u);
}

// GPUs: a job asks each node for its VM size's GPUs (--gres=gpu:N) when a node of the partition
// has that many among its generic resources; otherwise none (and cluster create warns).
TEST_F(SlurmCluster, GpusPerNodeFollowTheVmSizeAndThePartitionsGres) {
  counter_->sinfo_answer = "node1|idle|8|2048|10.1.0.4|gpu:a100:2(S:0-1)\nnode2|idle|8|2048|10.1.0.5|(null)\n";
  auto gpus_of = [&](const std::string& name, const std::string& vm_size) {
    ClusterCreateOptions o = slurm_options(name);
    o.vm_size = vm_size;
    cp_->clusters().create(o);
    Store& store = cp_->store();
    const auto [row, slurm] = store.read([&] {
      detail::ClusterRow c = detail::require_cluster(store, ws_, name);
      return std::pair(c, detail::load_slurm_cluster(store, c.id));
    });
    cp_->clusters().remove(ws_, name);
    if (!slurm) ADD_FAILURE() << name << " has no Slurm row";
    const std::vector<detail::SlurmNodeRow> nodes = slurm ? slurm->nodes : std::vector<detail::SlurmNodeRow>();
    return detail::slurm_gpus_per_node(row.doc["vmSize"].get<std::string>(), nodes);
  };
  EXPECT_EQ(gpus_of("nc6", "Standard_NC6"), 1);     // 1 GPU, node1 has 2
  EXPECT_EQ(gpus_of("nc12", "Standard_NC12"), 2);   // 2 GPUs, node1 has 2
  EXPECT_EQ(gpus_of("nc24", "Standard_NC24"), 0);   // 4 GPUs: no node has them
  EXPECT_EQ(gpus_of("d3", "Standard_D3"), 0);       // no GPUs asked for
  counter_->sinfo_answer = "node1|idle|8|2048|10.1.0.4|(null)\n";
  EXPECT_EQ(gpus_of("cpuonly", "Standard_NC6"), 0);  // a partition without GPU GRES
}

// Rows stored before addresses were read have none: the node's name stands in, never 127.0.0.1.
TEST(SlurmNodeAddress, StoredAddressOrTheNodeName) {
  const std::vector<detail::SlurmNodeRow> nodes = {{"node1", "10.1.0.4", 0, "idle", "idle"},
                                                   {"node2", "", 0, "idle", "idle"}};
  Json listed = detail::slurm_node_list(nodes);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0]["ipAddress"], "10.1.0.4");
  EXPECT_EQ(listed[1]["ipAddress"], "node2");
  EXPECT_EQ(listed[1]["port"], 22);
  EXPECT_EQ(detail::slurm_node_address(nodes, "node1"), "10.1.0.4");
  EXPECT_EQ(detail::slurm_node_address(nodes, "node2"), "node2");
  EXPECT_EQ(detail::slurm_node_address(nodes, "node9"), "node9");  // not stored
  EXPECT_EQ(detail::slurm_node_address({}, "node1"), "node1");     // no cluster
}

TEST_F(SlurmCluster, TheConfigFileNamesThePartitionToo) {
  fs::path file = root_ / "cluster.json";
  write_file(file, R"({"properties": {"vmSize": "Standard_NC6", "slurm": {"partition": "batchai"},
                       "scaleSettings": {"manual": {"targetNodeCount": 1}}}})");
  ClusterCreateOptions o = cluster_options("fromfile", 1);
  o.vm_size.reset();
  o.target.reset();
  o.config = load_json_file(file);
  EXPECT_EQ(cp_->clusters().create(o)["currentNodeCount"], 3);
  write_file(file, R"({"properties": {"vmSize": "Standard_NC6", "slurm": {"partition": 7}}})");
  o.config = load_json_file(file);
  o.name = "wrongtype";
  EXPECT_THROW(cp_->clusters().create(o), InvalidArgument);
  EXPECT_EQ(cp_->clusters().list(ws_).size(), 1u);
}

TEST_F(SlurmCluster, BadOrUnknownPartitionCreatesNothing) {
  counter_->spawned = 0;
  for (const std::string& bad : std::vector<std::string>{"-p", "", "a b", "x;rm", std::string(65, 'p')})
    EXPECT_THROW(cp_->clusters().create(slurm_options("bad", bad)), InvalidArgument) << bad;
  EXPECT_EQ(counter_->spawned, 0);  // refused before any Slurm command ran
  EXPECT_THROW(cp_->clusters().create(slurm_options("unknown", "nosuchpartition")), NotFound);
  EXPECT_TRUE(cp_->clusters().list(ws_).empty());
  EXPECT_FALSE(fs::exists(cp_->layout().cluster("rg", "ws", "unknown")));
}

TEST_F(SlurmCluster, ControllerThatDoesNotAnswer) {
  cp_->clusters().create(slurm_options("sc"));
  const fs::path dead = slurm_testing::dead_controller_conf(root_);
  ::setenv("SLURM_CONF", dead.c_str(), 1);
  open(Micros(0));  // the controller is configuration: read once, when the control plane opens
  auto start = std::chrono::steady_clock::now();
  try {
    cp_->clusters().create(slurm_options("late"));
    ADD_FAILURE() << "created on a controller nobody runs";
  } catch (const SystemError& e) {
    EXPECT_EQ(e.code(), "SlurmControllerUnreachable") << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));  // the budget, not Slurm's 9 s
  Json shown = cp_->clusters().show(ws_, "sc");  // the last known counts, and why they are stale
  EXPECT_EQ(shown["currentNodeCount"], 3);
  ASSERT_TRUE(shown["errors"].is_array()) << shown.dump();
  EXPECT_EQ(shown["errors"][0]["code"], "SlurmControllerUnreachable");
  EXPECT_EQ(cp_->clusters().list(ws_).size(), 1u);
  // Commands during the back-off do not wait for the silent controller again.
  const int asked = counter_->spawned;
  start = std::chrono::steady_clock::now();
  cp_->clusters().show(ws_, "sc");
  cp_->groups().list();
  EXPECT_THROW(cp_->clusters().create(slurm_options("late")), SystemError);  // refused at once
  EXPECT_EQ(counter_->spawned, asked);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  // The back-off is the controller's (keyed by its slurm.conf): the live one answers at once.
  ::setenv("SLURM_CONF", conf_.c_str(), 1);
  open(Micros(0));
  EXPECT_TRUE(cp_->clusters().show(ws_, "sc")["errors"].is_null());
  ::setenv("SLURM_CONF", dead.c_str(), 1);
  open(Micros(0));
  cp_->clusters().show(ws_, "sc");
  EXPECT_EQ(counter_->spawned, asked + 1);  // the live controller's sinfo only
  clock_->advance(std::chrono::seconds(11));  // the back-off is over: the dead one is asked again
  EXPECT_FALSE(cp_->clusters().show(ws_, "sc")["errors"].is_null());
  EXPECT_GT(counter_->spawned, asked + 1);
}

TEST_F(SlurmCluster, NodeTakenDownIsUnusableUntilResumed) {
  cp_->clusters().create(slurm_options("sc"));
  // A job of an earlier test may still be completing on a node: start from three idle nodes.
  auto show_until = [&](const char* key, int want) {
    Json d = cp_->clusters().show(ws_, "sc");
    for (int i = 0; i < 100 && count(d, key) != want; ++i) {
      std::this_thread::sleep_for(100ms);
      d = cp_->clusters().show(ws_, "sc");
    }
    return d;
  };
  ASSERT_EQ(count(show_until("idleNodeCount", 3), "idleNodeCount"), 3);
  slurm_testing::scontrol({"update", "nodename=node3", "state=down", "reason=test"});
  Json doc = show_until("unusableNodeCount", 1);
  slurm_testing::scontrol({"update", "nodename=node3", "state=resume"});
  EXPECT_EQ(count(doc, "unusableNodeCount"), 1) << doc.dump();
  EXPECT_EQ(count(doc, "idleNodeCount"), 2);
  for (int i = 0; i < 100 && count(doc, "idleNodeCount") != 3; ++i) {
    std::this_thread::sleep_for(100ms);
    doc = cp_->clusters().show(ws_, "sc");
  }
  EXPECT_EQ(count(doc, "idleNodeCount"), 3) << doc.dump();
}

// Node exec is an srun step on the node asked for, in its folder, that gives up rather than queue
// behind another job; -L and unknown nodes are refused before anything runs; file list is refused.
TEST_F(SlurmCluster, NodeExecGoesThroughSrunAndFileListIsRefused) {
  cp_->clusters().create(slurm_options("sc"));
  NodeExecOptions exec;
  exec.exec = "true";
  exec.node_id = "node2";
  cp_->nodes().exec(ws_, "sc", exec);
  const auto& argv = counter_->last_argv;
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(argv[0], "srun");
  auto has = [&](const std::string& a) { return std::find(argv.begin(), argv.end(), a) != argv.end(); };
  EXPECT_TRUE(has("--nodelist=node2") && has("--immediate=30") && has("--nodes=1")) << ::testing::PrintToString(argv);
  EXPECT_FALSE(has("--overlap"));
  const fs::path node_folder = cp_->layout().node("rg", "ws", "sc", "node2");
  EXPECT_TRUE(has("--chdir=" + node_folder.string())) << ::testing::PrintToString(argv);
  EXPECT_TRUE(fs::is_directory(node_folder));

  const int before = counter_->spawned;
  exec.node_id = "node9";
  expect_error<InvalidArgument>([&] { cp_->nodes().exec(ws_, "sc", exec); }, "Cannot find a node with id=node9");
  exec.node_id.reset();
  exec.forwards = {"8080:localhost:80"};
  EXPECT_THROW(cp_->nodes().exec(ws_, "sc", exec), InvalidArgument);
  EXPECT_EQ(counter_->spawned - before, 2);  // the two sinfo of the two reconciles, no srun
  EXPECT_THROW(cp_->nodes().file_list(ws_, "sc", ".", 60), InvalidArgument);
}

// No account is made on Slurm's nodes and Slurm's own limits bound them: a Slurm cluster needs no
// admin password or key and takes no room in the regional vCPU quota, on create, resize or
// auto-scale, and leaves all of it to the simulated clusters, which are still held to it.
TEST_F(SlurmCluster, NeedsNoAdminCredentialAndTakesNoRoomInTheQuota) {
  ClusterCreateOptions o = slurm_options("sc");
  o.admin = {};
  o.target = 1000;  // 6,000 vCPUs of Standard_NC6, 60 times the quota
  Json doc = cp_->clusters().create(o);
  EXPECT_FALSE(doc["userAccountSettings"]["adminUserName"].get<std::string>().empty()) << doc.dump();
  EXPECT_TRUE(doc["userAccountSettings"]["adminUserSshPublicKey"].is_null());
  EXPECT_EQ(cp_->clusters().resize(ws_, "sc", 2000)["scaleSettings"]["manual"]["targetNodeCount"], 2000);
  cp_->clusters().auto_scale(ws_, "sc", 0, 3000);
  cp_->clusters().create(cluster_options("sim", 16));  // 96 of the 100 vCPUs, as with no Slurm cluster
  EXPECT_THROW(cp_->clusters().create(cluster_options("sim2", 1)), Conflict);
  EXPECT_THROW(cp_->clusters().resize(ws_, "sim", 17), Conflict);
  ClusterCreateOptions simulated_without_credential = cluster_options("sim3", 0);
  simulated_without_credential.admin = {};
  EXPECT_THROW(cp_->clusters().create(simulated_without_credential), InvalidArgument);
  EXPECT_EQ(cp_->clusters().resize(ws_, "sc", 5)["scaleSettings"]["manual"]["targetNodeCount"], 5);
}

TEST_F(SlurmCluster, ResizeAndAutoScaleChangeTheBoundOnlyAndDeleteKeepsSlurm) {
  cp_->clusters().create(slurm_options("sc"));
  Json doc = cp_->clusters().resize(ws_, "sc", 1);
  EXPECT_EQ(doc["scaleSettings"]["manual"]["targetNodeCount"], 1);
  EXPECT_EQ(doc["currentNodeCount"], 3);
  doc = cp_->clusters().auto_scale(ws_, "sc", 0, 2);
  EXPECT_EQ(doc["scaleSettings"]["autoScale"]["maximumNodeCount"], 2);
  EXPECT_EQ(doc["currentNodeCount"], 3);
  EXPECT_EQ(cp_->nodes().list(ws_, "sc").size(), 3u);
  cp_->clusters().remove(ws_, "sc");
  EXPECT_TRUE(cp_->clusters().list(ws_).empty());
  ClusterCreateOptions again = slurm_options("sc2");
  EXPECT_EQ(cp_->clusters().create(again)["currentNodeCount"], 3);  // the partition is untouched
}

TEST_F(SlurmCluster, SlurmIsAskedOncePerReconcileAndSimulatedClustersNever) {
  cp_->clusters().create(cluster_options("sim", 1));
  cp_->clusters().show(ws_, "sim");
  counter_->spawned = 0;
  cp_->clusters().show(ws_, "sim");
  cp_->clusters().list(ws_);
  EXPECT_EQ(counter_->spawned, 0);
  cp_->clusters().create(slurm_options("sc"));
  counter_->spawned = 0;
  cp_->clusters().show(ws_, "sim");  // touches no Slurm cluster: asks nothing
  cp_->groups().list();
  EXPECT_EQ(counter_->spawned, 0);
  EXPECT_EQ(cp_->clusters().show(ws_, "sim")["currentNodeCount"], 1);
  cp_->clusters().show(ws_, "sc");
  EXPECT_EQ(counter_->spawned, 1);  // one sinfo for the one Slurm cluster
  cp_->clusters().list(ws_);
  EXPECT_EQ(counter_->spawned, 2);
}

}  // namespace
}  // namespace batchai::control_plane::testing
