#include "node_steps.hpp"

#include <algorithm>
#include <ctime>
#include <fstream>

#include "batchai/common/log.hpp"
#include "batchai/runtime/node_dir.hpp"
#include "store/cluster_nodes.hpp"
#include "setup_task.hpp"
#include "vm_sizes.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane::simulated {

using namespace detail;

namespace {

struct NodeRow {
  std::int64_t row = 0;
  std::string node_id;
  NodeState state = NodeState::kPreparing;
  std::string setup;
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

NodeState stored_node_state(const std::string& text) {
  if (auto state = parse_node_state(text)) return *state;
  throw std::runtime_error("The store holds a node in an unknown state: " + text.substr(0, 32));
}

int removal_rank(NodeState state) {
  if (state == NodeState::kIdle) return 0;
  if (state == NodeState::kUnusable) return 1;
  if (state == NodeState::kPreparing) return 2;
  return 3;  // running: last
}

// One cluster's step: its rows, what changed, and the allocation it ends in.
class ClusterStep {
 public:
  ClusterStep(const Context& cx, const ClusterRow& c, std::int64_t now)
      : cx_(cx), store_(cx.store()), c_(c), now_(now), event_(now),
        prov_(cx.settings().provisioning_delay.count()), prep_(cx.settings().node_preparation_delay.count()),
        dir_(cx.layout().cluster(c.resource_group, c.workspace, c.name)) {}

  void run() {
    load_nodes();
    drop_departed();
    advance_preparation();
    // At most what the regional quota allows of the smallest VM: rows stored before counts were
    // checked (a negative or huge target) must neither crash nor flood the disk with node folders.
    const int desired = std::clamp(desired_nodes(c_), 0, kRegionalVcpuQuota);
    int active = static_cast<int>(std::count_if(nodes_.begin(), nodes_.end(), [](const NodeRow& n) { return n.state != NodeState::kLeaving; }));
    if (active < desired) {
      if (grow(active, desired)) active = desired;
    } else if (active > desired) {
      shrink(active, desired);
      active = desired;
    }
    save_allocation(active == desired);
  }

 private:
  void load_nodes() {
    for (const StoredNode& n : cluster_nodes(store_, c_.id))
      nodes_.push_back({n.row, n.node_id, stored_node_state(n.state), n.setup, n.ready_us, n.leave_us});
  }
  void set_state(NodeRow& n, NodeState state) {
    n.state = state;
    set_node_state(store_, n.row, std::string(to_string(state)), n.leave_us);
  }
  void remove_node(const NodeRow& n) {
    stop_setup_task(cx_.launcher(), dir_ / "nodes" / n.node_id);
    delete_node(store_, n.row);
    trash(store_, dir_ / "nodes" / n.node_id);
  }
  void start_resizing() {
    if (c_.alloc_state != AllocationState::kSteady) return;
    c_.alloc_state = AllocationState::kResizing;
    c_.alloc_started_us = now_;
    c_.alloc_changed_us = now_;
  }
  // Leaving nodes whose time is up are gone.
  void drop_departed() {
    std::erase_if(nodes_, [&](const NodeRow& n) {
      if (n.state != NodeState::kLeaving || n.leave_us.value_or(0) > now_) return false;
      remove_node(n);
      event_ = *n.leave_us;
      return true;
    });
  }
  // Setup tasks that finished, then preparing nodes whose preparation time passed.
  void advance_preparation() {
    for (auto& n : nodes_) {
      if (n.setup == "started") {
        std::ifstream in(dir_ / "nodes" / n.node_id / ".setup_exit");
        int code = 0;
        if (in >> code) {
          n.setup = code == 0 ? "done" : "failed";
          set_node_setup(store_, n.row, n.setup, code);
        }
      }
      if (n.state == NodeState::kPreparing && n.ready_us <= now_ && (n.setup == "none" || n.setup == "done" || n.setup == "failed"))
        set_state(n, n.setup == "failed" ? NodeState::kUnusable : NodeState::kIdle);
    }
  }
  // New nodes once the provisioning delay has passed; false while it has not.
  bool grow(int active, int desired) {
    start_resizing();
    if (now_ < c_.alloc_started_us + prov_) return false;
    const std::int64_t created = c_.alloc_started_us + prov_;
    const bool setup = has_setup_task(c_.doc);
    for (int i = active; i < desired; ++i) {
      const std::int64_t ordinal = c_.next_ordinal++;
      NodeRow n{0, c_.node_prefix + "_" + std::to_string(ordinal + 1) + "-" + node_timestamp(created), NodeState::kPreparing,
                setup ? "pending" : "none", created + prep_, std::nullopt};
      if (!setup && n.ready_us <= now_) n.state = NodeState::kIdle;
      StoredNode stored;
      stored.node_id = n.node_id;
      stored.state = to_string(n.state);
      stored.setup = n.setup;
      stored.ready_us = n.ready_us;
      n.row = insert_node(store_, c_.id, stored, ordinal, created);
      nodes_.push_back(n);
    }
    event_ = created;
    created_nodes_ = true;
    return true;
  }
  // Idle nodes leave first, running ones last; gone at once without a provisioning delay.
  void shrink(int active, int desired) {
    std::vector<NodeRow*> order;
    for (auto& n : nodes_)
      if (n.state != NodeState::kLeaving) order.push_back(&n);
    std::stable_sort(order.begin(), order.end(), [](const NodeRow* a, const NodeRow* b) {
      return removal_rank(a->state) < removal_rank(b->state);
    });
    for (int i = 0; i < active - desired; ++i) {
      order[static_cast<std::size_t>(i)]->leave_us = now_ + prov_;
      set_state(*order[static_cast<std::size_t>(i)], NodeState::kLeaving);
    }
    start_resizing();
    if (prov_ != 0) return;
    std::erase_if(nodes_, [&](const NodeRow& n) {
      if (n.state != NodeState::kLeaving) return false;
      remove_node(n);
      return true;
    });
  }
  void save_allocation(bool at_size) {
    const bool leaving = std::any_of(nodes_.begin(), nodes_.end(), [](const NodeRow& n) { return n.state == NodeState::kLeaving; });
    if (c_.alloc_state == AllocationState::kResizing && !leaving && at_size) {
      c_.alloc_state = AllocationState::kSteady;
      c_.alloc_changed_us = std::max(c_.alloc_changed_us, std::min(event_, now_));
    }
    // Nodes made in this step keep the cluster pending once more, so their folders get checked.
    const bool busy = created_nodes_ || c_.alloc_state == AllocationState::kResizing ||
                      std::any_of(nodes_.begin(), nodes_.end(), [](const NodeRow& n) {
                        return n.state == NodeState::kPreparing || n.state == NodeState::kLeaving;
                      });
    detail::save_allocation(store_, c_, busy);
  }

