// Logging to stderr in the Azure CLI's shape ("WARNING: ...", "ERROR: ..."), on top of spdlog.
// Command results never go through here: they go to stdout through the CLI's output layer.
#pragma once
#include <string_view>

namespace batchai::log {

enum class Verbosity { kErrorsOnly, kNormal, kVerbose, kDebug };

// Call once per process; default kNormal (warnings and errors).
void init(Verbosity verbosity);
void debug(std::string_view message);
void info(std::string_view message);
void warning(std::string_view message);
void error(std::string_view message);

}  // namespace batchai::log
