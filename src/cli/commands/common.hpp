// Helpers shared by the command files: the -g/-w options with their configured defaults,
// --ids resolution into (resource group, workspace, name), and the StorageAuth of data-plane
// storage commands.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/errors.hpp"
#include "batchai/control_plane/control_plane.hpp"
#include "command.hpp"

namespace batchai::cli {

inline constexpr const char* kDefaultGroupEnv = "AZURE_DEFAULTS_GROUP";
inline constexpr const char* kDefaultLocationEnv = "AZURE_DEFAULTS_LOCATION";

// --resource-group/-g, required unless configured (AZURE_DEFAULTS_GROUP).
Command& add_resource_group(Command& command, bool required = true, bool by_ids = false);
// --workspace/-w.
Command& add_workspace(Command& command, bool by_ids = false);

struct Target {
  control_plane::WorkspaceRef where;
  std::string name;
};

// One target per --ids entry (ARM ids whose `type` segment names the resource), else the one
// given by -g/-w and `name_key`. For workspaces (`type` "workspaces") where.workspace == name.
std::vector<Target> targets(const Args& args, const std::string& name_key, const std::string& type);

// Runs `fn` for every target: nothing, one result, or a list of results.
std::optional<Json> for_each_target(const std::vector<Target>& all,
                                    const std::function<std::optional<Json>(const Target&)>& fn);

control_plane::WorkspaceRef workspace_ref(const Args& args);

// A required option, optionally in help group `group`.
OptionSpec required(const std::string& group = {});
// An option in help group `group` ("Nodes", "Admin Account", ...); `integer` rejects non-numbers.
OptionSpec in_group(const char* group, bool integer = false);
// A required name option that --ids may replace (show/delete/... of one resource).
OptionSpec name_by_ids();

// --storage-account-name/-key, --afs-*, --bfs-*, --nfs* of `cluster create` and `job create`;
// `when` ends the help of the mounted volumes ("on each node", "during the job").
// --config-file: the file read as the request's document (nullopt when the option is not given).
std::optional<Json> config_document(const Args& args);
[[noreturn]] void throw_naming_config_file(const Args& args, const InvalidArgument& e);
// Runs a create whose document came from --config-file: the control plane's "The <what>
// configuration has a value of the wrong type ..." names the file, as the original does.
template <typename Create>
auto naming_config_file(const Args& args, Create&& create) {
  try {
    return create();
  } catch (const InvalidArgument& e) {
    throw_naming_config_file(args, e);
  }
}

Command& add_mount_options(Command& command, const std::string& when);
control_plane::MountOptions mount_options(const Args& args);

// --node-id/-n, --exec, --address/-L, --password/-p, --ssh-private-key/-k of `cluster node exec`
// and `job node exec`; `node_help` says which node is the default. Ctrl-C ends them with 0.
Command& add_node_exec_options(Command& command, const std::string& node_help);
control_plane::NodeExecOptions node_exec_options(const Args& args);

// --account-name/--account-key of the data-plane storage commands.
Command& add_storage_auth(Command& command);
control_plane::StorageAuth storage_auth(const Args& args);

}  // namespace batchai::cli
