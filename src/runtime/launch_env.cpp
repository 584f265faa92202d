// Per-node job environment (docs/job-runtime.md §4.8), on-node folders (§4.7) and $VAR expansion.
#include "launch_env.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "batchai/common/errors.hpp"
#include "batchai/runtime/node_dir.hpp"

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

namespace {

// The folders without stdouterr (which is computed from them).
NodeFolders base_folders(const Job& job, const LaunchContext& context, std::size_t node) {
  const NodeDir dir(context.nodes.at(node).dir);
  NodeFolders f;
  f.root = dir.root();
  f.mount_root = dir.mounts();
  f.job_temp_dir = dir.jobs();
  f.job_temp = dir.job(job.name);
  f.job_mount_root = dir.job_mounts(job.name);
  // One folder for all the job's nodes (a rendezvous store): the master node's.
  f.shared_job_temp = NodeDir(context.nodes.at(0).dir).job_shared(job.name);
  return f;
}

// docs/job-runtime.md §4.8 variables that do not depend on the stdouterr folder, inputs, outputs or user values.
std::map<std::string, std::string> node_environment_base(const Job& job, const LaunchContext& context,
                                                         std::size_t node) {
  NodeFolders f = base_folders(job, context, node);
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

std::filesystem::path stdouterr_dir(const Job& job, const LaunchContext& context) {
  auto env = node_environment_base(job, context, 0);
  return std::filesystem::path(expand_env_vars(job.std_out_err_path_prefix, env)) / job.output_path_segment /
         "stdouterr";
}

std::filesystem::path output_directory(const OutputDirectory& out, const Job& job,
                                       const std::map<std::string, std::string>& env) {
  std::filesystem::path p = expand_env_vars(out.path_prefix, env);
  p /= job.output_path_segment;
  p /= "outputs";
  if (!out.path_suffix.empty()) p /= expand_env_vars(out.path_suffix, env);
  return p;
}

}  // namespace

NodeFolders node_folders(const Job& job, const LaunchContext& context, std::size_t node) {
  NodeFolders f = base_folders(job, context, node);
  f.stdouterr = stdouterr_dir(job, context);
  return f;
}

std::map<std::string, std::string> node_environment(const Job& job, const LaunchContext& context, std::size_t node) {
  if (node >= context.nodes.size()) throw InvalidArgument("node index out of range for this job");
  auto env = node_environment_base(job, context, node);
  env["AZ_BATCHAI_STDOUTERR_DIR"] = stdouterr_dir(job, context).string();
  for (const auto& in : job.input_directories) env["AZ_BATCHAI_INPUT_" + in.id] = expand_env_vars(in.path, env);
  const auto outputs_base = env;
  for (const auto& out : job.output_directories)
    env["AZ_BATCHAI_OUTPUT_" + out.id] = output_directory(out, job, outputs_base).string();
  // User variables (their values may reference the variables above), then secrets.
  const auto user_base = env;
  for (const auto& v : job.environment_variables) env[v.name] = expand_env_vars(v.value, user_base);
  for (const auto& [name, value] : context.secrets) env[name] = value;
  return env;
}

}  // namespace batchai::runtime
