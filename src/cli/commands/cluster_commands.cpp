// `batchai cluster create|show|list|delete|resize|auto-scale`, `cluster node list|exec` and
// `cluster file list` (docs/behaviour.md §1.3.2).
#include "commands/cluster_commands.hpp"

#include "commands/common.hpp"
#include "commands/flag_checks.hpp"
#include "output/transformers.hpp"

namespace batchai::cli {
namespace {

void register_create(CLI::App& group, CliContext& ctx) {
  OptionSpec priority = in_group("Nodes");
  priority.choices = {"dedicated", "lowpriority"};
  auto& create = add_command(group, ctx, "create", "Create a cluster.");
  add_workspace(add_resource_group(create))
      .option("--name,-n", "Name of cluster.", required())
      .option("--config-file,-f", "A path to a json file containing cluster create parameters "
              "(json representation of azure.mgmt.batchai.models.ClusterCreateParameters).", in_group("Advanced"))
      .option("--image,-i", "Operation system image for cluster nodes: UbuntuLTS, UbuntuDSVM or "
              "publisher:offer:sku:version.", in_group("Nodes"))
      .option("--custom-image", "ARM ID of a virtual machine image to use for the nodes; needs --image.",
              in_group("Nodes"))
      .option("--vm-size,-s", "VM size for cluster nodes (e.g. Standard_NC6 for 1 GPU node).", in_group("Nodes"))
      .option("--target,-t", "Number of nodes to allocate right after creation.", in_group("Nodes", true))
      .option("--min", "Min nodes count for the auto-scale cluster.", in_group("Nodes", true))
      .option("--max", "Max nodes count for the auto-scale cluster.", in_group("Nodes", true))
      .option("--vm-priority", "VM priority.", priority)
      .option("--user-name,-u", "Name of admin user account to be created on each node.", in_group("Admin Account"))
      .option("--ssh-key,-k", "Optional SSH public key value or path.", in_group("Admin Account"))
      .option("--password,-p", "Optional password for the admin user account.", in_group("Admin Account"))
      .flag("--generate-ssh-keys", "Generate SSH public and private key files in ~/.ssh if missing.", "Admin Account")
      .flag("--use-auto-storage", "Use auto-storage account: share batchaishare at autoafs and container "
            "batchaicontainer at autobfs.", "Auto Storage");
  add_mount_options(create, "on each node")
      .option("--subnet", "ARM ID of a virtual network subnet to put the cluster in.", in_group("Virtual Network"))
      .option("--setup-task", "A command line to be executed on each cluster's node after it is allocated or "
              "rebooted.", in_group("Setup Task"))
      .option("--setup-task-output", "Directory path to store the setup-task's logs.", in_group("Setup Task"))
      .option("--slurm-partition", "Stand the cluster on this Slurm partition: its nodes are the partition's, "
              "reached through $SLURM_CONF (docs/slurm.md).", in_group("Slurm"))
      .example("Create a single node GPU cluster with default image and auto-storage account.",
               "batchai cluster create -g MyResourceGroup -w MyWorkspace -n MyCluster -s Standard_NC6 -t 1 "
               "--use-auto-storage --generate-ssh-keys")
      .example("Create an auto-scale cluster with low-priority nodes.",
               "batchai cluster create -g MyResourceGroup -w MyWorkspace -n MyCluster -i UbuntuLTS -s Standard_NC6 "
               "--vm-priority lowpriority --min 0 --target 1 --max 10 -u AdminUserName -k id_rsa.pub")
      .example("Create a cluster using a configuration file.",
               "batchai cluster create -g MyResourceGroup -w MyWorkspace -n MyCluster -f cluster.json")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        control_plane::ClusterCreateOptions o;
        o.where = workspace_ref(a);
        o.name = a.str("name");
        o.config = config_document(a);
        o.image = a.get("image");
        o.custom_image = a.get("custom-image");
        o.vm_size = a.get("vm-size");
        o.target = a.integer("target");
        o.min_nodes = a.integer("min");
        o.max_nodes = a.integer("max");
        o.vm_priority = a.get("vm-priority");
        o.admin = {a.get("user-name"), a.get("ssh-key"), a.get("password"), a.flag("generate-ssh-keys")};
        o.use_auto_storage = a.flag("use-auto-storage");
        o.mounts = mount_options(a);
        o.subnet = a.get("subnet");
        o.setup_task = a.get("setup-task");
        o.setup_task_output = a.get("setup-task-output");
        o.slurm_partition = a.get("slurm-partition");
        check_node_count_flags(a);
        check_cluster_create_flags(o);
        return naming_config_file(a, [&] { return ctx.control_plane().clusters().create(o); });
      });
}

