// `batchai workspace ...` (workspace_commands.cpp).
#pragma once
#include <CLI/CLI.hpp>

#include "cli_context.hpp"

namespace batchai::cli {

void register_workspace_commands(CLI::App& group, CliContext& ctx);

}  // namespace batchai::cli
