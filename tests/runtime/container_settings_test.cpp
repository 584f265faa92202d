// containerSettings checks at job create and launch plans run in containers (no Podman needed).
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "batchai/common/errors.hpp"
#include "batchai/runtime/container_plan.hpp"
#include "batchai/runtime/container_settings.hpp"
#include "batchai/runtime/job_spec.hpp"

namespace batchai::runtime {
namespace {

std::string refusal(const Json& settings) {
  try {
    validate_container_settings(settings);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "accepted";
}

Json with_image(const std::string& image) { return {{"imageSourceRegistry", {{"image", image}}}}; }

TEST(ContainerSettings, ImageReferencesFollowDockersGrammar) {
  for (const char* good : {"ubuntu", "ubuntu:22.04", "tensorflow/tensorflow:1.8.0-gpu", "demo.azurecr.io/myimage",
                           "localhost:5000/a/b_c/d__e/f-g:T.1", "pytorch/pytorch:0.4_cuda9_cudnn7",
                           "batchaitraining/chainermn:IntelMPI",
                           "ubuntu@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"})
    EXPECT_TRUE(valid_image_reference(good)) << good;
  for (const char* bad : {"", "-v", "--privileged", "ubuntu --privileged", "ubu ntu", "ubuntu\n", "ubuntu\t:1",
                          "Ubuntu", "ubuntu:", "ubuntu:-x", "/ubuntu", "ubuntu/", "a//b", "ubuntu@sha256:12",
                          "a..b/c", "x:1:2", "ubuntu\x01"})
    EXPECT_FALSE(valid_image_reference(bad)) << bad;
  EXPECT_TRUE(valid_image_reference(std::string(255, 'a')));
  EXPECT_FALSE(valid_image_reference(std::string(256, 'a')));
  // Hostile input is refused in linear time (no backtracking blow-up).
  EXPECT_FALSE(valid_image_reference(std::string(254, 'a') + "!"));
  EXPECT_FALSE(valid_image_reference(std::string(120, 'a') + std::string(120, '-') + "!"));
}

TEST(ContainerSettings, ShmSizeHasUnitsAndBounds) {
  EXPECT_EQ(parse_shm_size("64m"), 64 << 20);
  EXPECT_EQ(parse_shm_size("16gb"), std::int64_t{16} << 30);
  EXPECT_EQ(parse_shm_size("1.5G"), std::int64_t{3} << 29);
  EXPECT_EQ(parse_shm_size("2097152"), 2 << 20);
  EXPECT_EQ(parse_shm_size("512MiB"), 512 << 20);
  for (const char* bad : {"", "64q", "m", "-1m", "64 mb extra", "1k", "0", "2t", "99999999999999999g", "1e9"})
    EXPECT_THROW(parse_shm_size(bad), InvalidArgument) << bad;
}

TEST(ContainerSettings, RegistriesAndQualifiedImages) {
  EXPECT_EQ(registry_host("https://myreg.azurecr.io/"), "myreg.azurecr.io");
  EXPECT_EQ(registry_host("localhost:5000"), "localhost:5000");
  EXPECT_THROW(registry_host("https://a b"), InvalidArgument);
  EXPECT_THROW(registry_host("-oProxyCommand=x"), InvalidArgument);
  EXPECT_EQ(qualified_image("ubuntu", ""), "docker.io/library/ubuntu");
  EXPECT_EQ(qualified_image("tensorflow/tensorflow:1.8.0-gpu", ""), "docker.io/tensorflow/tensorflow:1.8.0-gpu");
  EXPECT_EQ(qualified_image("myimage:1", "https://demo.azurecr.io"), "demo.azurecr.io/myimage:1");
  EXPECT_EQ(qualified_image("demo.azurecr.io/myimage", "https://other.io"), "demo.azurecr.io/myimage");
  EXPECT_EQ(qualified_image("localhost/x:1", ""), "localhost/x:1");
  EXPECT_EQ(image_registry("docker.io/library/ubuntu"), "docker.io");
}

TEST(ContainerSettings, JobCreateRefusesWhatCannotRun) {
  EXPECT_EQ(refusal(with_image("ubuntu")), "accepted");
  EXPECT_NE(refusal(with_image("--privileged")).find("not a Docker image reference"), std::string::npos);
  EXPECT_NE(refusal(with_image(std::string(300, 'a'))).find("at most 255 characters"), std::string::npos);
  EXPECT_NE(refusal(with_image("a\x1b[31m")).find("'a?[31m'"), std::string::npos);  // control characters not echoed
  Json credentials_only = {{"imageSourceRegistry", {{"credentials", {{"username", "u"}, {"password", "p"}}}}}};
  EXPECT_NE(refusal(credentials_only).find("credentials are given, but for no image"), std::string::npos);
  Json shm = with_image("ubuntu");
  shm["shmSize"] = "64x";
  EXPECT_NE(refusal(shm).find("shmSize '64x' is not a size"), std::string::npos);
  shm["shmSize"] = "4t";
  EXPECT_NE(refusal(shm).find("out of bounds"), std::string::npos);
  Json no_password = with_image("ubuntu");
  no_password["imageSourceRegistry"]["credentials"] = {{"username", "u"}};
  EXPECT_NE(refusal(no_password).find("credentials.password is missing"), std::string::npos);
  Json server = with_image("ubuntu");
  server["imageSourceRegistry"]["serverUrl"] = "https://reg.io --tls-verify=false";
  EXPECT_NE(refusal(server).find("not a registry address"), std::string::npos);
}

TEST(ContainerSettings, TheRegistryPasswordStaysOutOfTheDocument) {
  JobIdentity id;
  id.subscription = "s";
  id.resource_group = "rg";
  id.workspace = "ws";
  id.experiment = "e";
  id.name = "j";
  id.cluster_id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws/clusters/c";
  const Json file = Json::parse(R"({"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_TEMP",
      "customToolkitSettings": {"commandLine": "true"},
      "containerSettings": {"imageSourceRegistry": {"image": "x/y", "serverUrl": "reg.io",
          "credentials": {"username": "u", "password": "hunter2"}}, "shmSize": "1g"}}})");
  const JobSpec spec = build_job_spec(file, id);
  EXPECT_EQ(spec.registry_password, "hunter2");
  EXPECT_EQ(spec.document.dump().find("hunter2"), std::string::npos);
  EXPECT_THROW(build_job_spec(Json::parse(R"({"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_TEMP",
      "customToolkitSettings": {"commandLine": "true"}, "containerSettings": {"imageSourceRegistry": {"image": "-it"}}}})"), id),
               InvalidArgument);
}

