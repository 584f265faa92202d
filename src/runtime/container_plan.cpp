// Launch plans in containers (container_plan.hpp).
#include "batchai/runtime/container_plan.hpp"

#include <algorithm>
#include <set>

#include "batchai/common/json_util.hpp"
#include "batchai/common/process_tree.hpp"
#include "batchai/runtime/container_gateway.hpp"

namespace fs = std::filesystem;

namespace batchai::runtime {

std::string container_name(const std::string& job_key, const std::string& node_id) {
  std::string name = "batchai-" + job_key + "-" + node_id;
  for (char& c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '-';
    if (!ok) c = '_';
  }
  return name;
}

bool kept_out_of_container(const std::string& variable) {
  return variable == "PATH" || variable == "HOME" || variable == "HOSTNAME";
}

std::vector<fs::path> node_bind_paths(const LaunchPlan& plan, std::size_t node) {
  const NodeFolders& f = plan.nodes.at(node).folders;
  std::vector<fs::path> paths = {f.root, f.shared_job_temp, plan.stdouterr_dir};
  // A folder inside another one already bound needs no bind of its own.
  std::sort(paths.begin(), paths.end());
  std::vector<fs::path> out;
  for (const auto& p : paths) {
    const bool inside = std::any_of(out.begin(), out.end(), [&](const fs::path& b) {
      const auto rel = p.lexically_normal().lexically_relative(b.lexically_normal());
      return !rel.empty() && *rel.begin() != "..";
    });
    if (!inside) out.push_back(p);
  }
  return out;
}

std::vector<std::string> container_start_args(const LaunchPlan& plan, std::size_t node, const ContainerOptions& o) {
  std::vector<std::string> a = {"run", "-d", "--name", container_name(o.job_key, plan.nodes.at(node).id),
                                "--label", std::string(kContainerJobLabel) + "=" + o.job_key,
                                "--network=host", "--hostname", container_host(node), "--pull=never"};
  for (const auto& [name, limits] : o.ulimits) a.insert(a.end(), {"--ulimit", name + "=" + limits});
  if (o.share_host && node > 0) {
    const std::string first = "container:" + container_name(o.job_key, plan.nodes.at(0).id);
    a.insert(a.end(), {"--ipc", first, "--pid", first});
  } else if (o.share_host) {
    const auto per_node = o.shm_bytes.value_or(kDefaultShmBytes);
    a.insert(a.end(), {"--ipc", "shareable", "--shm-size",
                       std::to_string(per_node * static_cast<std::int64_t>(plan.nodes.size())) + "b"});
  } else if (o.shm_bytes) {
    a.insert(a.end(), {"--shm-size", std::to_string(*o.shm_bytes) + "b"});
  }
  auto bind = [&a](const fs::path& host, const fs::path& container, bool ro) {
    a.insert(a.end(), {"-v", host.string() + ":" + container.string() + (ro ? ":ro" : "")});
  };
  for (const auto& p : node_bind_paths(plan, node)) bind(p, p, false);
  for (const auto& b : o.common_binds) bind(b.host, b.container, b.read_only);
  a.insert(a.end(), {"--entrypoint", "sleep", o.image, "infinity"});
  return a;
}

namespace {

// mpirun reaches the other nodes' containers through the job's gateway: one hostfile line per
// node (its MPI host name), Open MPI's launch agent set to `batchai _container-enter`, and the
// ranks keep the image's PATH and HOME (the nodes file carries the host's).
void containerize_mpi(LaunchPlan& plan, const fs::path& self_executable) {
  if (plan.rank_nodes_contents.empty()) return;
  Json nodes = Json::parse(plan.rank_nodes_contents);
  const int slots = nodes.value("slots", 1);
  for (auto& node : nodes["nodes"]) {
    for (auto it = node["env"].begin(); it != node["env"].end();) {
      if (kept_out_of_container(it.key())) it = node["env"].erase(it);
      else ++it;
    }
  }
  plan.rank_nodes_contents = nodes.dump(2) + "\n";
  plan.hostfile_contents.clear();
  for (std::size_t i = 0; i < plan.nodes.size(); ++i)
    plan.hostfile_contents += container_host(i) + " slots=" + std::to_string(slots) + "\n";
  for (auto& t : plan.tasks) {
    auto& argv = t.process.argv;
    if (argv.empty() || argv[0] != "mpirun") continue;
    // Each container is a node of its own to Open MPI, which then never sees the machine's cores
    // oversubscribed and would spin: ranks yield when the host plan said they outnumber the cores.
    if (std::find(argv.begin(), argv.end(), "--oversubscribe") != argv.end())
      argv.insert(argv.begin() + 1, {"--mca", "mpi_yield_when_idle", "1"});
    // The agent, even inside a Slurm allocation (whose launcher and node list know no containers).
    argv.insert(argv.begin() + 1, {"--mca", "plm_rsh_agent", self_executable.string() + " " + kContainerEnterCommand,
                                   "--mca", "plm_rsh_no_tree_spawn", "1", "--mca", "plm", "rsh", "--mca", "ras",
                                   "^slurm"});
    t.process.env[kGatewayVariable] = std::string(kGatewayContainerDir) + "/socket";
  }
}

}  // namespace

void containerize_plan(LaunchPlan& plan, const std::vector<std::string>& podman_base, const std::string& job_key,
                       const fs::path& self_executable) {
  containerize_mpi(plan, self_executable);
  auto wrap = [&](TaskPlan& t) {
    ProcessSpec& p = t.process;
    std::vector<std::string> argv = podman_base;
    // The job's marker goes in too: whoever ends the job finds what runs in the containers.
    argv.insert(argv.end(), {"exec", "--workdir", p.cwd.string(), "-e", kJobKeyVariable});
    for (const auto& [name, value] : p.env) {
      if (!kept_out_of_container(name)) argv.insert(argv.end(), {"-e", name});
    }
    argv.push_back(container_name(job_key, plan.nodes.at(t.node).id));
    argv.insert(argv.end(), p.argv.begin(), p.argv.end());
    p.argv = std::move(argv);
  };
  for (auto& t : plan.preparation) wrap(t);
  for (auto& t : plan.tasks) wrap(t);
  plan.requirements.clear();
}

}  // namespace batchai::runtime
