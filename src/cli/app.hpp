// The `batchai` command line from argv to exit code: builds the command tree, parses, runs the
// chosen command, renders its result, and maps errors to the exit codes of docs/output.md §2.5
// (0 ok, 1 error, 2 usage error, 3 `show` of a missing resource).
#pragma once
#include "cli_context.hpp"

namespace batchai::cli {

// Composes the real dependencies (compose.cpp) and runs.
int run(int argc, char** argv);

}  // namespace batchai::cli
