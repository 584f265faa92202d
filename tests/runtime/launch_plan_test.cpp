// Launch plans for every toolkit, inspected without starting processes, plus the recipes corpus.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batchai/common/errors.hpp"
#include "batchai/runtime/job_spec.hpp"
#include "batchai/runtime/launch_plan.hpp"
#include "batchai/runtime/rank_exec.hpp"
#include "launch_env.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace batchai::runtime {
namespace {

namespace fs = std::filesystem;

JobIdentity identity() {
  JobIdentity id;
  id.subscription = "sub";
  id.resource_group = "rg";
  id.workspace = "ws";
  id.experiment = "exp";
  id.name = "job";
  id.cluster_id = "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws/clusters/cl";
  id.uuid = "u";
  return id;
}

LaunchContext context(int nodes, int gpus = 0) {
  LaunchContext c;
  for (int i = 0; i < nodes; ++i) c.nodes.push_back({"node" + std::to_string(i), "/h/n" + std::to_string(i), "localhost", gpus});
  c.cores = 2;
  c.self_executable = "/bin/batchai";
  return c;
}

JobSpec spec(const std::string& properties) {
  return build_job_spec(Json::parse("{\"properties\": " + properties + "}"), identity());
}

LaunchPlan plan(const std::string& properties, const LaunchContext& c) { return make_launch_plan(spec(properties).job, c); }

bool has_arg(const std::vector<std::string>& argv, const std::string& a) {
  return std::find(argv.begin(), argv.end(), a) != argv.end();
}

const std::string kPrefix = R"("stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/logs")";

// Folders come from the one layout (NodeDir); mount links come down from the control plane.
TEST(LaunchPlan, EachNodeCarriesItsFoldersAndTheMountLinksHandedDown) {
  LaunchContext c = context(2);
  c.job_mounts = {{"data", "/store/acct/shares/data", "the share 'data'", "Create it."}, {"plain", {}, "", ""}};
  auto p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "customToolkitSettings": {"commandLine": "x"}})", c);
  ASSERT_EQ(p.nodes.size(), 2u);
  EXPECT_EQ(p.nodes[1].id, "node1");
  const NodeFolders& f = p.nodes[1].folders;
  EXPECT_EQ(f.root, "/h/n1");
  EXPECT_EQ(f.mount_root, "/h/n1/mounts");
  EXPECT_EQ(f.job_temp_dir, "/h/n1/jobs");
  EXPECT_EQ(f.job_temp, "/h/n1/jobs/job");
  EXPECT_EQ(f.job_mount_root, "/h/n1/jobs/job/mounts");
  EXPECT_EQ(f.shared_job_temp, "/h/n0/jobs/job/shared");  // the master's, for every node
  EXPECT_EQ(f.stdouterr, p.stdouterr_dir);
  EXPECT_EQ(p.nodes[0].folders.job_mount_root, "/h/n0/jobs/job/mounts");
  ASSERT_EQ(p.nodes[1].links.size(), 2u);
  EXPECT_EQ(p.nodes[1].links[0].relative_path, "data");
  EXPECT_EQ(p.nodes[1].links[0].target, "/store/acct/shares/data");
  EXPECT_TRUE(p.nodes[1].links[1].target.empty());
  // The environment names the same folders.
  EXPECT_EQ(p.tasks[0].process.env.at("AZ_BATCHAI_JOB_MOUNT_ROOT"), p.nodes[0].folders.job_mount_root.string());
}

