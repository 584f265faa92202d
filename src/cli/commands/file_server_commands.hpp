// `batchai file-server ...` (file_server_commands.cpp).
#pragma once
#include <CLI/CLI.hpp>

#include "cli_context.hpp"

namespace batchai::cli {

void register_file_server_commands(CLI::App& group, CliContext& ctx);

}  // namespace batchai::cli
