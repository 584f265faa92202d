// Hidden subcommands the job machinery runs itself (never typed by users):
//   batchai _supervise --job-key K                         the detached per-job supervisor
//   batchai _rank-exec --nodes-file F -- program args...   mpirun's per-rank wrapper
// Both run straight from the parser's callback and end the process with their own exit code.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <cstdlib>
#include <iostream>

#include "batchai/common/errors.hpp"
#include "batchai/common/log.hpp"
#include "batchai/control_plane/jobs.hpp"
#include "batchai/runtime/launch_plan.hpp"
#include "commands/registry.hpp"

namespace batchai::cli {

void register_hidden_job_commands(CLI::App& root, CliContext& ctx);

void register_hidden_job_commands(CLI::App& root, CliContext& ctx) {
  CLI::App* supervise = root.add_subcommand("_supervise", "Run a job's supervisor (internal).");
  supervise->group("");  // hidden from help
  auto key = std::make_shared<std::string>();
  supervise->add_option("--job-key", *key)->required();
  supervise->callback([&ctx, key] {
    int code = 0;
    try {
      log::init(log::Verbosity::kNormal);
      if (!control_plane::is_job_key(*key))  // checked before anything is opened or created
        throw InvalidArgument("--job-key '" + *key + "' is not a job key (a lower-case UUID).");
      control_plane::Jobs jobs(ctx.control_plane());
      code = jobs.supervise(*key);
    } catch (const std::exception& e) {
      std::cerr << "ERROR: supervisor of job " << *key << ": " << e.what() << std::endl;
      code = 1;
    }
    std::fflush(stdout);
    std::exit(code);
  });

  CLI::App* rank = root.add_subcommand(runtime::kRankExecCommand, "Run one MPI rank in its node (internal).");
  rank->group("");
  rank->prefix_command();
  rank->allow_extras();
  rank->callback([] {
    // The program's own arguments must pass untouched (CLI11 reorders what it does not know),
    // so they are read back from the raw command line.
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::vector<std::string> argv;
    for (std::string arg; std::getline(in, arg, '\0');) argv.push_back(arg);
    auto it = std::find(argv.begin(), argv.end(), std::string(runtime::kRankExecCommand));
    std::vector<std::string> args(it == argv.end() ? argv.end() : it + 1, argv.end());
    std::exit(runtime::run_rank_exec(args));
  });
}

}  // namespace batchai::cli
