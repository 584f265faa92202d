#include "node_mounts.hpp"
#include "setup_task.hpp"

#include <csignal>
#include <fstream>

#include "batchai/common/log.hpp"
#include "batchai/runtime/node_dir.hpp"
#include "mount_rules.hpp"
#include "node_folders.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane::simulated {

using namespace detail;

namespace {

// The setup task's output folder on a node: {prefix with the mount root expanded}/{suffix}.
fs::path setup_output_dir(const Json& task, const fs::path& node) {
  std::string prefix =
      expand_mount_root(value_or<std::string>(task, "stdOutErrPathPrefix", ""), runtime::NodeDir(node).mounts());
  return fs::path(prefix) / value_or<std::string>(task, "stdOutErrPathSuffix", "");
}

}  // namespace

bool mount_node(const NodeLayout& layout, const Json& doc, const fs::path& node) {
  try {
    ensure_node_folder(layout, doc, node);
    return true;
  } catch (const Error& e) {
    std::ofstream(node / ".mount_error") << e.what() << "\n";
    log::warning("Cannot prepare node " + node.filename().string() + ": " + e.what());
    return false;
  }
}

void spawn_setup_task(ProcessLauncher& launcher, const ClusterRow& c, const std::string& node_id, const fs::path& node) {
  const Json& task = c.doc["nodeSetup"]["setupTask"];
  ProcessSpec spec;
  // The node's environment, as for jobs: never the environment of whoever ran the command.
  spec.clear_env = true;
  spec.env = node_base_environment();
  for (auto& [k, v] : node_mount_environment(node)) spec.env[k] = v;
  spec.env["AZ_BATCHAI_STDOUTERR_DIR"] = setup_output_dir(task, node).string();
  if (task.contains("environmentVariables") && task["environmentVariables"].is_array())
    for (const auto& v : task["environmentVariables"])
      spec.env[value_or<std::string>(v, "name", "")] = value_or<std::string>(v, "value", "");
  if (c.private_data.contains("setupSecrets"))
    for (const auto& v : c.private_data["setupSecrets"])
      spec.env[value_or<std::string>(v, "name", "")] = value_or<std::string>(v, "value", "");
  spec.env["BATCHAI_SETUP_COMMAND"] = value_or<std::string>(task, "commandLine", "");
  spec.env["BATCHAI_NODE_ID"] = node_id;
  // The exit code lands in .setup_exit atomically; reconcile reads it.
  spec.argv = {"sh", "-c",
               "mkdir -p \"$AZ_BATCHAI_STDOUTERR_DIR\" && "
               "bash -c \"$BATCHAI_SETUP_COMMAND\" >\"$AZ_BATCHAI_STDOUTERR_DIR/stdout-$BATCHAI_NODE_ID.txt\" "
               "2>\"$AZ_BATCHAI_STDOUTERR_DIR/stderr-$BATCHAI_NODE_ID.txt\"; "
               "echo $? >.setup_exit.tmp && mv .setup_exit.tmp .setup_exit"};
  spec.cwd = node;
  spec.stdout_file = node / ".setup_cmd";
  spec.stderr_file = node / ".setup_cmd";
  const pid_t pid = launcher.spawn_detached(spec);  // a session (and group) leader
  std::ofstream(node / ".setup_pid") << pid << "\n";
}

void stop_setup_task(ProcessLauncher& launcher, const fs::path& node) {
  std::error_code ec;
  if (fs::exists(node / ".setup_exit", ec)) return;  // finished
  long pid = 0;
  if (!(std::ifstream(node / ".setup_pid") >> pid) || pid <= 1) return;
  const fs::path cwd = fs::read_symlink("/proc/" + std::to_string(pid) + "/cwd", ec);
  if (ec || cwd != fs::canonical(node, ec) || ec) return;  // gone, or the pid belongs to someone else now
  launcher.signal_group(static_cast<pid_t>(pid), SIGKILL);
}

}  // namespace batchai::control_plane::simulated
