// The dashboard's reads (batchai/control_plane/dashboard_reads.hpp): each is a few indexed or
// column-limited queries in one read transaction; whole documents are parsed only for the rows
// an answer shows (a page of 100, at most 100 clusters).
#include "batchai/control_plane/dashboard_reads.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "batchai/common/ids.hpp"
#include "batchai/common/utf8.hpp"
#include "batchai/control_plane/control_plane.hpp"
#include "batchai/runtime/job.hpp"
#include "engine/cluster_engine.hpp"
#include "node_mounts.hpp"
#include "reconciler.hpp"
#include "store/dashboard.hpp"
#include "store/jobs.hpp"
#include "store/rows.hpp"
#include "store/store.hpp"

namespace batchai::control_plane {

using namespace detail;

namespace {

// FNV-1a over the rows that make a version: cheap, and any change of a hashed field changes it.
struct Fnv {
  std::uint64_t h = 1469598103934665603ull;
  void add(std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // field separator
  }
  void add(std::int64_t v) { add(std::to_string(v)); }
  std::string hex() const {
    static const char* d = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 0; i < 16; ++i) out[15 - i] = d[(h >> (4 * i)) & 15];
    return out;
  }
};

std::string ordinal(std::int64_t n) {
  const std::int64_t tens = n % 100;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

std::string nodes_word(std::int64_t n) { return std::to_string(n) + (n == 1 ? " idle node" : " idle nodes"); }

// Where each queued job of the page stands: its place in the scheduler's order (priority, then
// creation, then row id, as Scheduler::place_queued reads them) and why it waits.
void explain_queue(Store& store, const Engines& engines, std::vector<DashboardJob>& jobs,
                   const std::vector<std::int64_t>& ids, const std::vector<std::optional<std::int64_t>>& clusters) {
  std::map<std::int64_t, std::map<std::int64_t, std::int64_t>> place;  // cluster -> job id -> position
  // Jobs of engines that schedule themselves, by cluster: each engine is asked once per cluster.
  std::map<std::int64_t, std::pair<std::vector<std::size_t>, std::vector<jobs_detail::JobRow>>> engine_queued;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (parse_job_state(jobs[i].state) != JobState::kQueued) continue;
    if (!clusters[i]) {
      jobs[i].wait_reason = "Its cluster was deleted; it will not start.";
      continue;
    }
    const std::int64_t cluster = *clusters[i];
    auto row = load_cluster(store, cluster);
    if (!row) continue;
    if (engines.of(*row).schedules_itself()) {
      auto job = jobs_detail::load_job_by_id(store, ids[i]);
      if (!job) continue;
      auto& [indexes, rows] = engine_queued[cluster];
      indexes.push_back(i);
      rows.push_back(std::move(*job));
      continue;
    }
    if (!place.count(cluster)) {
      std::int64_t n = 0;
      auto& m = place[cluster];
      for (std::int64_t id : queued_job_order(store, cluster)) m[id] = ++n;
    }
    auto it = place[cluster].find(ids[i]);
    if (it == place[cluster].end()) continue;
    jobs[i].queue_position = it->second;
    const auto [idle, room] = node_room(store, cluster);
    std::int64_t capacity = room;
    if (row->scale_mode == "auto") capacity = std::max<std::int64_t>(capacity, row->max_nodes);
    const std::int64_t need = jobs[i].node_count;
    if (need > capacity) {
      jobs[i].wait_reason = "Needs " + std::to_string(need) + " nodes but " + row->name + " has at most " +
                            std::to_string(capacity) + "; it waits (without holding up the others) until the cluster grows.";
      continue;
    }
    jobs[i].wait_reason = "Waits for " + nodes_word(need) + " of " + row->name + " (" + std::to_string(idle) + " idle); " +
                          ordinal(it->second) + " in line by priority then creation time.";
  }
  for (const auto& [cluster, asked] : engine_queued) {
    auto row = load_cluster(store, cluster);
    if (!row) continue;
    const auto& [indexes, rows] = asked;
    const std::vector<EngineQueuePlace> places = engines.of(*row).queue_places(*row, rows);
    for (std::size_t k = 0; k < indexes.size() && k < places.size(); ++k) {
      jobs[indexes[k]].queue_position = places[k].position;
      jobs[indexes[k]].wait_reason = places[k].reason;
    }
  }
}

// The mount link that `mount_path` starts with (the longest one) and what is left after it.
std::optional<std::pair<std::filesystem::path, std::string>> resolve_mount(const std::vector<runtime::MountLink>& links,
                                                                           const std::string& mount_path) {
  std::optional<std::pair<std::filesystem::path, std::string>> best;
  std::size_t best_len = 0;
  for (const auto& link : links) {
    const std::string& prefix = link.relative_path;
    if (prefix.empty() || link.target.empty()) continue;  // an unmanaged file system has no folder of ours
    if (mount_path.size() <= prefix.size() + 1 || mount_path.compare(0, prefix.size(), prefix) != 0 ||
        mount_path[prefix.size()] != '/')
      continue;
    if (prefix.size() > best_len) {
      best_len = prefix.size();
      best = std::make_pair(link.target, mount_path.substr(prefix.size() + 1));
    }
  }
  return best;
}

}  // namespace

