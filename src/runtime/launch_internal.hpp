// Helpers shared by the launch-plan sources (private to the runtime module).
#pragma once
#include <filesystem>
#include <map>
#include <string>

#include "batchai/runtime/launch_plan.hpp"

namespace batchai::runtime::detail {

struct NodeFolders {
  std::filesystem::path mount_root;       // $AZ_BATCHAI_MOUNT_ROOT
  std::filesystem::path job_temp_dir;     // $AZ_BATCHAI_JOB_TEMP_DIR
  std::filesystem::path job_temp;         // $AZ_BATCHAI_JOB_TEMP
  std::filesystem::path job_mount_root;   // $AZ_BATCHAI_JOB_MOUNT_ROOT
  std::filesystem::path shared_job_temp;  // $AZ_BATCHAI_SHARED_JOB_TEMP (the master node's)
};

std::string job_folder_name(const Json& job);
NodeFolders node_folders(const Json& job, const LaunchContext& context, std::size_t node);
// §4.8 variables that do not depend on the stdouterr folder, inputs, outputs or user values.
std::map<std::string, std::string> node_environment_base(const Json& job, const LaunchContext& context,
                                                         std::size_t node);
std::filesystem::path stdouterr_dir(const Json& job, const LaunchContext& context);
std::filesystem::path output_directory(const Json& out, const Json& job, const std::map<std::string, std::string>& env);

}  // namespace batchai::runtime::detail