TEST(LaunchPlan, MakeNodeMountsLinksBeneathEveryNodesJobMountRoot) {
  const test::TempDir tmp("batchai-mounts");
  const fs::path& root = tmp.path();
  fs::create_directories(root / "share");
  LaunchContext c;
  for (int i = 0; i < 2; ++i) c.nodes.push_back({"node" + std::to_string(i), root / ("n" + std::to_string(i)), "localhost", 0});
  c.job_mounts = {{"a/data", root / "share", "the share 'share'", "Create it."}, {"plain", {}, "", ""}};
  auto p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "customToolkitSettings": {"commandLine": "x"}})", c);
  make_node_mounts(p);
  make_node_mounts(p);  // idempotent
  for (const char* n : {"n0", "n1"}) {
    const fs::path mounts = root / n / "jobs" / "job" / "mounts";
    EXPECT_TRUE(fs::is_symlink(mounts / "a" / "data")) << n;
    EXPECT_EQ(fs::read_symlink(mounts / "a" / "data"), root / "share");
    EXPECT_TRUE(fs::is_directory(mounts / "plain")) << n;
  }
  c.job_mounts = {{"gone", root / "missing", "the share 'missing'", "Create it."}};
  auto q = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "customToolkitSettings": {"commandLine": "x"}})", c);
  try {
    make_node_mounts(q);
    ADD_FAILURE() << "a missing share was mounted";
  } catch (const NotFound& e) {
    EXPECT_EQ(std::string(e.what()), "Cannot mount the share 'missing' at 'gone': it does not exist. Create it.");
  }
  std::error_code ec;
  fs::remove_all(root, ec);
}

TEST(LaunchPlan, CustomRunsBashOnTheFirstNodeWithTheJobEnvironment) {
  auto p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "customToolkitSettings": {"commandLine": "echo hi"},
      "jobPreparation": {"commandLine": "prep"},
      "inputDirectories": [{"id": "DATA", "path": "$AZ_BATCHAI_JOB_MOUNT_ROOT/data"}],
      "outputDirectories": [{"id": "OUTPUT", "pathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/logs", "pathSuffix": "output"},
                            {"id": "MODEL", "pathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/logs", "pathSuffix": ""}],
      "environmentVariables": [{"name": "WHERE", "value": "$AZ_BATCHAI_JOB_TEMP/x"}],
      "secrets": [{"name": "TOKEN", "value": "s3cret"}]})", [] {
    auto c = context(2);
    c.secrets["TOKEN"] = "s3cret";
    return c;
  }());
  const fs::path stdouterr = "/h/n0/jobs/job/mounts/logs/sub/rg/workspaces/ws/experiments/exp/jobs/job/u/stdouterr";
  EXPECT_EQ(p.stdouterr_dir, stdouterr);
  ASSERT_EQ(p.tasks.size(), 1u);
  const auto& t = p.tasks[0].process;
  EXPECT_EQ(t.argv, (std::vector<std::string>{"bash", "-c", "echo hi"}));
  EXPECT_EQ(t.stdout_file, stdouterr / "stdout.txt");
  EXPECT_EQ(t.stderr_file, stdouterr / "stderr.txt");
  EXPECT_EQ(t.cwd, "/h/n0/jobs/job");
  EXPECT_EQ(t.env.at("AZ_BATCHAI_MOUNT_ROOT"), "/h/n0/mounts");
  EXPECT_EQ(t.env.at("AZ_BATCHAI_JOB_MOUNT_ROOT"), "/h/n0/jobs/job/mounts");
  EXPECT_EQ(t.env.at("AZ_BATCHAI_JOB_TEMP"), "/h/n0/jobs/job");
  EXPECT_EQ(t.env.at("AZ_BATCHAI_JOB_TEMP_DIR"), "/h/n0/jobs");
  EXPECT_EQ(t.env.at("AZ_BATCHAI_SHARED_JOB_TEMP"), "/h/n0/jobs/job/shared");
  EXPECT_EQ(t.env.at("AZ_BATCHAI_STDOUTERR_DIR"), stdouterr.string());
  EXPECT_EQ(t.env.at("AZ_BATCHAI_MPI_HOST_FILE"), "/h/n0/jobs/job/shared/hostfile");
  EXPECT_EQ(t.env.at("AZ_BATCHAI_NUM_GPUS"), "0");
  EXPECT_EQ(t.env.at("AZ_BATCH_HOST_LIST"), "localhost,localhost");
  EXPECT_EQ(t.env.at("AZ_BATCHAI_INPUT_DATA"), "/h/n0/jobs/job/mounts/data");
  EXPECT_EQ(t.env.at("AZ_BATCHAI_OUTPUT_OUTPUT"),
            "/h/n0/jobs/job/mounts/logs/sub/rg/workspaces/ws/experiments/exp/jobs/job/u/outputs/output");
  EXPECT_EQ(t.env.at("AZ_BATCHAI_OUTPUT_MODEL"), "/h/n0/jobs/job/mounts/logs/sub/rg/workspaces/ws/experiments/exp/jobs/job/u/outputs");
  EXPECT_EQ(t.env.at("WHERE"), "/h/n0/jobs/job/x");
  EXPECT_EQ(t.env.at("TOKEN"), "s3cret");
  EXPECT_FALSE(t.env.count("AZ_BATCHAI_TASK_INDEX"));
  // Preparation on every node, per-node file names when there are several nodes.
  ASSERT_EQ(p.preparation.size(), 2u);
  EXPECT_EQ(p.preparation[1].process.stdout_file, stdouterr / "stdout-job_prep-node1.txt");
  EXPECT_EQ(p.preparation[1].process.cwd, "/h/n1/jobs/job");
  EXPECT_EQ(p.preparation[1].process.env.at("AZ_BATCHAI_JOB_TEMP"), "/h/n1/jobs/job");
  EXPECT_TRUE(std::count(p.directories.begin(), p.directories.end(),
                         fs::path(t.env.at("AZ_BATCHAI_OUTPUT_OUTPUT"))));
  EXPECT_EQ(p.execution_log, stdouterr / "execution.log");
}

