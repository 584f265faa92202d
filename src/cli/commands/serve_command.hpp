// `batchai serve` (serve_command.cpp): the ARM REST API on this machine, run through its plugin
// libbatchai_serve.so (batchai/serve/serve_plugin.hpp; docs/serve.md).
#pragma once
#include <CLI/CLI.hpp>

#include "cli_context.hpp"

namespace batchai::cli {

// Top level only.
void register_serve_command(CLI::App& root, CliContext& ctx);

}  // namespace batchai::cli
