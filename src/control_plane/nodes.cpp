// Simulated nodes: the reconcile step (allocation, preparation, setup task, leaving), node
// folders with their mounts (layout in node_layout.hpp), node list/exec and cluster file list.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <ctime>
#include <fstream>
#include <memory>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/common/log.hpp"
#include "batchai/common/port_forward.hpp"
#include "batchai/common/process.hpp"
#include "batchai/common/utf8.hpp"
#include "mount_rules.hpp"
#include "vm_sizes.hpp"
#include "batchai/control_plane/control_plane.hpp"
#include "storage_paths.hpp"
#include "store.hpp"
#include "batchai/runtime/node_dir.hpp"
#include "internal.hpp"
#include "slurm_clusters.hpp"
#include "slurm_reconcile.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

using namespace detail;

namespace detail {

void ensure_node_folder(const NodeLayout& layout, const Json& doc, const fs::path& node) {
  std::error_code ec;
  const runtime::NodeDir dir(node);
  for (const auto& sub : {dir.mounts(), dir.jobs(), dir.shared()}) fs::create_directories(sub, ec);
  Json mv = doc.contains("nodeSetup") && doc["nodeSetup"].is_object() ? doc["nodeSetup"].value("mountVolumes", Json())
                                                                       : Json();
  link_mount_volumes(layout, mv, dir.mounts());
}

std::map<std::string, std::string> node_environment(const fs::path& node) {
  const runtime::NodeDir dir(node);
  return {{"AZ_BATCHAI_MOUNT_ROOT", dir.mounts().string()}, {"AZ_BATCHAI_JOB_TEMP_DIR", dir.jobs().string()}};
}

}  // namespace detail

namespace {

struct NodeRow {
  std::int64_t row = 0;
  std::string node_id, state, setup;
  std::int64_t ready_us = 0;
  std::optional<std::int64_t> leave_us;
};

std::string node_timestamp(std::int64_t us) {
  std::time_t t = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dt%H%M%Sz", &tm);
  return buf;
}

bool has_setup_task(const Json& doc) {
  return doc.contains("nodeSetup") && doc["nodeSetup"].is_object() && doc["nodeSetup"]["setupTask"].is_object();
}

int removal_rank(const std::string& state) {
  if (state == "idle") return 0;
  if (state == "unusable") return 1;
  if (state == "preparing") return 2;
  return 3;  // running: last
}

// A volume that cannot be mounted (a missing share, container or file server) fails the node's
// setup, as on the service: the node turns unusable and the cluster's errors say why.
bool mount_node(const NodeLayout& layout, const Json& doc, const fs::path& node) {
  try {
    ensure_node_folder(layout, doc, node);
    return true;
  } catch (const Error& e) {
    std::ofstream(node / ".mount_error") << e.what() << "\n";
    log::warning("Cannot prepare node " + node.filename().string() + ": " + e.what());
    return false;
  }
}

// The setup task's output folder on a node: {prefix with the mount root expanded}/{suffix}.
fs::path setup_output_dir(const Json& task, const fs::path& node) {
  std::string prefix =
      expand_mount_root(value_or<std::string>(task, "stdOutErrPathPrefix", ""), runtime::NodeDir(node).mounts());
  return fs::path(prefix) / value_or<std::string>(task, "stdOutErrPathSuffix", "");
}

void spawn_setup_task(ProcessLauncher& launcher, const ClusterRow& c, const std::string& node_id, const fs::path& node) {
  const Json& task = c.doc["nodeSetup"]["setupTask"];
  ProcessSpec spec;
  // The node's environment, as for jobs: never the environment of whoever ran the command.
  spec.clear_env = true;
  spec.env = node_base_environment();
  for (auto& [k, v] : node_environment(node)) spec.env[k] = v;
  spec.env["AZ_BATCHAI_STDOUTERR_DIR"] = setup_output_dir(task, node).string();
  for (const char* list : {"environmentVariables"})
    if (task.contains(list) && task[list].is_array())
      for (const auto& v : task[list]) spec.env[value_or<std::string>(v, "name", "")] = value_or<std::string>(v, "value", "");
  if (c.private_data.contains("setupSecrets"))
    for (const auto& v : c.private_data["setupSecrets"])
      spec.env[value_or<std::string>(v, "name", "")] = value_or<std::string>(v, "value", "");
  spec.env["BATCHAI_SETUP_COMMAND"] = value_or<std::string>(task, "commandLine", "");
  spec.env["BATCHAI_NODE_ID"] = node_id;
  // The exit code lands in .setup_exit atomically; reconcile reads it.
  spec.argv = {"sh", "-c",
               "mkdir -p \"$AZ_BATCHAI_STDOUTERR_DIR\" && "
               "bash -c \"$BATCHAI_SETUP_COMMAND\" >\"$AZ_BATCHAI_STDOUTERR_DIR/stdout-$BATCHAI_NODE_ID.txt\" "
               "2>\"$AZ_BATCHAI_STDOUTERR_DIR/stderr-$BATCHAI_NODE_ID.txt\"; "
               "echo $? >.setup_exit.tmp && mv .setup_exit.tmp .setup_exit"};
  spec.cwd = node;
  spec.stdout_file = node / ".setup_cmd";
  spec.stderr_file = node / ".setup_cmd";
  const pid_t pid = launcher.spawn_detached(spec);  // a session (and group) leader
  std::ofstream(node / ".setup_pid") << pid << "\n";
}

}  // namespace

