// Shell commands for tests: popen under timeout(1).
#include "support/shell.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace batchai::test {

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

ShellResult run_shell(const std::string& command, std::chrono::seconds limit) {
  // --kill-after: a command that ignores SIGTERM is still gone 5 s later.
  const std::string bounded =
      "timeout --kill-after=5 " + std::to_string(limit.count()) + " /bin/sh -c " + shell_quote(command);
  ShellResult r;
  FILE* pipe = ::popen(bounded.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) r.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace batchai::test
