// `batchai list-usages` (usage_commands.cpp).
#pragma once
#include <CLI/CLI.hpp>

#include "cli_context.hpp"

namespace batchai::cli {

void register_usage_commands(CLI::App& parent, CliContext& ctx);  // the command `list-usages`

}  // namespace batchai::cli
