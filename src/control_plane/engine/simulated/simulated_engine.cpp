#include "simulated_engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <thread>

#include "batchai/common/log.hpp"
#include "batchai/common/port_forward.hpp"
#include "batchai/common/process.hpp"
#include "jobs/idle_supervisors.hpp"
#include "jobs/job_processes.hpp"
#include "store/cluster_nodes.hpp"
#include "store/jobs.hpp"
#include "node_folders.hpp"
#include "node_steps.hpp"
#include "setup_task.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane::simulated {

using namespace detail;
using namespace jobs_detail;

namespace {

Json node_entry(const ClusterRow& cluster, const std::string& node_id, std::int64_t ordinal) {
  return {{"ipAddress", cluster.public_ip}, {"nodeId", node_id}, {"port", static_cast<double>(50000 + ordinal)}};
}

// The cluster's node errors: a volume that could not be mounted, a setup task that failed.
Json node_error(const NodeLayout& layout, const ClusterRow& c, const std::string& node, bool exit_known, std::int64_t exit) {
  std::string mount_error;  // written by mount_node
  if (!exit_known && std::getline(std::ifstream(layout.node(c.resource_group, c.workspace, c.name, node) / ".mount_error"),
                                  mount_error))
    return {{"code", "NodeSetupFailed"},
            {"details", Json::array({{{"name", "nodeId"}, {"value", node}}})},
            {"message", "The node " + node + " could not be set up: " + mount_error}};
  const std::string code = exit_known ? std::to_string(exit) : "unknown";
  return {{"code", "SetupTaskFailed"},
          {"details", Json::array({{{"name", "nodeId"}, {"value", node}}, {{"name", "exitCode"}, {"value", code}}})},
          {"message", "The node setup task failed on node " + node + " with exit code " + code + ". See stderr-" + node +
                          ".txt in the setup task output folder ('batchai cluster file list')."}};
}

// -L tunnels that live as long as --exec runs, or until Ctrl-C without it (docs/job-runtime.md §4.10.6).
std::vector<std::unique_ptr<PortForwarder>> open_tunnels(const NodeExecOptions& options, const std::string& node_id) {
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
  return tunnels;
}

}  // namespace

bool SimulatedEngine::describe_new(Json& doc, const EnginePlacement*, const NewCluster& cluster) {
  doc["allocationState"] = to_string(cluster.desired_nodes > 0 ? AllocationState::kResizing : AllocationState::kSteady);
  return cluster.desired_nodes > 0;
}

void SimulatedEngine::step(const ClusterRow& cluster, std::int64_t now_us) { step_cluster(cx_, cluster, now_us); }

void SimulatedEngine::start_work(std::int64_t cluster_id) {
  if (start_node_work(cx_, cluster_id)) docs_.refresh(cluster_id);
}

void SimulatedEngine::refresh_counts(ClusterRow& c) {
  std::map<std::string, int> counts;
  Json errors = Json::array();
  int total = 0;
  for (const StoredNode& n : cluster_nodes(cx_.store(), c.id)) {
    ++counts[n.state];
    ++total;
    if (n.setup == "failed") errors.push_back(node_error(cx_.layout(), c, n.node_id, n.setup_exit.has_value(), n.setup_exit.value_or(0)));
  }
  c.doc["nodeStateCounts"] = {{"idleNodeCount", counts["idle"]},         {"leavingNodeCount", counts["leaving"]},
                              {"preparingNodeCount", counts["preparing"]}, {"runningNodeCount", counts["running"]},
                              {"unusableNodeCount", counts["unusable"]}};
  c.doc["currentNodeCount"] = total;
  c.doc["errors"] = errors.empty() ? Json(nullptr) : errors;
  c.doc["allocationState"] = to_string(c.alloc_state);
  c.doc["allocationStateTransitionTime"] = iso_us(c.alloc_changed_us);
}

Json SimulatedEngine::list_nodes(const ClusterRow& cluster) {
  return cx_.store().read([&] {
    Json out = Json::array();
    for (const auto& [node_id, ordinal] : staying_nodes(cx_.store(), cluster.id))
      out.push_back(node_entry(cluster, node_id, ordinal));
    return out;
  });
}

std::vector<EngineNode> SimulatedEngine::nodes_with_jobs(const ClusterRow& cluster, std::size_t limit) const {
  std::vector<EngineNode> out;
  for (auto& n : node_holders(cx_.store(), cluster.id, limit))
    out.push_back({std::move(n.node_id), std::move(n.state), std::move(n.job_key)});
  return out;
}