TEST(LaunchPlan, TasksStartFromTheNodesEnvironmentOnly) {
  LaunchContext c = context(2);
  c.base_env = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/root"}, {"AZ_BATCHAI_MOUNT_ROOT", "overridden"}};
  auto p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "customMpiSettings": {"commandLine": "x", "processCount": 2},
      "jobPreparation": {"commandLine": "prep"},
      "environmentVariables": [{"name": "PATH", "value": "/opt/tool/bin:$PATH"}]})", c);
  for (const auto* tasks : {&p.preparation, &p.tasks}) {
    for (const auto& t : *tasks) {
      EXPECT_TRUE(t.process.clear_env);  // nothing of whoever runs the plan
      EXPECT_EQ(t.process.env.at("HOME"), "/root");
      // The job's variables may build on the node's, and the docs/behaviour.md §4.8 ones win over the base.
      EXPECT_EQ(t.process.env.at("PATH"), "/opt/tool/bin:/usr/bin:/bin");
      EXPECT_EQ(t.process.env.at("AZ_BATCHAI_MOUNT_ROOT"), "/h/n" + std::to_string(t.node) + "/mounts");
    }
  }
}

TEST(LaunchPlan, SingleNodePreparationFileNames) {
  auto p = plan(R"({"nodeCount": 1, )" + kPrefix + R"(, "customToolkitSettings": {"commandLine": "x"},
      "jobPreparation": {"commandLine": "prep"}})", context(1));
  EXPECT_EQ(p.preparation.at(0).process.stdout_file->filename(), "stdout-job_prep.txt");
  EXPECT_EQ(p.preparation.at(0).process.stderr_file->filename(), "stderr-job_prep.txt");
}

