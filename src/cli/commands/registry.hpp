// The command groups of the tree. Adding a group = one file commands/<group>_commands.cpp with
// register_<group>_commands(CLI::App& group, CliContext&), declared in commands/<group>_commands.hpp,
// plus one line (and that include) in registry.cpp. Only the groups a command line names are built
// in full; the others are their name and summary (what help and az's "did you mean" need), which
// keeps a command's start-up to what it uses.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_context.hpp"

namespace batchai::cli {

// Fills in a group (or, for a top-level command such as `list-usages`, adds it to its parent).
using RegisterFn = void (*)(CLI::App& target, CliContext& ctx);

struct CommandGroup {
  const char* name;
  const char* summary;
  RegisterFn register_fn;
  bool batchai_group;  // part of `az batchai` (also reachable as `batchai batchai <group> ...`)
  bool is_command;     // a command of its own at this level, not a group of commands
};

const std::vector<CommandGroup>& command_groups();

// Registers every group under `root`, plus the `batchai` alias group: in full those named among
// `words` (the command line's words), the others by name and summary only.
void register_all_commands(CLI::App& root, CliContext& ctx, const std::vector<std::string>& words);

}  // namespace batchai::cli
