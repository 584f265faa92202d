// The list of command groups and the `batchai batchai ...` alias (for the `az` shim).
#include "commands/registry.hpp"

#include <algorithm>

#include "command.hpp"
#include "commands/cluster_commands.hpp"
#include "commands/experiment_commands.hpp"
#include "commands/file_server_commands.hpp"
#include "commands/group_commands.hpp"
#include "commands/hidden_job_commands.hpp"
#include "commands/job_commands.hpp"
#include "commands/serve_command.hpp"
#include "commands/storage_commands.hpp"
#include "commands/train_command.hpp"
#include "commands/usage_commands.hpp"
#include "commands/version_command.hpp"
#include "commands/workspace_commands.hpp"

namespace batchai::cli {

const std::vector<CommandGroup>& command_groups() {
  static const std::vector<CommandGroup> kGroups = {
      {"group", "Manage resource groups.", register_group_commands, false, false},
      {"storage", "Manage storage accounts, file shares and blob containers.", register_storage_commands, false, false},
      {"workspace", "Manage workspaces.", register_workspace_commands, true, false},
      {"experiment", "Manage experiments.", register_experiment_commands, true, false},
      {"cluster", "Manage clusters.", register_cluster_commands, true, false},
      {"file-server", "Manage file servers.", register_file_server_commands, true, false},
      {"list-usages", "Get current usage and limits of Batch AI resources in a region.", register_usage_commands, true,
       true},
      {"job", "Commands to manage jobs.", register_job_commands, true, false},
  };
  return kGroups;
}

namespace {

bool named(const std::vector<std::string>& words, const char* name) {
  return std::find(words.begin(), words.end(), name) != words.end();
}

void register_groups(CLI::App& parent, CliContext& ctx, const std::vector<std::string>& words, bool batchai_only) {
  for (const auto& group : command_groups()) {
    if (batchai_only && !group.batchai_group) continue;
    if (!named(words, group.name)) {
      parent.add_subcommand(group.name, group.summary);  // listed in help; never entered
    } else if (group.is_command) {
      group.register_fn(parent, ctx);
    } else {
      group.register_fn(add_group(parent, ctx, group.name, group.summary), ctx);
    }
  }
}

}  // namespace

void register_all_commands(CLI::App& root, CliContext& ctx, const std::vector<std::string>& words) {
  register_groups(root, ctx, words, false);
  CLI::App& alias = add_group(root, ctx, "batchai", "Manage Batch AI resources (az batchai compatible).");
  register_groups(alias, ctx, named(words, "batchai") ? words : std::vector<std::string>{}, true);
  register_hidden_job_commands(root, ctx);
  register_train_command(root, ctx);
  register_serve_command(root, ctx);
  register_version_command(root, ctx);
}

}  // namespace batchai::cli
