// Job document -> typed Job: the one place that reads a stored job's keys.
#include "batchai/runtime/job.hpp"

#include "batchai/common/errors.hpp"
#include "batchai/runtime/job_spec.hpp"

namespace batchai::runtime {
namespace {

// Text at `key`, empty when absent, null or not a string (documents of older builds).
std::string text(const Json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_string() ? obj[key].get<std::string>() : std::string();
}

std::optional<int> integer(const Json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number_integer()) return std::nullopt;
  return obj[key].get<int>();
}

const Json& list(const Json& obj, const char* key) {
  static const Json kEmpty = Json::array();
  return obj.is_object() && obj.contains(key) && obj[key].is_array() ? obj[key] : kEmpty;
}

void read_script(const Json& s, PythonScript& p) {
  p.script_file_path = text(s, "pythonScriptFilePath");
  p.interpreter_path = text(s, "pythonInterpreterPath");
  p.command_line_args = text(s, "commandLineArgs");
}

// A Python toolkit's script settings, and its processCount when it has one.
template <class T>
T python_toolkit(const Json& s, int processes) {
  T t;
  read_script(s, t);
  if constexpr (requires { t.process_count; }) t.process_count = processes;
  return t;
}

Toolkit read_toolkit(ToolType type, const Json& s, int node_count) {
  const int processes = integer(s, "processCount").value_or(node_count);
  switch (type) {
    case ToolType::kCustom: return CustomToolkit{text(s, "commandLine")};
    case ToolType::kCustomMpi: return CustomMpiToolkit{text(s, "commandLine"), processes};
    case ToolType::kHorovod: return python_toolkit<HorovodToolkit>(s, processes);
    case ToolType::kChainer: return python_toolkit<ChainerToolkit>(s, processes);
    case ToolType::kCaffe2: return python_toolkit<Caffe2Toolkit>(s, processes);
    case ToolType::kCntk: {
      auto t = python_toolkit<CntkToolkit>(s, processes);
      t.language_type = text(s, "languageType");
      t.config_file_path = text(s, "configFilePath");
      return t;
    }
    case ToolType::kCaffe: {
      auto t = python_toolkit<CaffeToolkit>(s, processes);
      t.config_file_path = text(s, "configFilePath");
      return t;
    }
    case ToolType::kPyTorch: {
      auto t = python_toolkit<PyTorchToolkit>(s, processes);
      t.communication_backend = text(s, "communicationBackend");
      return t;
    }
    case ToolType::kTensorFlow: {
      auto t = python_toolkit<TensorFlowToolkit>(s, processes);
      t.master_command_line_args = text(s, "masterCommandLineArgs");
      t.worker_command_line_args = text(s, "workerCommandLineArgs");
      t.parameter_server_command_line_args = text(s, "parameterServerCommandLineArgs");
      t.worker_count = integer(s, "workerCount");
      t.parameter_server_count = integer(s, "parameterServerCount");
      return t;
    }
  }
  throw InvalidArgument("unknown toolkit");
}

}  // namespace

MountVolumes parse_mount_volumes(const Json& mv) {
  MountVolumes out;
  for (const auto& m : list(mv, "azureFileShares"))
    out.azure_file_shares.push_back({text(m, "accountName"), text(m, "azureFileUrl"), text(m, "relativeMountPath"),
                                     text(m, "fileMode"), text(m, "directoryMode")});
  for (const auto& m : list(mv, "azureBlobFileSystems"))
    out.azure_blob_file_systems.push_back(
        {text(m, "accountName"), text(m, "containerName"), text(m, "relativeMountPath"), text(m, "mountOptions")});
  for (const auto& m : list(mv, "fileServers"))
    out.file_servers.push_back({m.is_object() ? text(m.value("fileServer", Json()), "id") : std::string(),
                                text(m, "sourceDirectory"), text(m, "relativeMountPath"), text(m, "mountOptions")});
  for (const auto& m : list(mv, "unmanagedFileSystems"))
    out.unmanaged_file_systems.push_back({text(m, "mountCommand"), text(m, "relativeMountPath")});
  return out;
}

int Job::process_count() const {
  return std::visit(
      [this](const auto& t) {
        if constexpr (requires { t.process_count; }) return t.process_count;
        else return node_count;
      },
      toolkit);
}

Job parse_job(const Json& doc) {
  if (!doc.is_object()) throw InvalidArgument("the job document is not a JSON object");
  Job job;
  job.name = doc.value("name", Json()).is_string() ? doc["name"].get<std::string>() : std::string("job");
  const ToolType type = tool_type_from_name(text(doc, "toolType"));
  job.node_count = integer(doc, "nodeCount").value_or(0);
  if (job.node_count < 1) throw InvalidArgument("the job document has no nodeCount");
  const std::string key = settings_key(type);
  if (!doc.contains(key) || !doc[key].is_object()) throw InvalidArgument("the job document has no " + key);
  job.toolkit = read_toolkit(type, doc[key], job.node_count);
  job.cluster_id = doc.contains("cluster") ? text(doc["cluster"], "id") : std::string();
  job.std_out_err_path_prefix = text(doc, "stdOutErrPathPrefix");
  job.output_path_segment = text(doc, "jobOutputDirectoryPathSegment");
  if (job.std_out_err_path_prefix.empty() || job.output_path_segment.empty())
    throw InvalidArgument("the job document has no stdOutErrPathPrefix or jobOutputDirectoryPathSegment");
  if (doc.contains("constraints")) {
    const std::string wall = text(doc["constraints"], "maxWallClockTime");
    if (!wall.empty()) job.max_wall_clock_time = wall;
  }
  if (const std::string p = text(doc, "schedulingPriority"); !p.empty()) job.priority = p;
  if (doc.contains("jobPreparation") && doc["jobPreparation"].is_object())
    job.job_preparation = text(doc["jobPreparation"], "commandLine");
  job.mount_volumes = parse_mount_volumes(doc.value("mountVolumes", Json()));
  for (const auto& v : list(doc, "environmentVariables"))
    job.environment_variables.push_back({text(v, "name"), text(v, "value")});
  for (const auto& s : list(doc, "secrets")) job.secret_names.push_back(text(s, "name"));
  for (const auto& d : list(doc, "inputDirectories")) job.input_directories.push_back({text(d, "id"), text(d, "path")});
  for (const auto& d : list(doc, "outputDirectories"))
    job.output_directories.push_back({text(d, "id"), text(d, "pathPrefix"), text(d, "pathSuffix")});
  if (doc.contains("containerSettings") && doc["containerSettings"].is_object()) {
    const Json& c = doc["containerSettings"];
    const Json registry = c.value("imageSourceRegistry", Json());
    const Json credentials = registry.is_object() ? registry.value("credentials", Json()) : Json();
    job.container_settings =
        ContainerSettings{text(registry, "image"), text(registry, "serverUrl"), text(credentials, "username"),
                          text(c, "shmSize")};
  }
  return job;
}

}  // namespace batchai::runtime
