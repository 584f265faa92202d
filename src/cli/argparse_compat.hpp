// Python 3.11 argparse, as az uses it, for one parser's option table: how argv is split into
// options and values (`-d=X`, `-dX`, `--name=X`, unique prefixes, negative numbers, `--`), what a
// repeated option keeps and the refusals word for word; the usage line with argparse's wrapping
// and difflib's "most similar choice" are in argparse_format.hpp. Pure functions: the CLI11 tree
// is walked in argv_prepass.cpp.
#pragma once
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace batchai::cli::argparse {

enum class ArgKind {
  kStore,      // nargs=None, action='store': the last occurrence wins
  kStoreMany,  // nargs='+', action='store': the last occurrence's values win
  kAppend,     // nargs=None, action='append': every occurrence (-L ... -L ...)
  kExtend,     // nargs='+', accumulating (az's --ids SplitAction)
  kFlag,       // action='store_true'
  kHelp,       // -h/--help: help is printed when it is reached
};

struct ArgAction {
  std::vector<std::string> option_strings;  // declaration order: {"--name", "-n"}
  ArgKind kind = ArgKind::kStore;
  bool required = false;
  // Required unless the action at this index was given (the -n/-g/-w of commands with --ids).
  std::optional<std::size_t> required_unless;
  std::vector<std::string> choices;  // matched case-insensitively (az's enum type); become their spelling
  bool integer = false;              // Python int() syntax; becomes its decimal form
  std::string metavar;               // empty: the first long name upper-cased, '-' → '_'

  std::string name() const;  // "--name/-n", as argparse names an argument in messages
  std::string long_name() const;  // the first "--" option string (else the first one)
  bool takes_value() const { return kind != ArgKind::kFlag && kind != ArgKind::kHelp; }
};

// A refusal, worded as argparse words it (printed after "<prog>: error: ").
class ArgparseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ParsedArgs {
  std::vector<std::vector<std::string>> values;  // per action, what the namespace holds
  std::vector<bool> seen;                        // per action
  std::vector<std::string> extras;               // not recognised, in argparse's order
  std::optional<std::size_t> help;               // the help action, when it was reached
};

// parse_known_args: options only (no positionals); stops at a help action. Throws ArgparseError.
ParsedArgs parse_known_args(const std::vector<ArgAction>& actions, const std::vector<std::string>& args);

// parse_args: parse_known_args, then the required check, then "unrecognized arguments" for
// `outer_extras` (what enclosing parsers did not recognise) followed by this parser's extras.
ParsedArgs parse_args(const std::vector<ArgAction>& actions, const std::vector<std::string>& args,
                      const std::vector<std::string>& outer_extras = {});

// Whether `arg` reads as an option to a parser with these actions (argparse's 'O'); never throws.
bool looks_like_option(const std::vector<ArgAction>& actions, const std::string& arg);

}  // namespace batchai::cli::argparse