void SimulatedEngine::exec(const ClusterRow& cluster, const NodeExecOptions& options, const JobRow*) {
  const Json nodes = list_nodes(cluster);
  if (nodes.empty()) throw InvalidArgument("No nodes available in the cluster");
  std::string node_id = nodes[0]["nodeId"].get<std::string>();
  if (options.node_id) {
    auto it = std::find_if(nodes.begin(), nodes.end(), [&](const Json& n) { return n["nodeId"] == *options.node_id; });
    if (it == nodes.end()) throw InvalidArgument("Cannot find a node with id=" + *options.node_id);
    node_id = *options.node_id;
  }
  auto tunnels = open_tunnels(options, node_id);
  if (!options.exec) {
    if (tunnels.empty()) return;
    log::warning("Press Ctrl-C to stop forwarding.");
    for (;;) ::pause();  // the CLI ends the command on Ctrl-C (exit 0)
  }
  const fs::path node = cx_.layout().node(cluster.resource_group, cluster.workspace, cluster.name, node_id);
  ensure_node_folder(cx_.layout(), cluster.doc, node);
  ProcessSpec spec;
  spec.env = node_mount_environment(node);
  spec.env["BATCHAI_EXEC_COMMAND"] = *options.exec;
  spec.argv = {"bash", "-c", "exec 2>&1; exec bash -lc \"$BATCHAI_EXEC_COMMAND\""};  // both streams to stdout
  spec.cwd = node;
  spec.new_session = false;  // Ctrl-C reaches the command too
  cx_.launcher().run(spec);  // the remote exit code is not propagated (docs/job-runtime.md §4.10.6)
}

void SimulatedEngine::remove(const ClusterRow& cluster) {
  const fs::path dir = cx_.layout().cluster(cluster.resource_group, cluster.workspace, cluster.name);
  std::error_code ec;
  for (const auto& node : fs::directory_iterator(dir / "nodes", ec)) stop_setup_task(cx_.launcher(), node.path());
}

// A job that idle nodes wait for (no more queued jobs than the cluster has idle nodes) gets its
// supervisor now, so that it starts up while Jobs::create places the job, unless a supervisor
// waits for the cluster's next job (the placement hands the job to it). The others get theirs
// when they get their nodes: from the supervisor of the job that freed them, which runs them
// itself, or from the scheduler (scheduler.hpp).
void SimulatedEngine::start_job(const std::string& job_key, const ClusterRow& cluster) {
  Store& store = cx_.store();
  const bool among_first = store.read([&] { return queue_fits_idle_nodes(store, cluster.id); });
  if (among_first && !idle_supervisor_waits(cx_.layout(), cluster.id) && claim_supervisor_start(cx_.layout(), job_key))
    spawn_supervisor(cx_, job_key);
}

void SimulatedEngine::stop_job(const JobRow& job) { kill_job_processes(cx_, job.key, job.sup_pid); }

void SimulatedEngine::terminate(const JobRow& job) {
  // The supervisor sees `terminating`, stops the process tree and records `failed`.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (supervisor_alive(cx_.layout(), job.key) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Store& store = cx_.store();
  store.write([&] {
    auto j = load_job_by_key(store, job.key);
    if (!j || (j->state != JobState::kTerminating && j->state != JobState::kRunning)) return;
    // The supervisor did not finish in time (or is gone): end the tree here.
    kill_job_processes(cx_, j->key, j->sup_pid);
    finish_job(*j, false, std::nullopt, job_error("JobTerminated", "The job was terminated by the user."), cx_.now_us());
    save_job(store, *j);
    for (auto cluster : release_nodes(store, j->key)) docs_.refresh(cluster);
  });
}

Json SimulatedEngine::job_nodes(const JobRow& job, const ClusterRow* cluster) {
  Json out = Json::array();
  if (cluster == nullptr || !job.private_data.contains("nodes")) return out;
  for (const auto& id : job.private_data["nodes"]) {
    const auto ordinal = staying_node_ordinal(cx_.store(), cluster->id, id.get<std::string>());
    if (ordinal) out.push_back(node_entry(*cluster, id.get<std::string>(), *ordinal));  // still allocated
  }
  return out;
}

}  // namespace batchai::control_plane::simulated
