// `batchai group create|show|list|delete|exists` (az group, as the Batch AI tutorial uses it).
#include "commands/group_commands.hpp"

#include "batchai/common/errors.hpp"
#include "commands/common.hpp"

namespace batchai::cli {
namespace {

constexpr const char* kNames = "--name,-n,--resource-group,-g";

Json parse_tags(const std::vector<std::string>& items) {
  Json tags = Json::object();
  for (const auto& item : items) {
    auto eq = item.find('=');
    tags[item.substr(0, eq)] = eq == std::string::npos ? "" : item.substr(eq + 1);
  }
  return tags;
}

}  // namespace

void register_group_commands(CLI::App& group, CliContext& ctx) {

  OptionSpec required;
  required.required = true;
  OptionSpec location = required;
  location.env = kDefaultLocationEnv;
  OptionSpec tags;
  tags.many = true;

  add_command(group, ctx, "create", "Create a new resource group.")
      .option(kNames, "Name of the new resource group.", required)
      .option("--location,-l", "Location, e.g. eastus.", location)
      .option("--tags", "Space-separated tags: key[=value] [key[=value] ...].", tags)
      .example("Create a resource group in East US.", "batchai group create -n MyResourceGroup -l eastus")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        std::optional<Json> t;
        if (a.flag("tags")) t = parse_tags(a.all("tags"));
        return ctx.control_plane().groups().create(a.str("name"), a.str("location"), t);
      });

  add_command(group, ctx, "show", "Get a resource group.")
      .option(kNames, "Name of the resource group.", required)
      .show()
      .example("Show a resource group.", "batchai group show -n MyResourceGroup")
      .handler([&ctx](const Args& a) -> std::optional<Json> { return ctx.control_plane().groups().show(a.str("name")); });

  add_command(group, ctx, "list", "List resource groups.")
      .example("List all resource groups.", "batchai group list -o table")
      .handler([&ctx](const Args&) -> std::optional<Json> { return ctx.control_plane().groups().list(); });

  add_command(group, ctx, "delete", "Delete a resource group and everything in it.")
      .option(kNames, "Name of the resource group.", required)
      .flag("--no-wait", "Do not wait for the long-running operation to finish.")
      .confirmation()
      .example("Delete a resource group without asking.", "batchai group delete -n MyResourceGroup -y")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        ctx.control_plane().groups().remove(a.str("name"));
        return std::nullopt;
      });

  add_command(group, ctx, "exists", "Check if a resource group exists.")
      .option(kNames, "Name of the resource group.", required)
      .example("Check whether a group exists.", "batchai group exists -n MyResourceGroup")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return Json(ctx.control_plane().groups().exists(a.str("name")));
      });
}

}  // namespace batchai::cli
