// Stand-in for `batchai _rank-exec` in the supervisor tests (the CLI registers the real one).
#include <string>
#include <vector>

#include "batchai/runtime/rank_exec.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == batchai::runtime::kRankExecCommand) args.erase(args.begin());
  return batchai::runtime::run_rank_exec(args);
}
