// `batchai group ...` (group_commands.cpp): resource groups, as `az group` offers them.
#pragma once
#include <CLI/CLI.hpp>

#include "cli_context.hpp"

namespace batchai::cli {

void register_group_commands(CLI::App& group, CliContext& ctx);

}  // namespace batchai::cli