void Nodes::stop_setup_task(const fs::path& node) {
  std::error_code ec;
  if (fs::exists(node / ".setup_exit", ec)) return;  // finished
  long pid = 0;
  if (!(std::ifstream(node / ".setup_pid") >> pid) || pid <= 1) return;
  const fs::path cwd = fs::read_symlink("/proc/" + std::to_string(pid) + "/cwd", ec);
  if (ec || cwd != fs::canonical(node, ec) || ec) return;  // gone, or the pid belongs to someone else now
  cp_.launcher().signal_group(static_cast<pid_t>(pid), SIGKILL);
}

namespace {

// One reconcile step of one cluster at `now` (inside a write transaction).
void step_cluster(ControlPlane& cp, Store& store, const Settings& settings, const NodeLayout& layout, std::int64_t id,
                  std::int64_t now) {
  auto c = load_cluster(store, id);
  if (!c) return;
  if (slurm_partition(c->private_data)) {  // Slurm's nodes: resize/auto-scale changed the bound only
    store.prepare("UPDATE clusters SET pending = 0 WHERE id = ?").bind(1, id).run();
    return;
  }
  const std::int64_t prov = settings.provisioning_delay.count();
  const std::int64_t prep = settings.node_preparation_delay.count();
  const fs::path cluster_dir = layout.cluster(c->resource_group, c->workspace, c->name);
  std::vector<NodeRow> nodes;
  {
    auto st = store.prepare(
        "SELECT id, node_id, state, setup, ready_us, leave_us FROM nodes WHERE cluster_id = ? ORDER BY ordinal");
    st.bind(1, id);
    while (st.step()) nodes.push_back({st.integer(0), st.text(1), st.text(2), st.text(3), st.integer(4), st.optional_integer(5)});
  }
  auto set_state = [&](NodeRow& n, const std::string& state) {
    n.state = state;
    store.prepare("UPDATE nodes SET state = ?, leave_us = ? WHERE id = ?").bind(1, state).bind(2, n.leave_us).bind(3, n.row).run();
  };
  auto remove_node = [&](const NodeRow& n) {
    cp.nodes().stop_setup_task(cluster_dir / "nodes" / n.node_id);
    store.prepare("DELETE FROM nodes WHERE id = ?").bind(1, n.row).run();
    trash(store, cluster_dir / "nodes" / n.node_id);
  };
  std::int64_t event = now;
  bool created_nodes = false;
  // Leaving nodes whose time is up are gone.
  std::erase_if(nodes, [&](const NodeRow& n) {
    if (n.state != "leaving" || n.leave_us.value_or(0) > now) return false;
    remove_node(n);
    event = *n.leave_us;
    return true;
  });
  // Setup tasks that finished, then preparing nodes whose preparation time passed.
  for (auto& n : nodes) {
    if (n.setup == "started") {
      std::ifstream in(cluster_dir / "nodes" / n.node_id / ".setup_exit");
      int code = 0;
      if (in >> code) {
        n.setup = code == 0 ? "done" : "failed";
        store.prepare("UPDATE nodes SET setup = ?, setup_exit = ? WHERE id = ?").bind(1, n.setup).bind(2, code).bind(3, n.row).run();
      }
    }
    if (n.state == "preparing" && n.ready_us <= now && (n.setup == "none" || n.setup == "done" || n.setup == "failed"))
      set_state(n, n.setup == "failed" ? "unusable" : "idle");
  }
  // At most what the regional quota allows of the smallest VM: rows stored before counts were
  // checked (a negative or huge target) must neither crash nor flood the disk with node folders.
  const int desired = std::clamp(desired_nodes(*c), 0, kRegionalVcpuQuota);
  auto active = static_cast<int>(std::count_if(nodes.begin(), nodes.end(), [](const NodeRow& n) { return n.state != "leaving"; }));
  if (active < desired) {
    if (c->alloc_state == "steady") {
      c->alloc_state = "resizing";
      c->alloc_started_us = now;
      c->alloc_changed_us = now;
    }
    if (now >= c->alloc_started_us + prov) {
      const std::int64_t created = c->alloc_started_us + prov;
      const bool setup = has_setup_task(c->doc);
      for (int i = active; i < desired; ++i) {
        const std::int64_t ordinal = c->next_ordinal++;
        NodeRow n{0, c->node_prefix + "_" + std::to_string(ordinal + 1) + "-" + node_timestamp(created), "preparing",
                  setup ? "pending" : "none", created + prep, std::nullopt};
        if (!setup && n.ready_us <= now) n.state = "idle";
        store.prepare(
                 "INSERT INTO nodes(cluster_id, node_id, ordinal, state, created_us, ready_us, setup) VALUES (?,?,?,?,?,?,?)")
            .bind(1, id).bind(2, n.node_id).bind(3, ordinal).bind(4, n.state).bind(5, created).bind(6, n.ready_us)
            .bind(7, n.setup).run();
        n.row = store.last_insert_rowid();
        nodes.push_back(n);
      }
      active = desired;
      event = created;
      created_nodes = true;
    }
  } else if (active > desired) {
    std::vector<NodeRow*> order;
    for (auto& n : nodes)
      if (n.state != "leaving") order.push_back(&n);
    std::stable_sort(order.begin(), order.end(), [](const NodeRow* a, const NodeRow* b) {
      return removal_rank(a->state) < removal_rank(b->state);
    });
    for (int i = 0; i < active - desired; ++i) {
      order[static_cast<std::size_t>(i)]->leave_us = now + prov;
      set_state(*order[static_cast<std::size_t>(i)], "leaving");
    }
    if (c->alloc_state == "steady") {
      c->alloc_state = "resizing";
      c->alloc_started_us = now;
      c->alloc_changed_us = now;
    }
    active = desired;
    if (prov == 0) {  // nothing to wait for
      std::erase_if(nodes, [&](const NodeRow& n) {
        if (n.state != "leaving") return false;
        remove_node(n);
        return true;
      });
    }
  }
  const bool leaving = std::any_of(nodes.begin(), nodes.end(), [](const NodeRow& n) { return n.state == "leaving"; });
  if (c->alloc_state == "resizing" && !leaving && active == desired) {
    c->alloc_state = "steady";
    c->alloc_changed_us = std::max(c->alloc_changed_us, std::min(event, now));
  }
  // Nodes made in this step keep the cluster pending once more, so their folders get checked.
  const bool busy = created_nodes || c->alloc_state == "resizing" || std::any_of(nodes.begin(), nodes.end(), [](const NodeRow& n) {
    return n.state == "preparing" || n.state == "leaving";
  });
  store.prepare(
           "UPDATE clusters SET alloc_state = ?, alloc_started_us = ?, alloc_changed_us = ?, next_ordinal = ?, "
           "pending = ? WHERE id = ?")
      .bind(1, c->alloc_state).bind(2, c->alloc_started_us).bind(3, c->alloc_changed_us).bind(4, c->next_ordinal)
      .bind(5, busy ? 1 : 0).bind(6, id).run();
}

struct NodeTarget {
  ClusterRow cluster;
  std::vector<std::pair<std::string, int>> nodes;  // (node id, ordinal), in order
};

NodeTarget load_nodes(Store& store, const WorkspaceRef& ref, const std::string& cluster) {
  return store.read([&] {
    NodeTarget t{require_cluster(store, ref, cluster), {}};
    auto st = store.prepare("SELECT node_id, ordinal FROM nodes WHERE cluster_id = ? AND state <> 'leaving' ORDER BY ordinal");
    st.bind(1, t.cluster.id);
    while (st.step()) t.nodes.emplace_back(st.text(0), static_cast<int>(st.integer(1)));
    return t;
  });
}

}  // namespace