namespace {

// The overview's parts, each adding what it read to the version, in one read transaction.
void read_workspaces(Store& store, std::size_t limit, DashboardOverview& out, Fnv& version) {
  for (auto& [group, workspace] : workspace_names(store, limit + 1)) {
    if (out.workspaces.size() == limit) {
      out.truncated = true;
      break;
    }
    version.add(group);
    version.add(workspace);
    out.workspaces.push_back({std::move(group), std::move(workspace)});
  }
}

DashboardCluster cluster_summary(const ClusterRow& row, std::string_view engine) {
  DashboardCluster c;
  c.resource_group = row.resource_group;
  c.workspace = row.workspace;
  c.name = row.name;
  c.engine = engine;
  const Json& d = row.doc;
  c.vm_size = value_or<std::string>(d, "vmSize", "");
  c.allocation_state = value_or<std::string>(d, "allocationState", "");
  c.current_nodes = d.value("currentNodeCount", Json(0)).is_number_integer() ? d["currentNodeCount"].get<std::int64_t>() : 0;
  c.target_nodes = desired_nodes(row);
  const Json counts = d.value("nodeStateCounts", Json::object());
  auto count = [&](const char* key) {
    return counts.is_object() && counts.contains(key) && counts[key].is_number_integer() ? counts[key].get<std::int64_t>() : 0;
  };
  c.idle = count("idleNodeCount");
  c.running = count("runningNodeCount");
  c.preparing = count("preparingNodeCount");
  c.unusable = count("unusableNodeCount");
  c.leaving = count("leavingNodeCount");
  return c;
}

void read_clusters(Store& store, const Engines& engines, std::size_t limit, DashboardOverview& out, Fnv& version) {
  std::vector<std::int64_t> ids = cluster_ids_by_name(store, limit + 1);
  if (ids.size() > limit) {
    ids.resize(limit);
    out.truncated = true;
  }
  for (std::int64_t id : ids) {
    auto row = load_cluster(store, id);
    if (!row) continue;
    DashboardCluster c = cluster_summary(*row, engines.of(*row).engine_name());
    version.add(id);
    version.add(c.allocation_state);
    version.add(row->doc.value("nodeStateCounts", Json()).dump());
    version.add(c.current_nodes);
    version.add(c.target_nodes);
    out.clusters.push_back(std::move(c));
  }
}

void read_experiments(Store& store, std::size_t limit, DashboardOverview& out, Fnv& version) {
  std::map<std::int64_t, std::size_t> index;
  for (auto& e : experiment_names(store, limit + 1)) {
    if (out.experiments.size() == limit) {
      out.truncated = true;
      break;
    }
    index[e.id] = out.experiments.size();
    out.experiments.push_back({std::move(e.resource_group), std::move(e.workspace), std::move(e.name), {}});
    version.add(e.id);
  }
  for (auto& e : out.experiments)
    for (JobState s : {JobState::kQueued, JobState::kRunning, JobState::kTerminating, JobState::kSucceeded,
                       JobState::kFailed})
      e.job_counts[std::string(to_string(s))] = 0;
  // One pass over the jobs (id and state only): the counts and the version together.
  // From the index jobs_by_experiment (migrations.cpp v4) alone: no document is read.
  for (const auto& j : job_states(store)) {
    version.add(j.id);
    version.add(j.state);
    auto it = index.find(j.experiment_id);
    if (it != index.end()) ++out.experiments[it->second].job_counts[j.state];
  }
}

void read_node_states(Store& store, Fnv& version) {
  for (const auto& n : node_states(store)) {
    version.add(n.id);
    version.add(n.state);
    version.add(n.job_key);
  }
}

}  // namespace

