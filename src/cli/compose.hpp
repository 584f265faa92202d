// Composition root of the `batchai` executable: wires the concrete seams (settings from the
// environment, the process clock, the SQLite-backed control plane, the POSIX process launcher,
// the trainer and CUDA plugins' locations) into a CliContext. The only place that chooses
// implementations.
#pragma once
#include <filesystem>
#include <memory>

#include "cli_context.hpp"

namespace batchai::cli {

std::unique_ptr<CliContext> compose();

// In plugin_folder() of the running executable (/proc/self/exe), never a search path;
// $BATCHAI_CUDA_PLUGIN names another CUDA plugin. Paths only: nothing is loaded here.
PluginPaths locate_plugins();

// Where the plugins of an executable in <exe_dir> live: <exe_dir>/../lib/batchai when that folder
// exists (an install), else <exe_dir> itself (a build tree).
std::filesystem::path plugin_folder(const std::filesystem::path& exe_dir);

}  // namespace batchai::cli