TEST(LaunchPlan, CustomMpiUsesMpirunAndTheRankWrapper) {
  auto c = context(2);
  c.as_root = true;
  auto p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "customMpiSettings": {"commandLine": "hostname", "processCount": 3}})", c);
  ASSERT_EQ(p.tasks.size(), 1u);
  const auto& argv = p.tasks[0].process.argv;
  EXPECT_EQ(std::vector<std::string>(argv.begin(), argv.begin() + 5),
            (std::vector<std::string>{"mpirun", "-np", "3", "--hostfile", "/h/n0/jobs/job/shared/hostfile"}));
  EXPECT_TRUE(has_arg(argv, "--allow-run-as-root"));
  EXPECT_TRUE(has_arg(argv, "--oversubscribe"));  // 3 ranks, 2 cores
  EXPECT_TRUE(has_arg(argv, "AZ_BATCHAI_JOB_TEMP"));
  auto wrapper = std::find(argv.begin(), argv.end(), "/bin/batchai");
  ASSERT_NE(wrapper, argv.end());
  EXPECT_EQ(std::vector<std::string>(wrapper, argv.end()),
            (std::vector<std::string>{"/bin/batchai", "_rank-exec", "--nodes-file", "/h/n0/jobs/job/shared/rank-nodes.json",
                                      "--", "bash", "-c", "hostname"}));
  EXPECT_EQ(p.hostfile_contents, "localhost slots=4\n");
  Json nodes = Json::parse(p.rank_nodes_contents);
  EXPECT_EQ(nodes["slots"], 2);
  EXPECT_EQ(nodes["nodes"][1]["env"]["AZ_BATCHAI_JOB_TEMP"], "/h/n1/jobs/job");
  EXPECT_TRUE(std::count_if(p.requirements.begin(), p.requirements.end(), [](const auto& r) { return r.program == "mpirun"; }));

  c.as_root = false;
  p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "customMpiSettings": {"commandLine": "hostname"}})", c);
  EXPECT_FALSE(has_arg(p.tasks[0].process.argv, "--allow-run-as-root"));
  EXPECT_FALSE(has_arg(p.tasks[0].process.argv, "--oversubscribe"));
}

TEST(LaunchPlan, HorovodPythonAndBuiltinTrainer) {
  auto p = plan(R"({"nodeCount": 1, )" + kPrefix + R"(, "horovodSettings": {
      "pythonScriptFilePath": "$AZ_BATCHAI_JOB_MOUNT_ROOT/scripts/train.py", "commandLineArgs": "--epochs 2"}})", context(1));
  const auto& argv = p.tasks[0].process.argv;
  EXPECT_EQ(argv.back(), "exec 'python3' '/h/n0/jobs/job/mounts/scripts/train.py' --epochs 2");
  EXPECT_TRUE(std::count_if(p.requirements.begin(), p.requirements.end(), [](const auto& r) { return r.program == "python3"; }));

  p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "horovodSettings": {"pythonScriptFilePath": "batchai-train",
      "commandLineArgs": "--epochs 1"}})", context(2));
  EXPECT_EQ(p.tasks[0].process.argv.back(), "exec '/bin/batchai' train --epochs 1");
  EXPECT_FALSE(std::count_if(p.requirements.begin(), p.requirements.end(), [](const auto& r) { return r.program == "python3"; }));
}

TEST(LaunchPlan, CntkCaffeChainer) {
  auto p = plan(R"({"nodeCount": 1, )" + kPrefix + R"(, "cntkSettings": {"configFilePath": "$AZ_BATCHAI_MOUNT_ROOT/c.cntk",
      "commandLineArgs": "parallelTrain=false"}})", context(1));
  EXPECT_EQ(p.tasks[0].process.argv, (std::vector<std::string>{"bash", "-c",
      "exec 'cntk' configFile='/h/n0/mounts/c.cntk' parallelTrain=false"}));
  p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "caffeSettings": {"configFilePath": "s.prototxt"}})", context(2));
  EXPECT_EQ(p.tasks[0].process.argv[0], "mpirun");
  EXPECT_EQ(p.tasks[0].process.argv.back(), "exec 'caffe' train --solver='s.prototxt'");
  p = plan(R"({"nodeCount": 1, )" + kPrefix + R"(, "caffeSettings": {"pythonScriptFilePath": "a.py",
      "pythonInterpreterPath": "/opt/py/bin/python"}})", context(1));
  EXPECT_EQ(p.tasks[0].process.argv.back(), "exec '/opt/py/bin/python' 'a.py'");
  p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "chainerSettings": {"pythonScriptFilePath": "a.py"}})", context(2));
  EXPECT_EQ(p.tasks[0].process.argv[2], "2");
}