DashboardOverview DashboardReads::overview(std::size_t max_clusters, std::size_t max_experiments, bool ask_engines) {
  if (ask_engines)
    cp_.reconcile(ClusterScope::of_home(cp_.store(), max_clusters));
  else
    cp_.reconcile();
  Store& store = cp_.store();
  return store.read([&] {
    DashboardOverview out;
    Fnv version;
    read_workspaces(store, max_experiments, out, version);
    read_clusters(store, cp_.engines(), max_clusters, out, version);
    read_experiments(store, max_experiments, out, version);
    read_node_states(store, version);
    out.version = version.hex();
    return out;
  });
}

DashboardJobPage DashboardReads::jobs(const WorkspaceRef& where, const std::string& experiment, const std::string& state,
                                      std::int64_t page, std::int64_t limit, bool ask_engines) {
  if (ask_engines)
    cp_.reconcile(ClusterScope::of_experiment(cp_.store(), where, experiment));
  else
    cp_.reconcile();
  Store& store = cp_.store();
  return store.read([&] {
    DashboardJobPage out;
    const std::int64_t exp = jobs_detail::require_experiment(store, where, experiment);
    Fnv version;
    for (const char* s : {"queued", "running", "terminating", "succeeded", "failed"}) out.counts[s] = 0;
    for (const auto& j : job_states_of_experiment(store, exp)) {
      version.add(j.id);
      version.add(j.state);
      ++out.counts[j.state];
    }
    out.version = version.hex();
    out.total = 0;
    for (const auto& [s, n] : out.counts)
      if (state.empty() || s == state) out.total += n;
    std::vector<std::int64_t> ids;
    std::vector<std::optional<std::int64_t>> clusters;
    for (auto& row : job_page(store, exp, state, limit, page * limit)) {
      DashboardJob j;
      ids.push_back(row.id);
      j.name = std::move(row.name);
      j.state = std::move(row.state);
      j.cluster = row.cluster.value_or("");
      j.node_count = row.node_count;
      j.tool_type = row.tool_type.value_or("");
      j.creation_time = std::move(row.creation_time);
      j.start_time = std::move(row.start_time);
      j.end_time = std::move(row.end_time);
      j.exit_code = row.exit_code;
      clusters.push_back(row.cluster_id);
      out.jobs.push_back(std::move(j));
    }
    explain_queue(store, cp_.engines(), out.jobs, ids, clusters);
    return out;
  });
}

std::vector<std::pair<std::string, std::string>> DashboardReads::newest_jobs(const WorkspaceRef& where,
                                                                             const std::string& experiment,
                                                                             std::int64_t limit) {
  cp_.reconcile();
  Store& store = cp_.store();
  return store.read([&] {
    const std::int64_t exp = jobs_detail::require_experiment(store, where, experiment);
    return newest_job_states(store, exp, limit);
  });
}

