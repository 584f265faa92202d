// `batchai workspace create|show|list|delete` (docs/behaviour.md §1.3.1).
#include "commands/workspace_commands.hpp"

#include "commands/common.hpp"
#include "output/transformers.hpp"

namespace batchai::cli {

void register_workspace_commands(CLI::App& group, CliContext& ctx) {
  const OptionSpec name = required();
  const OptionSpec by_ids = name_by_ids();
  OptionSpec location;
  location.env = kDefaultLocationEnv;

  auto& create = add_command(group, ctx, "create", "Create a workspace.");
  add_resource_group(create)
      .option("--workspace,-n", "Name of workspace.", name)
      .option("--location,-l", "Location; defaults to the resource group's.", location)
      .example("Create a workspace in East US region.",
               "batchai workspace create -g MyResourceGroup -n MyWorkspace -l eastus")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().workspaces().create(a.str("resource-group"), a.str("workspace"), a.get("location"));
      });

  auto& show = add_command(group, ctx, "show", "Show information about a workspace.");
  add_resource_group(show, true, true)
      .option("--workspace,-n", "Name of workspace.", by_ids)
      .ids()
      .show()
      .table(output::workspace_table)
      .example("Show information about a workspace.", "batchai workspace show -g MyResourceGroup -n MyWorkspace")
      .handler([&ctx](const Args& a) {
        return for_each_target(targets(a, "workspace", "workspaces"), [&ctx](const Target& t) -> std::optional<Json> {
          return ctx.control_plane().workspaces().show(t.where);
        });
      });

  auto& list = add_command(group, ctx, "list", "List workspaces.");
  add_resource_group(list, false)
      .table(output::workspace_table)
      .example("List all workspaces under the current subscription.", "batchai workspace list -o table")
      .example("List workspaces in the given resource group.", "batchai workspace list -g MyResourceGroup -o table")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().workspaces().list(a.get("resource-group"));
      });

  auto& del = add_command(group, ctx, "delete", "Delete a workspace and everything in it.");
  add_resource_group(del, true, true)
      .option("--workspace,-n", "Name of workspace.", by_ids)
      .ids()
      .flag("--no-wait", "Do not wait for the long-running operation to finish.")
      .confirmation()
      .example("Delete a workspace.", "batchai workspace delete -g MyResourceGroup -n MyWorkspace -y")
      .handler([&ctx](const Args& a) {
        return for_each_target(targets(a, "workspace", "workspaces"), [&ctx](const Target& t) -> std::optional<Json> {
          ctx.control_plane().workspaces().remove(t.where);
          return std::nullopt;
        });
      });
}

}  // namespace batchai::cli
