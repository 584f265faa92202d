// `batchai experiment create|show|list|delete` (docs/behaviour.md §1.3.3).
#include "commands/experiment_commands.hpp"

#include "commands/common.hpp"
#include "output/transformers.hpp"

namespace batchai::cli {

void register_experiment_commands(CLI::App& group, CliContext& ctx) {
  const OptionSpec name = required();
  const OptionSpec by_ids = name_by_ids();

  auto& create = add_command(group, ctx, "create", "Create an experiment.");
  add_workspace(add_resource_group(create))
      .option("--name,-n", "Name of experiment.", name)
      .example("Create an experiment.", "batchai experiment create -g MyResourceGroup -w MyWorkspace -n MyExperiment")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().experiments().create(workspace_ref(a), a.str("name"));
      });

  auto& show = add_command(group, ctx, "show", "Show information about an experiment.");
  add_workspace(add_resource_group(show, true, true), true)
      .option("--name,-n", "Name of experiment.", by_ids)
      .ids()
      .show()
      .table(output::experiment_table)
      .example("Show information about an experiment.",
               "batchai experiment show -g MyResourceGroup -w MyWorkspace -n MyExperiment")
      .handler([&ctx](const Args& a) {
        return for_each_target(targets(a, "name", "experiments"), [&ctx](const Target& t) -> std::optional<Json> {
          return ctx.control_plane().experiments().show(t.where, t.name);
        });
      });

  auto& list = add_command(group, ctx, "list", "List experiments.");
  add_workspace(add_resource_group(list))
      .table(output::experiment_table)
      .example("List experiments.", "batchai experiment list -g MyResourceGroup -w MyWorkspace -o table")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().experiments().list(workspace_ref(a));
      });

  auto& del = add_command(group, ctx, "delete", "Delete an experiment (its jobs are terminated and deleted).");
  add_workspace(add_resource_group(del, true, true), true)
      .option("--name,-n", "Name of experiment.", by_ids)
      .ids()
      .flag("--no-wait", "Do not wait for the long-running operation to finish.")
      .confirmation()
      .example("Delete an experiment.", "batchai experiment delete -g MyResourceGroup -w MyWorkspace -n MyExperiment -y")
      .handler([&ctx](const Args& a) {
        return for_each_target(targets(a, "name", "experiments"), [&ctx](const Target& t) -> std::optional<Json> {
          ctx.control_plane().experiments().remove(t.where, t.name);
          return std::nullopt;
        });
      });
}

}  // namespace batchai::cli