DashboardClusterNodes DashboardReads::cluster_nodes(const WorkspaceRef& where, const std::string& cluster,
                                                   std::size_t limit) {
  Store& store = cp_.store();
  return store.read([&] {
    const ClusterRow row = require_cluster(store, where, cluster);
    DashboardClusterNodes out;
    const Engines& engines = cp_.engines();
    out.engine = engines.of(row).engine_name();
    out.allocation_state = value_or<std::string>(row.doc, "allocationState", "");
    // Each engine names its own nodes (Slurm's node names on a Slurm cluster); a job's nodes
    // share one lookup of its name and engine job id.
    std::map<std::string, DashboardNode> job_of;
    for (auto& node : engines.of(row).nodes_with_jobs(row, limit)) {
      DashboardNode n;
      n.node_id = std::move(node.name);
      n.state = std::move(node.state);
      if (node.job_key) {
        auto [it, added] = job_of.try_emplace(*node.job_key);
        if (added) {
          if (auto names = job_names_by_key(store, *node.job_key)) {
            it->second.job_experiment = std::move(names->first);
            it->second.job_name = std::move(names->second);
          }
          if (auto job = jobs_detail::load_job_by_key(store, *node.job_key)) it->second.engine_job_id = engines.of(*job).engine_job_id(*job);
        }
        n.job_experiment = it->second.job_experiment;
        n.job_name = it->second.job_name;
        n.engine_job_id = it->second.engine_job_id;
      }
      out.nodes.push_back(std::move(n));
    }
    return out;
  });
}

std::optional<std::int64_t> DashboardReads::engine_job_id(const JobRef& job) {
  Store& store = cp_.store();
  return store.read([&]() -> std::optional<std::int64_t> {
    auto row = jobs_detail::find_job(store, job);
    if (!row) return std::nullopt;
    return cp_.engines().of(*row).engine_job_id(*row);
  });
}

std::optional<DashboardMountFile> DashboardReads::open_mount_file(const JobRef& job, bool job_root,
                                                                  const std::string& mount_path, std::uint64_t max_bytes) {
  try {
    // A manifest is the job's own writing: refused before anything is looked up unless it is a
    // plain relative path.
    if (mount_path.empty() || mount_path.size() > 1024 || mount_path.front() == '/' || !is_valid_utf8(mount_path) ||
        mount_path.find('\0') != std::string::npos || mount_path.find('\\') != std::string::npos)
      return std::nullopt;
    for (const auto& part : std::filesystem::path(mount_path))
      if (part == ".." || part == ".") return std::nullopt;
    Store& store = cp_.store();
    Json volumes = store.read([&]() -> Json {
      auto row = jobs_detail::find_job(store, job);
      if (!row) return Json();
      if (job_root) return row->doc.value("mountVolumes", Json());
      if (!row->cluster_id) return Json();
      // A cluster's volumes are part of its node setup.
      auto cluster = load_cluster(store, *row->cluster_id);
      if (!cluster || !cluster->doc.value("nodeSetup", Json()).is_object()) return Json();
      return cluster->doc["nodeSetup"].value("mountVolumes", Json());
    });
    if (!volumes.is_object()) return std::nullopt;
    const auto links = mount_links(cp_.layout(), runtime::parse_mount_volumes(volumes));
    auto where = resolve_mount(links, mount_path);
    if (!where) return std::nullopt;
    auto dir = ConfinedDir::open(where->first, "a mount volume of job '" + job.name + "'");
    if (!dir) return std::nullopt;
    auto fd = dir->open_file(where->second, "The manifest's file");
    struct stat st {};
    if (!fd || ::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) > max_bytes)
      return std::nullopt;
    return DashboardMountFile{std::move(*fd), static_cast<std::uint64_t>(st.st_size)};
  } catch (...) {
    return std::nullopt;  // a hostile manifest yields no file, never an error
  }
}

}  // namespace batchai::control_plane
