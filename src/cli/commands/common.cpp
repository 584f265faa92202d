// Shared option helpers and --ids resolution.
#include "commands/common.hpp"

#include <cstdlib>
#include <utility>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"

namespace batchai::cli {

Command& add_resource_group(Command& command, bool required, bool by_ids) {
  OptionSpec spec;
  spec.required = required;
  spec.replaced_by_ids = by_ids;
  spec.env = kDefaultGroupEnv;
  spec.group = by_ids ? "Resource Id Arguments" : "";
  return command.option("--resource-group,-g", "Name of resource group.", spec);
}

Command& add_workspace(Command& command, bool by_ids) {
  OptionSpec spec;
  spec.required = true;
  spec.replaced_by_ids = by_ids;
  spec.group = by_ids ? "Resource Id Arguments" : "";
  return command.option("--workspace,-w", "Name of workspace.", spec);
}

std::vector<Target> targets(const Args& args, const std::string& name_key, const std::string& type) {
  std::vector<Target> out;
  for (const auto& id : args.all("ids")) {
    auto parsed = parse_arm_id(id);
    std::optional<std::string> name = parsed ? parsed->name_of(type) : std::nullopt;
    std::optional<std::string> workspace = parsed ? parsed->name_of("workspaces") : std::nullopt;
    if (!name || !workspace) {
      throw InvalidArgument("The --ids value '" + id + "' is not a valid " + type +
                            " resource id. Use /subscriptions/{sub}/resourceGroups/{rg}/providers/"
                            "Microsoft.BatchAI/workspaces/{ws}/... as printed by the show command.");
    }
    out.push_back({{parsed->resource_group, *workspace}, *name});
  }
  if (!out.empty()) return out;
  Target t;
  t.where.resource_group = args.str("resource-group");
  t.name = args.str(name_key);
  t.where.workspace = type == "workspaces" ? t.name : args.str("workspace");
  out.push_back(std::move(t));
  return out;
}

std::optional<Json> for_each_target(const std::vector<Target>& all,
                                    const std::function<std::optional<Json>(const Target&)>& fn) {
  if (all.size() == 1) return fn(all.front());
  Json list = Json::array();
  bool any = false;
  for (const auto& t : all) {
    if (auto r = fn(t)) {
      list.push_back(std::move(*r));
      any = true;
    }
  }
  return any ? std::optional<Json>(list) : std::nullopt;
}

control_plane::WorkspaceRef workspace_ref(const Args& args) {
  return {args.str("resource-group"), args.str("workspace")};
}

Command& add_storage_auth(Command& command) {
  OptionSpec name;
  name.required = true;
  name.env = "AZURE_STORAGE_ACCOUNT";
  name.group = "Storage Account";
  OptionSpec key;
  key.env = "AZURE_STORAGE_KEY";
  key.group = "Storage Account";
  return command.option("--account-name", "Storage account name.", name)
      .option("--account-key", "Storage account key.", key);
}

control_plane::StorageAuth storage_auth(const Args& args) {
  return {args.str("account-name"), args.get("account-key")};
}

OptionSpec required(const std::string& group) {
  OptionSpec s;
  s.required = true;
  s.group = group;
  return s;
}

OptionSpec in_group(const char* group, bool integer) {
  OptionSpec s;
  s.group = group;
  s.integer = integer;
  return s;
}

OptionSpec name_by_ids() {
  OptionSpec s = required("Resource Id Arguments");
  s.replaced_by_ids = true;
  return s;
}

Command& add_node_exec_options(Command& command, const std::string& node_help) {
  OptionSpec forwards;
  forwards.repeatable = true;
  return command.exit_zero_on_interrupt()
      .option("--node-id,-n", node_help)
      .option("--exec", "Optional command line to be executed on the node.")
      .option("--address,-L",
              "Port forwarding localport:remotehost:remoteport (repeatable): listens on 0.0.0.0:localport "
              "(0: a free port) for as long as --exec runs, or until Ctrl-C without it.",
              forwards)
      .option("--password,-p", "Optional password to establish SSH connection.")
      .option("--ssh-private-key,-k", "Optional SSH private key path.");
}

control_plane::NodeExecOptions node_exec_options(const Args& a) {
  return {a.get("node-id"), a.get("exec"), a.all("address"), a.get("password"), a.get("ssh-private-key")};
}

Command& add_mount_options(Command& c, const std::string& when) {
  auto in = [](const char* group, const char* default_value = "") {
    OptionSpec spec;
    spec.group = group;
    spec.default_value = default_value;
    return spec;
  };
  return c
      .option("--storage-account-name", "Storage account name for Azure File shares and/or Blob containers.",
              in("Azure Storage Mount"))
      .option("--storage-account-key", "Storage account key.", in("Azure Storage Mount"))
      .option("--afs-name", "Name of the Azure File share to mount " + when + ".", in("Azure Storage Mount"))
      .option("--afs-mount-path", "Relative mount path for the Azure File share.", in("Azure Storage Mount", "afs"))
      .option("--bfs-name", "Name of the Azure Blob container to mount " + when + ".", in("Azure Storage Mount"))
      .option("--bfs-mount-path", "Relative mount path for the Azure Blob container.", in("Azure Storage Mount", "bfs"))
      .option("--nfs", "Name or ARM ID of the file server to mount " + when + ".", in("File Server Mount"))
      .option("--nfs-mount-path", "Relative mount path for the file server.", in("File Server Mount", "nfs"));
}

std::optional<Json> config_document(const Args& args) {
  const auto path = args.get("config-file");
  if (!path) return std::nullopt;
  return load_json_file(*path);
}

void throw_naming_config_file(const Args& args, const InvalidArgument& e) {
  const auto path = args.get("config-file");
  const std::string message = e.what();
  const std::string phrase = " configuration has a value of the wrong type";
  const auto at = message.find(phrase);
  if (!path || at == std::string::npos) throw e;
  throw InvalidArgument(message.substr(0, at) + " configuration file '" + *path + "' has a value of the wrong type" +
                            message.substr(at + phrase.size()),
                        e.code());
}

control_plane::MountOptions mount_options(const Args& a) {
  control_plane::MountOptions m;
  m.storage_account_name = a.get("storage-account-name");
  m.storage_account_key = a.get("storage-account-key");
  m.afs_name = a.get("afs-name");
  m.afs_mount_path = a.str("afs-mount-path");
  m.bfs_name = a.get("bfs-name");
  m.bfs_mount_path = a.str("bfs-mount-path");
  m.nfs = a.get("nfs");
  m.nfs_mount_path = a.str("nfs-mount-path");
  // As az: the placeholders of mounts fall back to the caller's environment (not a server's).
  for (auto [name, field] : {std::pair{"AZURE_BATCHAI_STORAGE_ACCOUNT", &m.environment_account_name},
                             std::pair{"AZURE_BATCHAI_STORAGE_KEY", &m.environment_account_key}})
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') *field = v;
  return m;
}

}  // namespace batchai::cli
