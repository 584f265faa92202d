// The list of command groups and the `batchai batchai ...` alias (for the `az` shim).
#include "commands/registry.hpp"

#include "command.hpp"

namespace batchai::cli {

const std::vector<CommandGroup>& command_groups() {
  static const std::vector<CommandGroup> kGroups = {
      {"group", register_group_commands, false},
      {"storage", register_storage_commands, false},
      {"workspace", register_workspace_commands, true},
      {"experiment", register_experiment_commands, true},
      {"cluster", register_cluster_commands, true},
      {"file-server", register_file_server_commands, true},
      {"list-usages", register_usage_commands, true},
      {"job", register_job_commands, true},
  };
  return kGroups;
}

void register_all_commands(CLI::App& root, CliContext& ctx) {
  for (const auto& group : command_groups()) group.register_fn(root, ctx);
  CLI::App& alias = add_group(root, ctx, "batchai", "Manage Batch AI resources (az batchai compatible).");
  for (const auto& group : command_groups()) {
    if (group.batchai_group) group.register_fn(alias, ctx);
  }
  register_hidden_job_commands(root, ctx);
  register_train_command(root, ctx);
}

}  // namespace batchai::cli
