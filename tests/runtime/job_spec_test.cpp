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

// The control plane patches the file's mounts with its rules and hands them back: the document
// hides the key, the typed job sees the account.
TEST(JobSpec, PatchedMountsReplaceTheFilesInDocumentAndJob) {
  auto spec = build_job_spec(file(R"({"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
      "customToolkitSettings": {"commandLine": "true"},
      "mountVolumes": {"azureFileShares": [{"azureFileUrl": "https://x.file.core.windows.net/s", "relativeMountPath": "s"}]}})"),
                             identity());
  EXPECT_EQ(spec.document["mountVolumes"]["azureFileShares"][0]["accountName"], nullptr);
  Json mv = Json::parse(R"({"azureFileShares": [{"azureFileUrl": "https://x.file.core.windows.net/s",
      "relativeMountPath": "s", "accountName": "account", "credentials": {"accountKey": "key"}}]})");
  set_mount_volumes(spec, mv);
  const Json& share = spec.document["mountVolumes"]["azureFileShares"][0];
  EXPECT_EQ(share["accountName"], "account");
  EXPECT_EQ(share["credentials"], Json::parse(R"({"accountKey": null, "accountKeySecretReference": null})"));
  ASSERT_EQ(spec.job.mount_volumes.azure_file_shares.size(), 1u);
  EXPECT_EQ(spec.job.mount_volumes.azure_file_shares[0].account_name, "account");
  EXPECT_EQ(spec.job.mount_volumes.azure_file_shares[0].relative_mount_path, "s");
  EXPECT_EQ(spec.job.mount_volumes.azure_file_shares[0].file_mode, "0777");
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

// --- the typed job: parsed once from the document, read by fields everywhere after ---

Job typed(const std::string& toolkit_json, const std::string& extra = "") {
  return build_job_spec(file(R"({"nodeCount": 2, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/out", )" +
                             toolkit_json + extra + "}"),
                        identity())
      .job;
}

TEST(TypedJob, EveryToolkitKindHasItsSettings) {
  Job custom = typed(R"("customToolkitSettings": {"commandLine": "echo hi"})");
  EXPECT_EQ(custom.tool_type(), ToolType::kCustom);
  EXPECT_EQ(std::get<CustomToolkit>(custom.toolkit).command_line, "echo hi");
  EXPECT_EQ(custom.process_count(), 2);  // nodeCount: custom jobs have no processCount

  Job mpi = typed(R"("customMpiSettings": {"commandLine": "hostname", "processCount": 3})");
  EXPECT_EQ(mpi.tool_type(), ToolType::kCustomMpi);
  EXPECT_EQ(std::get<CustomMpiToolkit>(mpi.toolkit).command_line, "hostname");
  EXPECT_EQ(mpi.process_count(), 3);

  Job horovod = typed(R"("horovodSettings": {"pythonScriptFilePath": "t.py", "commandLineArgs": "--e 1"})");
  const auto& h = std::get<HorovodToolkit>(horovod.toolkit);
  EXPECT_EQ(h.script_file_path, "t.py");
  EXPECT_EQ(h.command_line_args, "--e 1");
  EXPECT_EQ(h.interpreter_path, "");
  EXPECT_EQ(h.process_count, 2);  // defaulted to nodeCount by the service

  Job cntk = typed(R"("cntkSettings": {"configFilePath": "c.cntk"})");
  EXPECT_EQ(std::get<CntkToolkit>(cntk.toolkit).language_type, "BrainScript");
  EXPECT_EQ(std::get<CntkToolkit>(cntk.toolkit).config_file_path, "c.cntk");

  Job tf = typed(R"("tensorFlowSettings": {"pythonScriptFilePath": "m.py", "workerCount": 2,
                     "masterCommandLineArgs": "--m", "workerCommandLineArgs": "--w", "parameterServerCommandLineArgs": "--p"})");
  const auto& t = std::get<TensorFlowToolkit>(tf.toolkit);
  EXPECT_EQ(t.worker_count, 2);
  EXPECT_EQ(t.parameter_server_count, std::nullopt);
  EXPECT_EQ(t.master_command_line_args + t.worker_command_line_args + t.parameter_server_command_line_args, "--m--w--p");

  Job caffe = typed(R"("caffeSettings": {"pythonScriptFilePath": "c.py", "pythonInterpreterPath": "/py"})");
  EXPECT_EQ(std::get<CaffeToolkit>(caffe.toolkit).interpreter_path, "/py");
  EXPECT_EQ(std::get<CaffeToolkit>(caffe.toolkit).config_file_path, "");
  EXPECT_EQ(typed(R"("caffe2Settings": {"pythonScriptFilePath": "c2.py"})").tool_type(), ToolType::kCaffe2);
  EXPECT_EQ(std::get<ChainerToolkit>(typed(R"("chainerSettings": {"pythonScriptFilePath": "c.py", "processCount": 4})").toolkit)
                .process_count, 4);
  Job torch = typed(R"("pyTorchSettings": {"pythonScriptFilePath": "p.py", "communicationBackend": "nccl"})");
  EXPECT_EQ(std::get<PyTorchToolkit>(torch.toolkit).communication_backend, "nccl");
}

