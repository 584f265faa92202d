// `batchai version` (the shape of `az version`) and `batchai --version`: this build's version and
// commit, and which plugins and backends this installation has (version_command.cpp).
#pragma once
#include <string>

#include <CLI/CLI.hpp>

#include "batchai/common/json_util.hpp"
#include "cli_context.hpp"

namespace batchai::cli {

// Top level only.
void register_version_command(CLI::App& root, CliContext& ctx);

// {"batchai": version, "commit": ..., "extensions": {}, "plugins": {...}, "backends": {...}}.
Json version_document(CliContext& ctx);

// The same, as the lines `batchai --version` prints.
std::string version_text(CliContext& ctx);

}  // namespace batchai::cli
