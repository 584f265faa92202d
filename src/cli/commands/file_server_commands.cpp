// `batchai file-server create|show|list|delete` (docs/behaviour.md §1.3.6). `create` takes its group and
// workspace from the configured default_workspace_* values when they are not given.
#include "commands/file_server_commands.hpp"

#include "commands/common.hpp"
#include "output/transformers.hpp"

namespace batchai::cli {
namespace {

void register_create(CLI::App& group, CliContext& ctx) {
  OptionSpec rg;
  rg.required = true;
  rg.env = "AZURE_DEFAULTS_DEFAULT_WORKSPACE_RESOURCE_GROUP";
  OptionSpec ws = rg;
  ws.env = "AZURE_DEFAULTS_DEFAULT_WORKSPACE_NAME";
  OptionSpec name;
  name.required = true;
  OptionSpec caching = in_group("Storage Disks");
  caching.choices = {"none", "readonly", "readwrite"};
  OptionSpec sku = in_group("Storage Disks");
  sku.choices = {"Premium_LRS", "Standard_LRS"};
  add_command(group, ctx, "create", "Create a file server.")
      .option("--resource-group,-g", "Name of resource group.", rg)
      .option("--workspace,-w", "Name or ARM ID of the workspace.", ws)
      .option("--name,-n", "Name of file server.", name)
      .option("--vm-size,-s", "VM size.")
      .option("--config-file,-f", "A path to a json file containing file server create parameters "
              "(json representation of azure.mgmt.batchai.models.FileServerCreateParameters).", in_group("Advanced"))
      .option("--disk-count", "Number of disks.", in_group("Storage Disks", true))
      .option("--disk-size", "Disk size in Gb.", in_group("Storage Disks", true))
      .option("--caching-type", "Caching type for premium disks.", caching)
      .option("--storage-sku", "The sku of storage account to persist VM.", sku)
      .option("--user-name,-u", "Name of admin user account to be created on the file server.", in_group("Admin Account"))
      .option("--ssh-key,-k", "Optional SSH public key value or path.", in_group("Admin Account"))
      .option("--password,-p", "Optional password for the admin user account.", in_group("Admin Account"))
      .flag("--generate-ssh-keys", "Generate SSH public and private key files in ~/.ssh if missing.", "Admin Account")
      .option("--subnet", "ARM ID of a virtual network subnet to put the file server in.", in_group("Virtual Network"))
      .flag("--no-wait", "Do not wait for the long-running operation to finish.")
      .example("Create an NFS file server using a configuration file.",
               "batchai file-server create -g MyResourceGroup -w MyWorkspace -n MyNFS -f nfs.json")
      .example("Create an NFS with the admin account from the current user and the default ssh key.",
               "batchai file-server create -g MyResourceGroup -w MyWorkspace -n MyNFS -s Standard_D14 --disk-count 4 "
               "--disk-size 512 --storage-sku Premium_LRS --caching-type readonly")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        control_plane::FileServerCreateOptions o;
        o.where = workspace_ref(a);
        o.name = a.str("name");
        o.config = config_document(a);
        o.vm_size = a.get("vm-size");
        o.disk_count = a.integer("disk-count");
        o.disk_size = a.integer("disk-size");
        o.caching_type = a.get("caching-type");
        o.storage_sku = a.get("storage-sku");
        o.admin = {a.get("user-name"), a.get("ssh-key"), a.get("password"), a.flag("generate-ssh-keys")};
        o.subnet = a.get("subnet");
        o.no_wait = a.flag("no-wait");
        return naming_config_file(a, [&] { return ctx.control_plane().file_servers().create(o); });
      });
}

}  // namespace

void register_file_server_commands(CLI::App& group, CliContext& ctx) {
  register_create(group, ctx);

  auto& show = add_command(group, ctx, "show", "Show information about a file server.");
  add_workspace(add_resource_group(show, true, true), true)
      .option("--name,-n", "Name of file server.", name_by_ids())
      .ids()
      .show()
      .table(output::file_server_table)
      .example("Show information about a file server.", "batchai file-server show -g MyResourceGroup -w MyWorkspace -n MyNFS")
      .handler([&ctx](const Args& a) {
        return for_each_target(targets(a, "name", "fileservers"), [&ctx](const Target& t) -> std::optional<Json> {
          return ctx.control_plane().file_servers().show(t.where, t.name);
        });
      });

  auto& list = add_command(group, ctx, "list", "List file servers.");
  add_workspace(add_resource_group(list))
      .table(output::file_server_table)
      .example("List file servers in a workspace.", "batchai file-server list -g MyResourceGroup -w MyWorkspace -o table")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().file_servers().list(workspace_ref(a));
      });

  auto& del = add_command(group, ctx, "delete", "Delete a file server.");
  add_workspace(add_resource_group(del, true, true), true)
      .option("--name,-n", "Name of file server.", name_by_ids())
      .ids()
      .flag("--no-wait", "Do not wait for the long-running operation to finish.")
      .confirmation()
      .example("Delete a file server and wait for deletion to be completed.",
               "batchai file-server delete -g MyResourceGroup -w MyWorkspace -n MyNFS -y")
      .handler([&ctx](const Args& a) {
        return for_each_target(targets(a, "name", "fileservers"), [&ctx](const Target& t) -> std::optional<Json> {
          ctx.control_plane().file_servers().remove(t.where, t.name);
          return std::nullopt;
        });
      });
}

}  // namespace batchai::cli