TEST(TypedJob, CountsMountsEnvironmentSecretsConstraintsAndContainer) {
  Job job = typed(R"("customToolkitSettings": {"commandLine": "true"})", R"(,
      "constraints": {"maxWallClockTime": "PT2H30M"}, "schedulingPriority": "high",
      "jobPreparation": {"commandLine": "prep"},
      "environmentVariables": [{"name": "A", "value": "1"}], "secrets": [{"name": "S", "value": "v"}],
      "inputDirectories": [{"id": "IN", "path": "$AZ_BATCHAI_JOB_MOUNT_ROOT/in"}],
      "outputDirectories": [{"id": "OUT", "pathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/o", "pathSuffix": "s"}],
      "mountVolumes": {"unmanagedFileSystems": [{"mountCommand": "mount x", "relativeMountPath": "u"}],
                       "fileServers": [{"fileServer": {"id": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws/fileservers/f"},
                                        "relativeMountPath": "nfs", "sourceDirectory": "d"}]},
      "containerSettings": {"imageSourceRegistry": {"image": "ubuntu", "credentials": {"username": "u", "password": "p"}}})");
  EXPECT_EQ(job.name, "job");
  EXPECT_EQ(job.node_count, 2);
  EXPECT_EQ(job.max_wall_clock_time, "2:30:00");
  EXPECT_EQ(job.priority, "high");
  EXPECT_EQ(job.job_preparation, "prep");
  EXPECT_EQ(job.std_out_err_path_prefix, "$AZ_BATCHAI_JOB_MOUNT_ROOT/out");
  EXPECT_EQ(job.output_path_segment,
            "00000000-0000-0000-0000-000000000000/rg/workspaces/ws/experiments/exp/jobs/job/5fe2d959-0000-4000-8000-000000000000");
  ASSERT_EQ(job.environment_variables.size(), 1u);
  EXPECT_EQ(job.environment_variables[0].name + "=" + job.environment_variables[0].value, "A=1");
  EXPECT_EQ(job.secret_names, std::vector<std::string>{"S"});  // the value stays out of the job
  ASSERT_EQ(job.input_directories.size(), 1u);
  EXPECT_EQ(job.input_directories[0].path, "$AZ_BATCHAI_JOB_MOUNT_ROOT/in");
  ASSERT_EQ(job.output_directories.size(), 1u);
  EXPECT_EQ(job.output_directories[0].path_suffix, "s");
  ASSERT_EQ(job.mount_volumes.unmanaged_file_systems.size(), 1u);
  EXPECT_EQ(job.mount_volumes.unmanaged_file_systems[0].mount_command, "mount x");
  ASSERT_EQ(job.mount_volumes.file_servers.size(), 1u);
  EXPECT_EQ(job.mount_volumes.file_servers[0].source_directory, "d");
  EXPECT_NE(job.mount_volumes.file_servers[0].file_server_id.find("/fileservers/f"), std::string::npos);
  ASSERT_TRUE(job.container_settings.has_value());
  EXPECT_EQ(job.container_settings->image, "ubuntu");
  EXPECT_EQ(job.container_settings->username, "u");
  // Defaults where the file says nothing.
  Job plain = typed(R"("customToolkitSettings": {"commandLine": "true"})");
  EXPECT_EQ(plain.max_wall_clock_time, "7 days, 0:00:00");
  EXPECT_EQ(plain.priority, "normal");
  EXPECT_FALSE(plain.job_preparation.has_value());
  EXPECT_TRUE(plain.mount_volumes.empty());
  EXPECT_FALSE(plain.container_settings.has_value());
}

TEST(TypedJob, TheStoredDocumentReadsBackToTheSameJob) {
  auto spec = build_job_spec(file(R"({"nodeCount": 3, "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/x",
      "customMpiSettings": {"commandLine": "a"}})"), identity());
  Job again = parse_job(Json::parse(spec.document.dump()));  // as the supervisor reads the stored text
  EXPECT_EQ(again.process_count(), 3);
  EXPECT_EQ(std::get<CustomMpiToolkit>(again.toolkit).command_line, "a");
  EXPECT_EQ(again.output_path_segment, spec.job.output_path_segment);
}

TEST(TypedJob, DocumentsWithoutWhatEveryJobHasAreRefused) {
  Json doc = build_job_spec(file(R"({"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT",
      "customToolkitSettings": {"commandLine": "a"}})"), identity()).document;
  auto refused = [](Json d) {
    try {
      parse_job(d);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(refused(Json::array()), "the job document is not a JSON object");
  Json no_tool = doc;
  no_tool["toolType"] = "keras";
  EXPECT_NE(refused(no_tool).find("unknown toolType 'keras'"), std::string::npos);
  Json no_settings = doc;
  no_settings["customToolkitSettings"] = nullptr;
  EXPECT_EQ(refused(no_settings), "the job document has no customToolkitSettings");
  Json no_nodes = doc;
  no_nodes.erase("nodeCount");
  EXPECT_EQ(refused(no_nodes), "the job document has no nodeCount");
  Json no_segment = doc;
  no_segment["jobOutputDirectoryPathSegment"] = nullptr;
  EXPECT_NE(refused(no_segment).find("jobOutputDirectoryPathSegment"), std::string::npos);
}

}  // namespace
}  // namespace batchai::runtime