void Nodes::reconcile(std::int64_t now_us) {
  std::vector<std::int64_t> ids = cp_.store().read([&] {
    std::vector<std::int64_t> out;
    auto st = cp_.store().prepare("SELECT id FROM clusters WHERE pending = 1");
    while (st.step()) out.push_back(st.integer(0));
    return out;
  });
  for (auto id : ids) {
    cp_.store().write([&] {
      step_cluster(cp_, cp_.store(), cp_.settings(), cp_.layout(), id, now_us);
      cp_.clusters().refresh(id);
    });
    cp_.nodes().start_work(id);
  }
}

void Nodes::start_work(std::int64_t cluster_row_id) {
  std::vector<std::string> preparing, claimed;
  auto cluster = cp_.store().write([&] {
    auto c = load_cluster(cp_.store(), cluster_row_id);
    if (!c) return c;
    {
      auto st = cp_.store().prepare("SELECT node_id, setup FROM nodes WHERE cluster_id = ? AND state = 'preparing'");
      st.bind(1, cluster_row_id);
      while (st.step()) {
        preparing.push_back(st.text(0));
        if (st.text(1) == "pending") claimed.push_back(st.text(0));
      }
    }
    // Claimed inside the transaction: each setup task starts exactly once across processes.
    cp_.store().prepare("UPDATE nodes SET setup = 'started' WHERE cluster_id = ? AND setup = 'pending'").bind(1, cluster_row_id).run();
    return c;
  });
  if (!cluster) return;
  std::vector<std::string> unmounted;
  for (const auto& node_id : preparing) {
    fs::path node = cp_.layout().node(cluster->resource_group, cluster->workspace, cluster->name, node_id);
    if (!fs::exists(runtime::NodeDir(node).mounts()) && !mount_node(cp_.layout(), cluster->doc, node)) unmounted.push_back(node_id);
  }
  for (const auto& node_id : claimed) {
    fs::path node = cp_.layout().node(cluster->resource_group, cluster->workspace, cluster->name, node_id);
    if (std::find(unmounted.begin(), unmounted.end(), node_id) != unmounted.end()) continue;  // no setup without mounts
    try {
      spawn_setup_task(cp_.launcher(), *cluster, node_id, node);
    } catch (const Error& e) {
      std::ofstream(node / ".setup_exit") << 127 << "\n";  // the node becomes unusable with a clear error
      log::warning(std::string("Cannot start the setup task on node ") + node_id + ": " + e.what());
    }
  }
  // Idle nodes created with no setup task and zero delay still need their folders.
  cp_.store().read([&] {
    auto st = cp_.store().prepare("SELECT node_id FROM nodes WHERE cluster_id = ? AND state = 'idle'");
    st.bind(1, cluster_row_id);
    while (st.step()) {
      fs::path node = cp_.layout().node(cluster->resource_group, cluster->workspace, cluster->name, st.text(0));
      if (!fs::exists(runtime::NodeDir(node).mounts()) && !mount_node(cp_.layout(), cluster->doc, node)) unmounted.push_back(st.text(0));
    }
  });
  if (unmounted.empty()) return;
  cp_.store().write([&] {
    for (const auto& node_id : unmounted)
      cp_.store().prepare("UPDATE nodes SET setup = 'failed', setup_exit = NULL, state = CASE WHEN state = 'idle' "
                      "THEN 'unusable' ELSE state END WHERE cluster_id = ? AND node_id = ?")
          .bind(1, cluster_row_id).bind(2, node_id).run();
  });
  cp_.clusters().refresh(cluster_row_id);
}

