// `batchai storage ...` (storage_commands.cpp): the az storage commands the tutorial uses.
#pragma once
#include <CLI/CLI.hpp>

#include "cli_context.hpp"

namespace batchai::cli {

void register_storage_commands(CLI::App& group, CliContext& ctx);

}  // namespace batchai::cli
