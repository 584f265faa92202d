// The command groups of the tree. Adding a group = one file commands/<group>_commands.cpp with
// register_<group>_commands(CLI::App&, CliContext&) plus one line in registry.cpp.
#pragma once
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_context.hpp"

namespace batchai::cli {

using RegisterFn = void (*)(CLI::App& parent, CliContext& ctx);

struct CommandGroup {
  const char* name;
  RegisterFn register_fn;
  bool batchai_group;  // part of `az batchai` (also reachable as `batchai batchai <group> ...`)
};

const std::vector<CommandGroup>& command_groups();

// Registers every group under `root`, plus the `batchai` alias group.
void register_all_commands(CLI::App& root, CliContext& ctx);

void register_group_commands(CLI::App& parent, CliContext& ctx);
void register_storage_commands(CLI::App& parent, CliContext& ctx);
void register_workspace_commands(CLI::App& parent, CliContext& ctx);
void register_experiment_commands(CLI::App& parent, CliContext& ctx);
void register_cluster_commands(CLI::App& parent, CliContext& ctx);
void register_file_server_commands(CLI::App& parent, CliContext& ctx);
void register_usage_commands(CLI::App& parent, CliContext& ctx);
void register_job_commands(CLI::App& parent, CliContext& ctx);
// Top level only: `_supervise` and `_rank-exec` (hidden), and `train`.
void register_hidden_job_commands(CLI::App& root, CliContext& ctx);
void register_train_command(CLI::App& root, CliContext& ctx);

}  // namespace batchai::cli
