// Reads argv the way az's tree of argparse parsers reads it, before CLI11 sees it: the command
// path, misspelled commands (with az's "most similar choice"), and each leaf's options by its own
// argparse table (argparse_compat.hpp). What it accepts is handed to CLI11 in a canonical form
// (`--long-name=value`, one per value kept) that CLI11 reads the same in every case.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_context.hpp"

namespace batchai::cli {

struct Prepass {
  enum class Outcome {
    kParse,            // CLI11 parses `argv`
    kUsageError,       // argparse refused: usage of `app`, then "<prog>: error: <message>", exit 2
    kCommandNotFound,  // az's _check_value for a command name: "ERROR: <message>", `hint`, exit 2
  };
  Outcome outcome = Outcome::kParse;
  std::vector<std::string> argv;  // argv[0] first
  std::vector<std::string> verbatim;  // ArgumentStyle::kVerbatim: the words after the command name
  const CLI::App* app = nullptr;
  std::string message;
  // kCommandNotFound: what az prints after its error line when some command name is close:
  // "\nThe most similar choice to 'x' is:\n\t<name>\n" (difflib, best first); else empty.
  std::string hint;
};

Prepass prepass(const CLI::App& root, const CliContext& ctx, int argc, const char* const* argv);

// argparse's usage line of a command group: "usage: batchai cluster [-h] {create,show,...} ...".
std::string group_usage(const CLI::App* app);

}  // namespace batchai::cli
