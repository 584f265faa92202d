// The texts of argparse's refusals (argparse_format.cpp): the usage line and its wrapping, repr()
// and int() as argparse applies them, and difflib's close matches for "the most similar choice".
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "argparse_compat.hpp"

namespace batchai::cli::argparse {

// "usage: <prog> [-h] ..." (no trailing newline), wrapped as HelpFormatter wraps it at `width`
// (terminal columns - 2). `positional` is the usage of a subcommand positional ("{a,b} ..."), if any.
std::string format_usage(const std::string& prog, const std::vector<ArgAction>& actions,
                         const std::string& positional, int width);
// argparse's width: $COLUMNS, else the terminal of stdout, else 80; minus 2.
int usage_width();

// Python's repr() of a str (as in "invalid choice: 'x'").
std::string py_repr(const std::string& text);
// Python's int(text) accepted as decimal text ("+1_0 " → "10"); nullopt when int() would refuse.
std::optional<std::string> py_int(const std::string& text);
// difflib.get_close_matches(word, possibilities, n, cutoff), best first.
std::vector<std::string> close_matches(const std::string& word, const std::vector<std::string>& possibilities,
                                       std::size_t n = 3, double cutoff = 0.7);

}  // namespace batchai::cli::argparse