TEST(LaunchPlan, Caffe2AndPyTorchRunOneTaskPerNode) {
  auto p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "pyTorchSettings": {"pythonScriptFilePath": "m.py",
      "communicationBackend": "gloo", "commandLineArgs": "--rank $AZ_BATCHAI_TASK_INDEX"}})", context(2));
  ASSERT_EQ(p.tasks.size(), 2u);
  EXPECT_EQ(p.tasks[1].process.env.at("AZ_BATCHAI_TASK_INDEX"), "1");
  EXPECT_EQ(p.tasks[1].process.stdout_file->filename(), "stdout-1.txt");
  EXPECT_EQ(p.tasks[1].process.env.at("AZ_BATCHAI_PYTORCH_INIT_METHOD"), "file:///h/n0/jobs/job/shared/pytorch_init");
  EXPECT_EQ(p.tasks[1].process.env.at("AZ_BATCHAI_PYTORCH_BACKEND"), "gloo");
  EXPECT_EQ(p.tasks[1].process.cwd, "/h/n1/jobs/job");
  p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "pyTorchSettings": {"pythonScriptFilePath": "m.py",
      "communicationBackend": "MPI"}})", context(2));
  ASSERT_EQ(p.tasks.size(), 1u);
  EXPECT_EQ(p.tasks[0].process.argv[0], "mpirun");
  p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "caffe2Settings": {"pythonScriptFilePath": "r.py"}})", context(2));
  ASSERT_EQ(p.tasks.size(), 2u);
  EXPECT_EQ(p.tasks[0].process.stderr_file->filename(), "stderr-0.txt");
}

TEST(LaunchPlan, TensorFlowPsAndWorkers) {
  auto c = context(2);
  c.nodes[0].host = "10.0.0.4";
  c.nodes[1].host = "10.0.0.5";
  auto p = plan(R"({"nodeCount": 2, )" + kPrefix + R"(, "tensorFlowSettings": {"pythonScriptFilePath": "t.py",
      "masterCommandLineArgs": "--master", "workerCommandLineArgs": "--worker", "parameterServerCommandLineArgs": "--ps",
      "workerCount": 2, "parameterServerCount": 1}})", c);
  ASSERT_EQ(p.tasks.size(), 3u);
  const auto& ps = p.tasks[0];
  EXPECT_EQ(ps.role, TaskRole::kParameterServer);
  EXPECT_FALSE(ps.wait_for);
  EXPECT_EQ(ps.process.stdout_file->filename(), "stdout-ps-0.txt");
  EXPECT_EQ(ps.process.env.at("AZ_BATCHAI_PS_HOSTS"), "10.0.0.4:2222");
  EXPECT_EQ(ps.process.env.at("AZ_BATCHAI_WORKER_HOSTS"), "10.0.0.4:2223,10.0.0.5:2222");
  EXPECT_EQ(p.tasks[1].process.argv.back(), "exec 'python3' 't.py' --master");
  EXPECT_EQ(p.tasks[2].process.argv.back(), "exec 'python3' 't.py' --worker");
  EXPECT_EQ(p.tasks[2].process.stdout_file->filename(), "stdout-wk-1.txt");
  EXPECT_EQ(p.tasks[2].node, 1u);
  Json tf = Json::parse(p.tasks[1].process.env.at("TF_CONFIG"));
  EXPECT_EQ(tf["task"], Json::parse(R"({"type": "master", "index": 0})"));
  EXPECT_EQ(tf["cluster"]["worker"][1], "10.0.0.5:2222");
  // Single node, nothing given: one worker, no parameter server.
  p = plan(R"({"nodeCount": 1, )" + kPrefix + R"(, "tensorFlowSettings": {"pythonScriptFilePath": "t.py"}})", context(1));
  ASSERT_EQ(p.tasks.size(), 1u);
  EXPECT_EQ(p.tasks[0].process.stdout_file->filename(), "stdout-wk-0.txt");
}

