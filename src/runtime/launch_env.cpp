// Per-node job environment (spec §4.8), on-node folders (§4.7) and $VAR expansion.
#include <algorithm>
#include <cctype>

#include "batchai/common/errors.hpp"
#include "batchai/runtime/launch_plan.hpp"
#include "launch_internal.hpp"

namespace batchai::runtime {

std::string expand_env_vars(std::string_view text, const std::map<std::string, std::string>& env) {
  auto is_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    std::size_t start = i + 1;
    std::size_t end = start;
    bool braced = text[start] == '{';
    if (braced) {
      end = text.find('}', start);
      if (end == std::string_view::npos) {
        out += text.substr(i);
        break;
      }
    } else {
      while (end < text.size() && is_name(text[end])) ++end;
    }
    std::string name(text.substr(braced ? start + 1 : start, end - (braced ? start + 1 : start)));
    auto it = env.find(name);
    if (name.empty() || it == env.end()) {
      out += text.substr(i, (braced ? end + 1 : end) - i);  // unknown: keep as written
    } else {
      out += it->second;
    }
    i = (braced ? end + 1 : end) - 1;
  }
  return out;
}

namespace detail {

std::string job_folder_name(const Json& job) { return job.value("name", std::string("job")); }

NodeFolders node_folders(const Json& job, const LaunchContext& context, std::size_t node) {
  const auto& dir = context.nodes.at(node).dir;
  NodeFolders f;
  f.mount_root = dir / "mounts";
  f.job_temp_dir = dir / "jobs";
  f.job_temp = f.job_temp_dir / job_folder_name(job);
  f.job_mount_root = f.job_temp / "mounts";
  // One folder for all the job's nodes (a rendezvous store): the master node's.
  f.shared_job_temp = context.nodes.at(0).dir / "jobs" / job_folder_name(job) / "shared";
  return f;
}

std::filesystem::path stdouterr_dir(const Json& job, const LaunchContext& context) {
  auto env = node_environment_base(job, context, 0);
  std::string prefix = expand_env_vars(job.at("stdOutErrPathPrefix").get<std::string>(), env);
  return std::filesystem::path(prefix) / job.at("jobOutputDirectoryPathSegment").get<std::string>() / "stdouterr";
}

std::map<std::string, std::string> node_environment_base(const Json& job, const LaunchContext& context,
                                                         std::size_t node) {
  NodeFolders f = node_folders(job, context, node);
  std::map<std::string, std::string> env = context.base_env;  // the node's, never the submitter's
  env["AZ_BATCHAI_MOUNT_ROOT"] = f.mount_root.string();
  env["AZ_BATCHAI_JOB_MOUNT_ROOT"] = f.job_mount_root.string();
  env["AZ_BATCHAI_JOB_TEMP_DIR"] = f.job_temp_dir.string();
  env["AZ_BATCHAI_JOB_TEMP"] = f.job_temp.string();
  env["AZ_BATCHAI_SHARED_JOB_TEMP"] = f.shared_job_temp.string();
  env["AZ_BATCHAI_MPI_HOST_FILE"] = (f.shared_job_temp / "hostfile").string();
  env["AZ_BATCHAI_NUM_GPUS"] = std::to_string(context.nodes.at(node).gpus);
  std::string hosts;
  for (const auto& n : context.nodes) hosts += (hosts.empty() ? "" : ",") + n.host;
  env["AZ_BATCH_HOST_LIST"] = hosts;
  env["AZ_BATCHAI_MPI_MASTER_NODE"] = context.nodes.at(0).host;
  if (!context.self_executable.empty()) env["BATCHAI_TRAIN"] = context.self_executable.string();
  return env;
}

std::filesystem::path output_directory(const Json& out, const Json& job, const std::map<std::string, std::string>& env) {
  std::filesystem::path p = expand_env_vars(out.at("pathPrefix").get<std::string>(), env);
  p /= job.at("jobOutputDirectoryPathSegment").get<std::string>();
  p /= "outputs";
  std::string suffix = out.value("pathSuffix", Json()).is_string() ? out["pathSuffix"].get<std::string>() : "";
  if (!suffix.empty()) p /= expand_env_vars(suffix, env);
  return p;
}

}  // namespace detail

std::map<std::string, std::string> node_environment(const Json& job, const LaunchContext& context, std::size_t node) {
  if (node >= context.nodes.size()) throw InvalidArgument("node index out of range for this job");
  auto env = detail::node_environment_base(job, context, node);
  env["AZ_BATCHAI_STDOUTERR_DIR"] = detail::stdouterr_dir(job, context).string();
  if (job.contains("inputDirectories") && job["inputDirectories"].is_array()) {
    for (const auto& in : job["inputDirectories"]) {
      env["AZ_BATCHAI_INPUT_" + in.at("id").get<std::string>()] = expand_env_vars(in.at("path").get<std::string>(), env);
    }
  }
  if (job.contains("outputDirectories") && job["outputDirectories"].is_array()) {
    const auto base = env;
    for (const auto& out : job["outputDirectories"]) {
      env["AZ_BATCHAI_OUTPUT_" + out.at("id").get<std::string>()] = detail::output_directory(out, job, base).string();
    }
  }
  // User variables (their values may reference the variables above), then secrets.
  if (job.contains("environmentVariables") && job["environmentVariables"].is_array()) {
    const auto base = env;
    for (const auto& v : job["environmentVariables"]) {
      env[v.at("name").get<std::string>()] = expand_env_vars(v.value("value", std::string()), base);
    }
  }
  for (const auto& [name, value] : context.secrets) env[name] = value;
  return env;
}

}  // namespace batchai::runtime
