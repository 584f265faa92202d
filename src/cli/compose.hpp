// Composition root of the `batchai` executable: wires the concrete seams (settings from the
// environment, the process clock, the SQLite-backed control plane, the POSIX process launcher)
// into a CliContext. The only place that chooses implementations.
#pragma once
#include <memory>

#include "cli_context.hpp"

namespace batchai::cli {

std::unique_ptr<CliContext> compose();

}  // namespace batchai::cli