LaunchPlan two_node_plan() {
  JobIdentity id;
  id.subscription = "s";
  id.resource_group = "rg";
  id.workspace = "ws";
  id.experiment = "e";
  id.name = "j";
  id.cluster_id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws/clusters/c";
  const Json file = Json::parse(R"({"properties": {"nodeCount": 2, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_TEMP",
      "jobPreparation": {"commandLine": "true"}, "customToolkitSettings": {"commandLine": "echo hi"},
      "secrets": [{"name": "TOKEN", "value": "s3cret-value"}]}})");
  const JobSpec spec = build_job_spec(file, id);
  LaunchContext ctx;
  ctx.nodes = {{"n0", "/h/n0"}, {"n1", "/h/n1"}};
  ctx.self_executable = "/bin/batchai";
  ctx.secrets = spec.secrets;
  ctx.base_env = {{"PATH", "/usr/bin"}, {"HOME", "/root"}};
  return make_launch_plan(spec.job, ctx);
}

TEST(ContainerPlan, TasksEnterTheirNodesContainerWithoutSecretsOnArgv) {
  LaunchPlan plan = two_node_plan();
  ASSERT_EQ(plan.preparation.size(), 2u);
  const auto env_before = plan.tasks[0].process.env;
  containerize_plan(plan, {"podman", "--runtime", "runc"}, "key1", "/bin/batchai");
  EXPECT_TRUE(plan.requirements.empty());
  const auto& argv = plan.preparation[1].process.argv;
  ASSERT_GE(argv.size(), 8u);
  // The job's marker (its value from podman's environment) lets whoever ends the job find what runs inside.
  EXPECT_EQ(std::vector<std::string>(argv.begin(), argv.begin() + 8),
            (std::vector<std::string>{"podman", "--runtime", "runc", "exec", "--workdir",
                                      plan.preparation[1].process.cwd.string(), "-e", "BATCHAI_JOB_KEY"}));
  EXPECT_NE(std::find(argv.begin(), argv.end(), "batchai-key1-n1"), argv.end());
  const auto& main = plan.tasks[0].process;
  EXPECT_EQ(main.env, env_before);  // values reach podman through its environment
  EXPECT_NE(std::find(main.argv.begin(), main.argv.end(), "TOKEN"), main.argv.end());
  EXPECT_EQ(std::find(main.argv.begin(), main.argv.end(), "PATH"), main.argv.end());  // the image's own
  for (const auto& a : main.argv) EXPECT_EQ(a.find("s3cret-value"), std::string::npos) << a;
  EXPECT_EQ(std::vector<std::string>(main.argv.end() - 4, main.argv.end()),
            (std::vector<std::string>{"batchai-key1-n0", "bash", "-c", "echo hi"}));
}

