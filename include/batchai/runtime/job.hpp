// The typed job: a stored Job document (what build_job_spec produced and `job show` prints) read
// once into fields, so the launch plan, the supervisor and the job service never look up JSON
// keys. The document stays the stored form; this is what the program works with.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "batchai/common/json_util.hpp"

namespace batchai::runtime {

enum class ToolType { kCustom, kCustomMpi, kHorovod, kCntk, kTensorFlow, kCaffe, kCaffe2, kChainer, kPyTorch };

// What the Python toolkits share: the script, its interpreter and its arguments (shell text).
struct PythonScript {
  std::string script_file_path;     // pythonScriptFilePath
  std::string interpreter_path;     // pythonInterpreterPath ("" = python3)
  std::string command_line_args;    // commandLineArgs
};

struct CustomToolkit {
  std::string command_line;
};
struct CustomMpiToolkit {
  std::string command_line;
  int process_count = 1;
};
struct HorovodToolkit : PythonScript {
  int process_count = 1;
};
struct ChainerToolkit : PythonScript {
  int process_count = 1;
};
struct CntkToolkit : PythonScript {
  std::string language_type;     // "BrainScript" or "Python"
  std::string config_file_path;  // BrainScript
  int process_count = 1;
};
struct CaffeToolkit : PythonScript {
  std::string config_file_path;  // exclusive with script_file_path
  int process_count = 1;
};
struct Caffe2Toolkit : PythonScript {};
struct PyTorchToolkit : PythonScript {
  std::string communication_backend;  // "" = gloo
  int process_count = 1;
};
struct TensorFlowToolkit : PythonScript {  // command_line_args unused: per-role arguments below
  std::string master_command_line_args;
  std::string worker_command_line_args;
  std::string parameter_server_command_line_args;
  std::optional<int> worker_count;            // nodeCount when unset
  std::optional<int> parameter_server_count;  // 1 with several workers, else 0, when unset
};

// One alternative per toolType, in the order of the ToolType enum (index() is the ToolType).
using Toolkit = std::variant<CustomToolkit, CustomMpiToolkit, HorovodToolkit, CntkToolkit, TensorFlowToolkit,
                             CaffeToolkit, Caffe2Toolkit, ChainerToolkit, PyTorchToolkit>;

struct AzureFileShareMount {
  std::string account_name;
  std::string azure_file_url;
  std::string relative_mount_path;
  std::string file_mode;
  std::string directory_mode;
};
struct AzureBlobMount {
  std::string account_name;
  std::string container_name;
  std::string relative_mount_path;
  std::string mount_options;
};
struct FileServerMount {
  std::string file_server_id;  // ARM id
  std::string source_directory;
  std::string relative_mount_path;
  std::string mount_options;
};
struct UnmanagedMount {
  std::string mount_command;
  std::string relative_mount_path;
};
struct MountVolumes {
  std::vector<AzureFileShareMount> azure_file_shares;
  std::vector<AzureBlobMount> azure_blob_file_systems;
  std::vector<FileServerMount> file_servers;
  std::vector<UnmanagedMount> unmanaged_file_systems;
  bool empty() const {
    return azure_file_shares.empty() && azure_blob_file_systems.empty() && file_servers.empty() &&
           unmanaged_file_systems.empty();
  }
};

struct NameValue {
  std::string name;
  std::string value;
};
struct InputDirectory {
  std::string id;
  std::string path;
};
struct OutputDirectory {
  std::string id;
  std::string path_prefix;
  std::string path_suffix;
};
struct ContainerSettings {
  std::string image;
  std::string server_url;
  std::string username;
  std::string shm_size;
};

struct Job {
  std::string name;
  Toolkit toolkit;
  int node_count = 1;
  std::string cluster_id;
  std::string std_out_err_path_prefix;           // $AZ_BATCHAI_... relative, checked at create
  std::string output_path_segment;               // jobOutputDirectoryPathSegment
  std::string max_wall_clock_time = "7 days, 0:00:00";  // constraints.maxWallClockTime (timedelta text)
  std::string priority = "normal";               // schedulingPriority: low, normal, high
  std::optional<std::string> job_preparation;    // jobPreparation.commandLine
  MountVolumes mount_volumes;                    // job-level mounts ($AZ_BATCHAI_JOB_MOUNT_ROOT)
  std::vector<NameValue> environment_variables;  // values may reference the job's variables
  std::vector<std::string> secret_names;         // values live apart (JobSpec::secrets)
  std::vector<InputDirectory> input_directories;
  std::vector<OutputDirectory> output_directories;
  std::optional<ContainerSettings> container_settings;  // the job runs in this image (Podman)

  ToolType tool_type() const { return static_cast<ToolType>(toolkit.index()); }
  // Processes of MPI-style toolkits (processCount; nodeCount when the toolkit has none).
  int process_count() const;
};

// Reads a Job document (build_job_spec's output, or one stored by an older build) into fields.
// InvalidArgument when it lacks what every job has (toolType and its settings, nodeCount,
// stdOutErrPathPrefix, jobOutputDirectoryPathSegment).
Job parse_job(const Json& document);

// A mountVolumes object (wire form or the document's) read into fields; missing lists are empty.
MountVolumes parse_mount_volumes(const Json& mount_volumes);

}  // namespace batchai::runtime
