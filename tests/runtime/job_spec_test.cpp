// Tests of job.json -> Job document: keys, defaults, toolType, secrets and clear errors.
#include <gtest/gtest.h>

#include "batchai/common/errors.hpp"
#include "batchai/runtime/job_spec.hpp"

namespace batchai::runtime {
namespace {

JobIdentity identity() {
  JobIdentity id;
  id.subscription = "00000000-0000-0000-0000-000000000000";
  id.resource_group = "rg";
  id.workspace = "ws";
  id.experiment = "exp";
  id.name = "job";
  id.cluster_id = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws/clusters/cl";
  id.uuid = "5fe2d959-0000-4000-8000-000000000000";
  id.creation_time = "2018-06-15T21:43:10.435000+00:00";
  return id;
}

Json file(const std::string& properties) { return Json::parse("{\"properties\": " + properties + "}"); }

std::string error_of(const Json& f) {
  try {
    build_job_spec(f, identity());
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JobSpec, MinimalCustomJobHasEveryKey) {
  auto spec = build_job_spec(file(R"({"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
      "customToolkitSettings": {"commandLine": "true"}, "location": "eastus", "toolType": "ignored"})"), identity());
  const Json& d = spec.document;
  EXPECT_EQ(spec.tool_type, ToolType::kCustom);
  EXPECT_EQ(d.size(), 33u);
  for (const char* key : {"caffe2Settings", "caffeSettings", "chainerSettings", "cntkSettings", "customMpiSettings",
                          "horovodSettings", "pyTorchSettings", "tensorFlowSettings", "containerSettings",
                          "environmentVariables", "executionInfo", "inputDirectories", "jobPreparation",
                          "mountVolumes", "outputDirectories", "secrets"}) {
    EXPECT_TRUE(d.contains(key) && d[key].is_null()) << key;
  }
  EXPECT_EQ(d["customToolkitSettings"], Json::parse(R"({"commandLine": "true"})"));
  EXPECT_EQ(d["toolType"], "custom");
  EXPECT_EQ(d["constraints"]["maxWallClockTime"], "7 days, 0:00:00");
  EXPECT_EQ(d["schedulingPriority"], "normal");
  EXPECT_EQ(d["cluster"]["resourceGroup"], "rg");
  EXPECT_EQ(d["jobOutputDirectoryPathSegment"],
            "00000000-0000-0000-0000-000000000000/rg/workspaces/ws/experiments/exp/jobs/job/5fe2d959-0000-4000-8000-000000000000");
  EXPECT_EQ(d["id"], "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/"
                     "Microsoft.BatchAI/workspaces/ws/experiments/exp/jobs/job");
  EXPECT_EQ(d["executionState"], "queued");
  EXPECT_FALSE(d.contains("location"));
}

TEST(JobSpec, ProcessCountDefaultsAndCntkLanguage) {
  auto spec = build_job_spec(file(R"({"nodeCount": 2, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
      "horovodSettings": {"pythonScriptFilePath": "train.py"}})"), identity());
  EXPECT_EQ(spec.document["horovodSettings"]["processCount"], 2);
  EXPECT_EQ(spec.document["horovodSettings"]["pythonInterpreterPath"], nullptr);
  spec = build_job_spec(file(R"({"nodeCount": 2, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
      "cntkSettings": {"pythonScriptFilePath": "a.py", "processCount": 8}})"), identity());
  EXPECT_EQ(spec.document["cntkSettings"]["processCount"], 8);  // more ranks than nodes is fine
  EXPECT_EQ(spec.document["cntkSettings"]["languageType"], "Python");
  spec = build_job_spec(file(R"({"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
      "tensorFlowSettings": {"pythonScriptFilePath": "a.py"}})"), identity());
  EXPECT_EQ(spec.document["tensorFlowSettings"]["workerCount"], nullptr);
  EXPECT_EQ(spec.tool_type, ToolType::kTensorFlow);
}

TEST(JobSpec, SecretsMountsDurations) {
  auto spec = build_job_spec(file(R"({"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
      "customMpiSettings": {"commandLine": "hostname"},
      "constraints": {"maxWallClockTime": "PT2H"},
      "secrets": [{"name": "TOKEN", "value": "s3cret"}],
      "environmentVariables": [{"name": "A", "value": "1"}],
      "outputDirectories": [{"id": "MODEL", "pathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/logs", "pathSuffix": ""}],
      "mountVolumes": {"azureFileShares": [{"azureFileUrl": "https://<AZURE_BATCHAI_STORAGE_ACCOUNT>.file.core.windows.net/logs",
                                            "relativeMountPath": "logs"}]}})"), identity());
  const Json& d = spec.document;
  EXPECT_EQ(d["constraints"]["maxWallClockTime"], "2:00:00");
  EXPECT_EQ(d["secrets"], Json::parse(R"([{"name": "TOKEN", "value": null, "valueSecretReference": null}])"));
  EXPECT_EQ(spec.secrets.at("TOKEN"), "s3cret");
  EXPECT_EQ(d["customMpiSettings"]["processCount"], 1);
  EXPECT_EQ(d["outputDirectories"][0]["pathSuffix"], "");
  const Json& share = d["mountVolumes"]["azureFileShares"][0];
  EXPECT_EQ(share["fileMode"], "0777");
  EXPECT_EQ(share["directoryMode"], "0777");
  EXPECT_EQ(d["mountVolumes"]["azureBlobFileSystems"], nullptr);
  EXPECT_EQ(normalize_wall_clock_time("7.00:00:00"), "7 days, 0:00:00");
  EXPECT_EQ(normalize_wall_clock_time("P1DT2H"), "1 day, 2:00:00");
  EXPECT_THROW(normalize_wall_clock_time("soon"), InvalidArgument);
}

TEST(JobSpec, MountPatcherHookIsCalled) {
  JobSpecOptions options;
  options.patch_mount_volumes = [](Json& mv) {
    mv["azureFileShares"][0]["accountName"] = "account";
    mv["azureFileShares"][0]["credentials"] = {{"accountKey", "key"}};
  };
  auto spec = build_job_spec(file(R"({"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
      "customToolkitSettings": {"commandLine": "true"},
      "mountVolumes": {"azureFileShares": [{"azureFileUrl": "https://x.file.core.windows.net/s", "relativeMountPath": "s"}]}})"),
                             identity(), options);
  const Json& share = spec.document["mountVolumes"]["azureFileShares"][0];
  EXPECT_EQ(share["accountName"], "account");
  EXPECT_EQ(share["credentials"], Json::parse(R"({"accountKey": null, "accountKeySecretReference": null})"));
}

TEST(JobSpec, ClearErrors) {
  EXPECT_EQ(error_of(file(R"({"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT"})")),
            "The job configuration file sets no toolkit; add exactly one of cntkSettings, pyTorchSettings, "
            "tensorFlowSettings, caffeSettings, caffe2Settings, chainerSettings, customToolkitSettings, "
            "customMpiSettings, horovodSettings.");
  EXPECT_NE(error_of(file(R"({"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT", "customToolkitSettings": {"commandLine": "a"},
                              "horovodSettings": {"pythonScriptFilePath": "a"}})"))
                .find("several toolkits"), std::string::npos);
  EXPECT_EQ(error_of(file(R"({"stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT", "customToolkitSettings": {"commandLine": "a"}})")),
            "validation error: Parameter 'JobCreateParameters.node_count' can not be None. "
            "Add \"nodeCount\" to the job configuration file.");
  EXPECT_NE(error_of(file(R"({"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT", "customToolkitSettings": {}})"))
                .find("'CustomToolkitSettings.command_line' can not be None"), std::string::npos);
  EXPECT_NE(error_of(file(R"({"nodeCount": 3.5, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT", "customToolkitSettings": {"commandLine": "a"}})"))
                .find("properties.nodeCount: 3.5 is not of type 'integer'"), std::string::npos);
  EXPECT_NE(error_of(file(R"({"nodeCount": 0, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT", "customToolkitSettings": {"commandLine": "a"}})"))
                .find("nodeCount must be at least 1"), std::string::npos);
  EXPECT_NE(error_of(file(R"({"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
                              "caffeSettings": {"configFilePath": "a", "pythonScriptFilePath": "b"}})"))
                .find("mutually exclusive"), std::string::npos);
  EXPECT_EQ(tool_type_from_name("CustomMPI"), ToolType::kCustomMpi);
  EXPECT_THROW(tool_type_from_name("keras"), InvalidArgument);
}

}  // namespace
}  // namespace batchai::runtime