TEST(LaunchPlan, ExpandEnvVars) {
  std::map<std::string, std::string> env = {{"A", "x"}, {"B_2", "y"}};
  EXPECT_EQ(expand_env_vars("$A/${B_2}/$C/${D}/$", env), "x/y/$C/${D}/$");
  EXPECT_EQ(expand_env_vars("$Ab ${A}b", env), "$Ab xb");
}

TEST(RankExec, PutsTheRankIntoItsNode) {
  const test::TempDir tmp("batchai-rank-exec");
  const fs::path& dir = tmp.path();
  fs::create_directories(dir / "n1");
  Json nodes = {{"slots", 2},
                {"nodes", Json::array({{{"id", "n0"}, {"cwd", dir.string()}, {"gpus", 0}, {"env", {{"X", "zero"}}}},
                                       {{"id", "n1"}, {"cwd", (dir / "n1").string()}, {"gpus", 4}, {"env", {{"X", "one"}}}}})}};
  std::ofstream(dir / "nodes.json") << nodes.dump();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    _exit(run_rank_exec({"--nodes-file", (dir / "nodes.json").string(), "--", "sh", "-c",
                         "echo \"$X $CUDA_VISIBLE_DEVICES $BATCHAI_NODE_ID $(pwd)\" > out.txt"}));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::ifstream in(dir / "n1" / "out.txt");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "one 1 n1 " + fs::canonical(dir / "n1").string());
  EXPECT_EQ(run_rank_exec({"--bogus"}), 2);
}


// A rank's GPU: its local rank among the GPUs Slurm gave the allocation (CUDA_VISIBLE_DEVICES),
// or among the node's 0..gpus-1 when nothing was given.
TEST(RankExec, GpuForLocalRank) {
  EXPECT_EQ(gpu_for_local_rank(0, 2, nullptr), "0");
  EXPECT_EQ(gpu_for_local_rank(3, 2, nullptr), "1");
  EXPECT_EQ(gpu_for_local_rank(0, 2, "2,3"), "2");
  EXPECT_EQ(gpu_for_local_rank(1, 2, "2,3"), "3");
  EXPECT_EQ(gpu_for_local_rank(2, 2, "2,3"), "2");
  EXPECT_EQ(gpu_for_local_rank(1, 4, "GPU-aa,GPU-bb"), "GPU-bb");  // UUIDs pass as they are
  EXPECT_EQ(gpu_for_local_rank(1, 2, ""), "1");
  EXPECT_EQ(gpu_for_local_rank(1, 2, ",,"), "1");
  EXPECT_EQ(gpu_for_local_rank(-1, 0, nullptr), "0");
}

// Every job file of the recipes corpus: parse -> document -> plan, or a clear error.
TEST(Recipes, EveryJobFileParsesAndPlansOrFailsClearly) {
  fs::path root = fs::path(BATCHAI_SOURCE_DIR) / ".." / "shared" / "reference" / "batchai-recipes";
  if (const char* env = std::getenv("BATCHAI_SHARED_DIR")) root = fs::path(env) / "reference" / "batchai-recipes";
  if (!fs::is_directory(root)) GTEST_SKIP() << "recipes corpus not found at " << root;
  int planned = 0, rejected = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    if (entry.path().string().find("_service_outputs") != std::string::npos) continue;
    if (name.find("job") == std::string::npos) continue;
    try {
      Json f = parse_json_text(test::read_file(entry.path()), entry.path().string());
      auto s = build_job_spec(f, identity());
      auto p = make_launch_plan(s.job, context(s.job.node_count));
      EXPECT_FALSE(p.tasks.empty()) << entry.path();
      ++planned;
    } catch (const InvalidArgument& e) {
      std::string message = e.what();
      EXPECT_GT(message.size(), 20u) << entry.path();
      std::cout << "rejected " << fs::relative(entry.path(), root).string() << ": " << message << "\n";
      ++rejected;
    }
  }
  std::cout << "recipes planned: " << planned << ", rejected with a message: " << rejected << "\n";
  EXPECT_GE(planned, 20);
}

}  // namespace
}  // namespace batchai::runtime
