// The hidden commands the job machinery runs itself, `_supervise` and `_rank-exec`
// (hidden_job_commands.cpp).
#pragma once
#include <CLI/CLI.hpp>

#include "cli_context.hpp"

namespace batchai::cli {

// Top level only: `_supervise` and `_rank-exec` (hidden).
void register_hidden_job_commands(CLI::App& root, CliContext& ctx);

}  // namespace batchai::cli
