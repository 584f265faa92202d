// `batchai list-usages` (docs/behaviour.md §1.3.7): vCPU usage and limits in a region.
#include "commands/usage_commands.hpp"

#include "commands/common.hpp"
#include "output/transformers.hpp"

namespace batchai::cli {

void register_usage_commands(CLI::App& parent, CliContext& ctx) {
  OptionSpec location;
  location.required = true;
  location.env = kDefaultLocationEnv;
  add_command(parent, ctx, "list-usages", "Get current usage and limits of Batch AI resources in a region.")
      .option("--location,-l", "Location, e.g. eastus.", location)
      .table(output::usage_table)
      .example("Check the current usages of Batch AI resources in East US.", "batchai list-usages -l eastus -o table")
      .handler([&ctx](const Args& a) -> std::optional<Json> { return ctx.control_plane().clusters().list_usages(a.str("location")); });
}

}  // namespace batchai::cli
