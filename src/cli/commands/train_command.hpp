// `batchai train` (train_command.cpp): the built-in trainer, run through its plugin.
#pragma once
#include <CLI/CLI.hpp>

#include "cli_context.hpp"

namespace batchai::cli {

// Top level only.
void register_train_command(CLI::App& root, CliContext& ctx);

}  // namespace batchai::cli