TEST(ContainerPlan, MpirunReachesTheOtherContainersThroughTheLaunchAgent) {
  JobIdentity id;
  id.subscription = "s";
  id.resource_group = "rg";
  id.workspace = "ws";
  id.experiment = "e";
  id.name = "j";
  id.cluster_id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws/clusters/c";
  const JobSpec spec = build_job_spec(Json::parse(R"({"properties": {"nodeCount": 2, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_TEMP",
      "customMpiSettings": {"commandLine": "hostname", "processCount": 4}}})"), id);
  LaunchContext ctx;
  ctx.nodes = {{"n0", "/h/n0"}, {"n1", "/h/n1"}};
  ctx.self_executable = "/opt/b/batchai";
  ctx.base_env = {{"PATH", "/usr/bin"}, {"LANG", "C"}};
  LaunchPlan plan = make_launch_plan(spec.job, ctx);
  containerize_plan(plan, {"podman"}, "k", ctx.self_executable);
  EXPECT_EQ(plan.hostfile_contents, "batchai-node-0 slots=2\nbatchai-node-1 slots=2\n");
  const auto& p = plan.tasks.at(0).process;
  const auto mpirun = std::find(p.argv.begin(), p.argv.end(), "mpirun");
  ASSERT_NE(mpirun, p.argv.end());
  EXPECT_EQ(std::vector<std::string>(mpirun + 1, mpirun + 7),
            (std::vector<std::string>{"--mca", "plm_rsh_agent", "/opt/b/batchai _container-enter", "--mca",
                                      "plm_rsh_no_tree_spawn", "1"}));
  EXPECT_EQ(p.env.at("BATCHAI_CONTAINER_GATEWAY"), "/.batchai/gateway/socket");
  const Json nodes = Json::parse(plan.rank_nodes_contents);
  EXPECT_FALSE(nodes["nodes"][1]["env"].contains("PATH"));  // the image's PATH for the ranks
  EXPECT_EQ(nodes["nodes"][1]["env"]["LANG"], "C");
}

TEST(ContainerPlan, ContainersRunIdleWithHostNetworkLimitsAndTheNodesFolders) {
  const LaunchPlan plan = two_node_plan();
  ContainerOptions o;
  o.job_key = "key1";
  o.image = "localhost/img:1";
  o.shm_bytes = 64 << 20;
  o.ulimits = {{"nofile", "1024:4096"}};
  o.common_binds = {{"/usr/bin/batchai", "/.batchai/bin/batchai", true}};
  const auto a = container_start_args(plan, 1, o);
  auto has = [&](std::vector<std::string> seq) { return std::search(a.begin(), a.end(), seq.begin(), seq.end()) != a.end(); };
  EXPECT_TRUE(has({"run", "-d", "--name", "batchai-key1-n1", "--label", "batchai.job=key1", "--network=host",
                   "--hostname", "batchai-node-1"}));
  EXPECT_TRUE(has({"--ulimit", "nofile=1024:4096"}));
  EXPECT_TRUE(has({"--shm-size", "67108864b"}));
  EXPECT_TRUE(has({"-v", "/h/n1:/h/n1"}));
  EXPECT_TRUE(has({"-v", "/usr/bin/batchai:/.batchai/bin/batchai:ro"}));
  EXPECT_TRUE(has({"--entrypoint", "sleep", "localhost/img:1", "infinity"}));
  EXPECT_EQ(container_name("k", "a/b c"), "batchai-k-a_b_c");
}

TEST(ContainerPlan, AnMpiJobsContainersShareNodeZerosIpcAndPidNamespaces) {
  const LaunchPlan plan = two_node_plan();
  ContainerOptions o;
  o.job_key = "key1";
  o.image = "localhost/img:1";
  o.share_host = true;
  auto has = [](const std::vector<std::string>& a, std::vector<std::string> seq) {
    return std::search(a.begin(), a.end(), seq.begin(), seq.end()) != a.end();
  };
  // Node 0 holds /dev/shm for both nodes (Podman's 64 MiB each without shmSize).
  const auto first = container_start_args(plan, 0, o);
  EXPECT_TRUE(has(first, {"--ipc", "shareable", "--shm-size", std::to_string(2 * (64 << 20)) + "b"}));
  const auto second = container_start_args(plan, 1, o);
  EXPECT_TRUE(has(second, {"--ipc", "container:batchai-key1-n0", "--pid", "container:batchai-key1-n0"}));
  EXPECT_FALSE(has(second, {"--shm-size"}));
  o.shm_bytes = 1 << 30;
  EXPECT_TRUE(has(container_start_args(plan, 0, o), {"--shm-size", std::to_string(2ll << 30) + "b"}));
}

}  // namespace
}  // namespace batchai::runtime