Json Nodes::list(const WorkspaceRef& ref, const std::string& cluster) {
  cp_.reconcile(slurm_scope_of_cluster(cp_.store(), ref, cluster));
  auto t = load_nodes(cp_.store(), ref, cluster);
  if (slurm_partition(t.cluster.private_data)) return slurm_node_list(t.cluster);
  Json out = Json::array();
  for (const auto& [node_id, ordinal] : t.nodes)
    out.push_back({{"ipAddress", t.cluster.public_ip},
                   {"nodeId", node_id},
                   {"port", static_cast<double>(50000 + ordinal)}});
  return out;
}

void Nodes::exec(const WorkspaceRef& ref, const std::string& cluster, const NodeExecOptions& options) {
  if (!options.exec && options.forwards.empty()) return;
  cp_.reconcile(slurm_scope_of_cluster(cp_.store(), ref, cluster));
  const ClusterRow row = cp_.store().read([&] { return require_cluster(cp_.store(), ref, cluster); });
  if (slurm_partition(row.private_data)) return slurm_node_exec(cp_, row, options, std::nullopt);
  auto t = load_nodes(cp_.store(), ref, cluster);
  if (t.nodes.empty()) throw InvalidArgument("No nodes available in the cluster");
  std::string node_id = t.nodes.front().first;
  if (options.node_id) {
    auto it = std::find_if(t.nodes.begin(), t.nodes.end(), [&](const auto& n) { return n.first == *options.node_id; });
    if (it == t.nodes.end()) throw InvalidArgument("Cannot find a node with id=" + *options.node_id);
    node_id = it->first;
  }
  // -L: the tunnels live as long as --exec runs, or until Ctrl-C without it (docs/behaviour.md §4.10.6).
  std::vector<std::unique_ptr<PortForwarder>> tunnels;
  for (const auto& text : options.forwards) {
    const ForwardSpec f = parse_forward_spec(text);
    try {
      tunnels.push_back(std::make_unique<PortForwarder>(f));
    } catch (const Error& e) {
      const bool here = f.remote_host == "localhost" || f.remote_host == "127.0.0.1" || f.remote_host == "0.0.0.0";
      if (!(here && f.local_port == f.remote_port))
        throw Error(std::string("Connection to remote host failed. Please check provided credentials. Error: ") + e.what());
      // The simulated node is this machine: what listens on its port is already reachable here.
      log::warning("Port " + std::to_string(f.local_port) + " is already served on this machine, where the nodes run; " +
                   "nothing to forward for " + text + ".");
      continue;
    }
    log::warning("Forwarding 0.0.0.0:" + std::to_string(tunnels.back()->local_port()) + " to " + f.remote_host + ":" +
                 std::to_string(f.remote_port) + " on node " + node_id + ".");
  }
  if (!options.exec) {
    if (tunnels.empty()) return;
    log::warning("Press Ctrl-C to stop forwarding.");
    for (;;) ::pause();  // the CLI ends the command on Ctrl-C (exit 0)
  }
  fs::path node = cp_.layout().node(t.cluster.resource_group, t.cluster.workspace, t.cluster.name, node_id);
  ensure_node_folder(cp_.layout(), t.cluster.doc, node);
  ProcessSpec spec;
  spec.env = node_environment(node);
  spec.env["BATCHAI_EXEC_COMMAND"] = *options.exec;
  spec.argv = {"bash", "-c", "exec 2>&1; exec bash -lc \"$BATCHAI_EXEC_COMMAND\""};  // both streams to stdout
  spec.cwd = node;
  spec.new_session = false;  // Ctrl-C reaches the command too
  cp_.launcher().run(spec);      // the remote exit code is not propagated (docs/behaviour.md §4.10.6)
}

