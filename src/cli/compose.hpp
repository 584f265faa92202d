// Composition root of the `batchai` executable: wires the concrete seams (settings from the
// environment, the process clock, the SQLite-backed control plane, the POSIX process launcher,
// the trainer and CUDA plugins' locations) into a CliContext. The only place that chooses
// implementations.
#pragma once
#include <memory>

#include "cli_context.hpp"

namespace batchai::cli {

std::unique_ptr<CliContext> compose();

// Beside the running executable (/proc/self/exe), never a search path; $BATCHAI_CUDA_PLUGIN
// names another CUDA plugin. Paths only: nothing is loaded here.
PluginPaths locate_plugins();

}  // namespace batchai::cli