  const Context& cx_;
  Store& store_;
  ClusterRow c_;
  const std::int64_t now_;
  std::int64_t event_;
  const std::int64_t prov_, prep_;
  const fs::path dir_;
  std::vector<NodeRow> nodes_;
  bool created_nodes_ = false;
};

}  // namespace

void step_cluster(const Context& cx, const ClusterRow& cluster, std::int64_t now_us) {
  ClusterStep(cx, cluster, now_us).run();
}

bool start_node_work(const Context& cx, std::int64_t cluster_row_id) {
  Store& store = cx.store();
  const NodeLayout& layout = cx.layout();
  std::vector<std::string> preparing, claimed;
  auto cluster = store.write([&] {
    auto c = load_cluster(store, cluster_row_id);
    if (!c) return c;
    // Claimed inside the transaction: each setup task starts exactly once across processes.
    for (const auto& [node_id, setup] : claim_preparing_nodes(store, cluster_row_id)) {
      preparing.push_back(node_id);
      if (setup == "pending") claimed.push_back(node_id);
    }
    return c;
  });
  if (!cluster) return false;
  auto node_folder = [&](const std::string& id) { return layout.node(cluster->resource_group, cluster->workspace, cluster->name, id); };
  auto unmounted_at = [&](const std::string& id) {
    return !fs::exists(runtime::NodeDir(node_folder(id)).mounts()) && !mount_node(layout, cluster->doc, node_folder(id));
  };
  std::vector<std::string> unmounted;
  for (const auto& node_id : preparing)
    if (unmounted_at(node_id)) unmounted.push_back(node_id);
  for (const auto& node_id : claimed) {
    if (std::find(unmounted.begin(), unmounted.end(), node_id) != unmounted.end()) continue;  // no setup without mounts
    try {
      spawn_setup_task(cx.launcher(), *cluster, node_id, node_folder(node_id));
    } catch (const Error& e) {
      std::ofstream(node_folder(node_id) / ".setup_exit") << 127 << "\n";  // the node becomes unusable with a clear error
      log::warning(std::string("Cannot start the setup task on node ") + node_id + ": " + e.what());
    }
  }
  // Idle nodes created with no setup task and zero delay still need their folders.
  for (const auto& node_id : store.read([&] { return idle_node_ids(store, cluster_row_id); }))
    if (unmounted_at(node_id)) unmounted.push_back(node_id);
  if (unmounted.empty()) return false;
  store.write([&] {
    for (const auto& node_id : unmounted) fail_node_setup(store, cluster_row_id, node_id);
  });
  return true;
}

}  // namespace batchai::control_plane::simulated