void register_nodes_and_files(CLI::App& group, CliContext& ctx) {
  CLI::App& node = add_group(group, ctx, "node", "Work with a cluster's nodes.");
  auto& node_list = add_command(node, ctx, "list", "List remote login information for the cluster's nodes.");
  add_workspace(add_resource_group(node_list))
      .option("--cluster,-c", "Name of cluster.", required())
      .table(output::remote_login_table)
      .example("List remote login information.", "batchai cluster node list -g MyResourceGroup -w MyWorkspace -c MyCluster")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().nodes().list(workspace_ref(a), a.str("cluster"));
      });

  auto& exec = add_command(node, ctx, "exec", "Execute a command line on a cluster's node with optional ports forwarding.");
  add_node_exec_options(add_workspace(add_resource_group(exec)).option("--cluster,-c", "Name of cluster.", required()),
                        "ID of the node (default: the first node of `node list`).")
      .example("Report a snapshot of the processes running on a node.",
               "batchai cluster node exec -g MyResourceGroup -w MyWorkspace -c MyCluster -n tvm-xxx --exec \"ps aux\"")
      .example("Forward local port 9000 to port 9001 on the first node.",
               "batchai cluster node exec -g MyResourceGroup -w MyWorkspace -c MyCluster -L 9000:localhost:9001")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        const auto o = node_exec_options(a);
        if (!o.exec && o.forwards.empty()) return std::nullopt;  // nothing to do (docs/job-runtime.md §4.10.6)
        ctx.control_plane().nodes().exec(workspace_ref(a), a.str("cluster"), o);
        return std::nullopt;
      });

  CLI::App& file = add_group(group, ctx, "file", "Work with files written by the cluster's node setup task.");
  OptionSpec path;
  path.default_value = ".";
  OptionSpec expiry;
  expiry.default_value = "60";
  expiry.integer = true;
  auto& file_list = add_command(file, ctx, "list", "List files generated by the cluster's node setup task.");
  add_workspace(add_resource_group(file_list))
      .option("--cluster,-c", "Name of cluster.", required())
      .option("--path,-p", "Relative path of a subfolder inside of the node setup task output directory.", path)
      .option("--expiry", "Time in minutes for how long generated SAS tokens will remain valid.", expiry)
      .table(output::setup_file_table)
      .example("List setup task output files.",
               "batchai cluster file list -g MyResourceGroup -w MyWorkspace -c MyCluster -o table")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        check_cluster_file_expiry(a);
        return ctx.control_plane().nodes().file_list(workspace_ref(a), a.str("cluster"), a.str("path"),
                                                     *a.integer("expiry"));
      });
}

}  // namespace

void register_cluster_commands(CLI::App& group, CliContext& ctx) {
  register_create(group, ctx);

  auto& show = add_command(group, ctx, "show", "Show information about a cluster.");
  add_workspace(add_resource_group(show, true, true), true)
      .option("--name,-n", "Name of cluster.", name_by_ids())
      .ids()
      .show()
      .table(output::cluster_table)
      .example("Show full information about a cluster.", "batchai cluster show -g MyResourceGroup -w MyWorkspace -n MyCluster")
      .example("Show the cluster's summary.", "batchai cluster show -g MyResourceGroup -w MyWorkspace -n MyCluster -o table")
      .handler([&ctx](const Args& a) {
        return for_each_target(targets(a, "name", "clusters"), [&ctx](const Target& t) -> std::optional<Json> {
          return ctx.control_plane().clusters().show(t.where, t.name);
        });
      });

  auto& list = add_command(group, ctx, "list", "List clusters.");
  add_workspace(add_resource_group(list))
      .table(output::cluster_table)
      .example("List all clusters in a workspace.", "batchai cluster list -g MyResourceGroup -w MyWorkspace -o table")
      .handler([&ctx](const Args& a) -> std::optional<Json> { return ctx.control_plane().clusters().list(workspace_ref(a)); });

  auto& del = add_command(group, ctx, "delete", "Delete a cluster.");
  add_workspace(add_resource_group(del, true, true), true)
      .option("--name,-n", "Name of cluster.", name_by_ids())
      .ids()
      .flag("--no-wait", "Do not wait for the long-running operation to finish.")
      .confirmation()
      .example("Delete a cluster and wait for deletion to be completed.",
               "batchai cluster delete -g MyResourceGroup -w MyWorkspace -n MyCluster -y")
      .handler([&ctx](const Args& a) {
        return for_each_target(targets(a, "name", "clusters"), [&ctx](const Target& t) -> std::optional<Json> {
          ctx.control_plane().clusters().remove(t.where, t.name);
          return std::nullopt;
        });
      });

  OptionSpec target = required();
  target.integer = true;
  auto& resize = add_command(group, ctx, "resize", "Resize a cluster (switches it to manual scale).");
  add_workspace(add_resource_group(resize, true, true), true)
      .option("--name,-n", "Name of cluster.", name_by_ids())
      .ids()
      .option("--target,-t", "Target number of compute nodes.", target)
      .example("Resize a cluster to zero size to stop paying for it.",
               "batchai cluster resize -g MyResourceGroup -w MyWorkspace -n MyCluster -t 0")
      .handler([&ctx](const Args& a) {
        check_node_count_flags(a);
        int t = *a.integer("target");
        return for_each_target(targets(a, "name", "clusters"), [&ctx, t](const Target& x) -> std::optional<Json> {
          return ctx.control_plane().clusters().resize(x.where, x.name, t);
        });
      });

  auto& scale = add_command(group, ctx, "auto-scale", "Set auto-scale parameters for a cluster.");
  add_workspace(add_resource_group(scale, true, true), true)
      .option("--name,-n", "Name of cluster.", name_by_ids())
      .ids()
      .option("--min", "Minimum number of nodes.", target)
      .option("--max", "Maximum number of nodes.", target)
      .example("Make a cluster scale between 0 and 10 nodes depending on the number of queued and running jobs.",
               "batchai cluster auto-scale -g MyResourceGroup -w MyWorkspace -n MyCluster --min 0 --max 10")
      .handler([&ctx](const Args& a) {
        check_auto_scale_flags(a);
        int lo = *a.integer("min");
        int hi = *a.integer("max");
        return for_each_target(targets(a, "name", "clusters"), [&ctx, lo, hi](const Target& x) -> std::optional<Json> {
          return ctx.control_plane().clusters().auto_scale(x.where, x.name, lo, hi);
        });
      });

  register_nodes_and_files(group, ctx);
}

}  // namespace batchai::cli