Json Nodes::file_list(const WorkspaceRef& ref, const std::string& cluster, const std::string& path,
                                     int expiry_minutes) {
  // Local file:// URLs do not expire, but the service takes 5 to 600 minutes only.
  checked_integer(Json(expiry_minutes), "--expiry", 5, 600);
  if (!is_valid_utf8(path)) throw InvalidArgument("The path must be valid UTF-8.", "InvalidResourceName");
  refuse_on_slurm(cp_.store().read([&] { return require_cluster(cp_.store(), ref, cluster); }), "cluster file list");
  cp_.reconcile();
  auto c = cp_.store().read([&] { return require_cluster(cp_.store(), ref, cluster); });
  const Json& setup = c.doc["nodeSetup"];
  if (!setup.is_object() || !setup["setupTask"].is_object()) return Json::array();
  const Json& task = setup["setupTask"];
  const std::string kUnsupported =
      "List files is supported only for clusters with startup task configure to store its output on Azure File Share "
      "or Azure Blob Container";
  std::string prefix = value_or<std::string>(task, "stdOutErrPathPrefix", "");
  std::string rest;
  bool under_root = false;
  for (const std::string token : {"${AZ_BATCHAI_MOUNT_ROOT}", "$AZ_BATCHAI_MOUNT_ROOT"})
    if (prefix.rfind(token, 0) == 0 && (prefix.size() == token.size() || prefix[token.size()] == '/')) {
      under_root = true;
      rest = prefix.substr(token.size());
      break;
    }
  if (!under_root) throw InvalidArgument(kUnsupported);
  if (task["stdOutErrPathSuffix"].is_null()) throw InvalidArgument("List files is not supported for this cluster");
  while (!rest.empty() && rest.front() == '/') rest.erase(0, 1);
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  // Find the cluster-level share, then container, whose mount path holds the prefix.
  std::optional<fs::path> root;
  std::string remainder;
  auto match = [&](const Json& m) -> std::optional<std::string> {
    std::string mp = value_or<std::string>(m, "relativeMountPath", "");
    while (!mp.empty() && mp.back() == '/') mp.pop_back();
    while (!mp.empty() && mp.front() == '/') mp.erase(0, 1);
    if (mp.empty()) return std::nullopt;
    if (rest == mp) return std::string();
    if (rest.rfind(mp + "/", 0) == 0) return rest.substr(mp.size() + 1);
    return std::nullopt;
  };
  const Json& mv = setup["mountVolumes"];
  if (mv.is_object() && mv["azureFileShares"].is_array())
    for (const auto& m : mv["azureFileShares"])
      if (auto r = match(m); r && !root) {
        auto parsed = parse_azure_file_url(value_or<std::string>(m, "azureFileUrl", ""));
        if (!parsed) continue;
        root = cp_.layout().share(value_or<std::string>(m, "accountName", parsed->first), parsed->second);
        remainder = *r;
      }
  if (!root && mv.is_object() && mv["azureBlobFileSystems"].is_array())
    for (const auto& m : mv["azureBlobFileSystems"])
      if (auto r = match(m); r && !root) {
        std::string account = value_or<std::string>(m, "accountName", "");
        std::string container = value_or<std::string>(m, "containerName", "");
        root = cp_.layout().container(account, container);
        remainder = *r;
      }
  if (!root) throw InvalidArgument(kUnsupported);
  // Confined to the share or container: a link the setup task left there is listed, never followed out.
  auto storage = ConfinedDir::open(*root, "the setup task output of cluster '" + cluster + "'");
  if (!storage) return Json::array();
  std::string relative = storage->check((fs::path(remainder) / task["stdOutErrPathSuffix"].get<std::string>()).generic_string(),
                                        "The setup task output path");
  if (storage->check(path, "The path") != ".") relative += "/" + storage->check(path, "The path");
  auto folder = storage->open_dir(relative, "The path");
  Json out = Json::array();
  if (!folder) return out;
  for (const auto& e : folder->list()) {
    // A name that is not UTF-8 (the setup task made it) is listed with U+FFFD and no URL.
    const bool utf8 = is_valid_utf8(e.name);
    const std::string name = utf8 ? e.name : to_valid_utf8(e.name);
    if (e.is_dir()) {
      out.push_back({{"download_url", nullptr}, {"is_directory", true}, {"name", name}, {"size", nullptr}});
    } else {
      // A URL that works here, as `job file list` gives (an Azure SAS URL would lead nowhere);
      // a link that leads out or dangles gets neither URL nor size.
      const bool file = e.is_file();
      out.push_back({{"download_url", file && utf8 ? Json("file://" + fs::absolute(folder->path() / e.name).string()) : Json()},
                     {"is_directory", false},
                     {"name", name},
                     {"size", file ? Json(static_cast<std::uint64_t>(e.target->st_size)) : Json()}});
    }
  }
  return out;
}

}  // namespace batchai::control_plane
