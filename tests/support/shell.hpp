// Runs a shell command line for a test and captures what it writes on stdout, with a bound on
// how long it may take (timeout(1) ends it, and its whole process group, past the limit).
#pragma once
#include <chrono>
#include <string>

namespace batchai::test {

struct ShellResult {
  int code = -1;    // exit status, 128 + signal when killed, 124 when it ran past the limit
  std::string out;  // stdout (redirect stderr in the command to see it here)
};

// `command` runs under /bin/sh -c; stdin is inherited.
ShellResult run_shell(const std::string& command, std::chrono::seconds limit = std::chrono::seconds(300));

// `text` as one single-quoted shell word.
std::string shell_quote(const std::string& text);

}  // namespace batchai::test
