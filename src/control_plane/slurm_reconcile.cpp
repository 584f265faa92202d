// The Slurm part of a reconcile: scoped to the clusters a command touches, bounded by one budget,
// skipped while the controller backs off (a row of slurm_controllers, shared by every process).
#include "slurm_reconcile.hpp"

#include <algorithm>
#include <cstdlib>

#include "batchai/common/ids.hpp"
#include "batchai/common/log.hpp"
#include "jobs/job_rows.hpp"
#include "jobs/slurm_jobs.hpp"
#include "slurm_clusters.hpp"

namespace batchai::control_plane::detail {

namespace {

constexpr const char* kSilentCode = "SlurmControllerUnreachable";

// A command started with less than this left could only time out, and would call a live
// controller silent: it is not started.
constexpr std::chrono::milliseconds kMinCommand{400};

std::string controller_label(const std::string& key) {
  return key.empty() ? std::string("the system's slurm.conf") : "SLURM_CONF=" + key;
}

// Writes `entry` as the only errors entry of every Slurm cluster and unfinished Slurm job (inside a
// write transaction); with a null entry, removes the silence's entries instead.
void mark_slurm_resources(Store& store, const Json& entry) {
  std::vector<std::pair<std::int64_t, std::string>> clusters;
  {
    auto st = store.prepare("SELECT id, doc FROM clusters WHERE private LIKE '%\"slurm\":{%'");
    while (st.step()) clusters.emplace_back(st.integer(0), st.text(1));
  }
  for (auto& [id, text] : clusters) {
    Json doc = parse_doc(text);
    if (entry.is_null()) {
      const Json& errors = doc.value("errors", Json());
      if (!errors.is_array() || errors.empty() || value_or<std::string>(errors[0], "code", "") != kSilentCode)
        continue;
      doc["errors"] = nullptr;
    } else {
      Json e = entry;
      doc["errors"] = Json::array({e});
    }
    store.prepare("UPDATE clusters SET doc = ? WHERE id = ?").bind(1, dump_doc(doc)).bind(2, id).run();
  }
  std::vector<std::pair<std::int64_t, std::string>> jobs;
  {
    auto st = store.prepare(entry.is_null() ? "SELECT id, doc FROM jobs WHERE doc -> '$.errors' IS NOT NULL AND "
                                              "private LIKE '%\"slurm\":{%'"
                                            : "SELECT id, doc FROM jobs WHERE state IN ('queued', 'running', "
                                              "'terminating') AND private LIKE '%\"slurm\":{%'");
    while (st.step()) jobs.emplace_back(st.integer(0), st.text(1));
  }
  for (auto& [id, text] : jobs) {
    Json doc = parse_doc(text);
    // A job's own outcome is in executionInfo.errors; the top-level entry is the controller's silence.
    if (entry.is_null())
      doc.erase("errors");
    else
      doc["errors"] = Json::array({entry});
    store.prepare("UPDATE jobs SET doc = ? WHERE id = ?").bind(1, dump_doc(doc)).bind(2, id).run();
  }
}

// Cancels the Slurm jobs a terminate or delete could not (the controller was silent then).
void run_queued_cancels(ControlPlane& cp, const SlurmBudget& budget) {
  Store& store = cp.store();
  const std::string key = slurm_controller_key();
  std::vector<std::int64_t> ids = store.read([&] {
    std::vector<std::int64_t> out;
    auto st = store.prepare("SELECT slurm_job_id FROM slurm_cancels WHERE controller = ? ORDER BY since_us");
    st.bind(1, key);
    while (st.step()) out.push_back(st.integer(0));
    return out;
  });
  for (std::int64_t id : ids) {
    if (budget.spent()) return;
    try {
      slurm::SlurmClient(cp.launcher(), budget.options()).cancel(static_cast<slurm::JobId>(id));
    } catch (const NotFound&) {
      // Slurm forgot it: nothing left to cancel
    } catch (const Error& e) {
      if (is_silent_controller(e)) throw;
      log::warning("Cannot cancel Slurm job " + std::to_string(id) + ": " + e.what());
    }
    store.write([&] {
      store.prepare("DELETE FROM slurm_cancels WHERE controller = ? AND slurm_job_id = ?").bind(1, key).bind(2, id).run();
    });
  }
}

}  // namespace

SlurmBudget::SlurmBudget(std::chrono::milliseconds total) : deadline_(std::chrono::steady_clock::now() + total) {}

slurm::ClientOptions SlurmBudget::options() const {
  slurm::ClientOptions o;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
  o.command_timeout = std::max(left, std::chrono::milliseconds(1));
  return o;
}

bool SlurmBudget::spent() const { return deadline_ - std::chrono::steady_clock::now() < kMinCommand; }

std::string slurm_controller_key() {
  const char* conf = std::getenv("SLURM_CONF");
  return conf != nullptr ? conf : "";
}

bool is_silent_controller(const Error& e) { return e.code() == kSilentCode; }

std::optional<Json> silent_controller_entry(ControlPlane& cp, std::int64_t now_us) {
  Store& store = cp.store();
  return store.read([&]() -> std::optional<Json> {
    auto st = store.prepare("SELECT silent_until_us, error FROM slurm_controllers WHERE controller = ?");
    st.bind(1, slurm_controller_key());
    if (!st.step() || now_us >= st.integer(0)) return std::nullopt;
    return parse_doc(st.text(1));
  });
}

void refuse_while_silent(ControlPlane& cp) {
  if (auto entry = silent_controller_entry(cp, to_us(cp.clock().now())))
    throw SystemError(value_or<std::string>(*entry, "message", "The Slurm controller does not answer."), kSilentCode);
}

void record_silent_controller(ControlPlane& cp, const Error& e) {
  const std::int64_t now = to_us(cp.clock().now());
  const std::int64_t until = now + kSilentControllerBackoffUs;
  const std::string key = slurm_controller_key();
  const Json entry = {{"code", kSilentCode},
                      {"details", Json::array({{{"name", "controller"}, {"value", controller_label(key)}},
                                               {{"name", "silentSince"}, {"value", iso_us(now)}},
                                               {{"name", "nextAttempt"}, {"value", iso_us(until)}}})},
                      {"message", "The Slurm controller did not answer at " + iso_us(now) +
                                      "; the state shown is the last known one, and Slurm is asked again after " +
                                      iso_us(until) + ". " + e.what()}};
  log::warning(entry["message"].get<std::string>());
  Store& store = cp.store();
  store.write([&] {
    store.prepare(
             "INSERT INTO slurm_controllers(controller, silent_until_us, error) VALUES (?, ?, ?) "
             "ON CONFLICT(controller) DO UPDATE SET silent_until_us = excluded.silent_until_us, error = excluded.error")
        .bind(1, key).bind(2, until).bind(3, dump_doc(entry)).run();
    mark_slurm_resources(store, entry);
  });
}

void queue_slurm_cancel(ControlPlane& cp, std::uint64_t slurm_job_id) {
  Store& store = cp.store();
  store.write([&] {
    store.prepare("INSERT OR IGNORE INTO slurm_cancels(controller, slurm_job_id, since_us) VALUES (?, ?, ?)")
        .bind(1, slurm_controller_key())
        .bind(2, static_cast<std::int64_t>(slurm_job_id))
        .bind(3, to_us(cp.clock().now()))
        .run();
  });
}

void reconcile_slurm(ControlPlane& cp, const std::vector<std::int64_t>& clusters) {
  if (clusters.empty()) return;
  Store& store = cp.store();
  const std::int64_t now = to_us(cp.clock().now());
  const std::string key = slurm_controller_key();
  const std::optional<std::int64_t> silent_until = store.read([&] {
    auto st = store.prepare("SELECT silent_until_us FROM slurm_controllers WHERE controller = ?");
    st.bind(1, key);
    return st.step() ? std::optional<std::int64_t>(st.integer(0)) : std::nullopt;
  });
  // Backing off: the stored state and its errors entries are the answer, at once.
  if (silent_until && now < *silent_until) return;
  const bool was_silent = silent_until.has_value();
  SlurmBudget budget;
  try {
    refresh_slurm_clusters(cp, clusters, budget);
    if (!budget.spent()) jobs_detail::refresh_slurm_jobs(cp, clusters, budget);
    if (!budget.spent()) jobs_detail::submit_slurm_jobs(cp, clusters, budget);
    if (!budget.spent()) run_queued_cancels(cp, budget);
  } catch (const Error& e) {
    if (!is_silent_controller(e)) throw;
    record_silent_controller(cp, e);
    return;
  }
  if (was_silent)  // it answers again: the silence's entries go, everywhere
    store.write([&] {
      store.prepare("DELETE FROM slurm_controllers WHERE controller = ?").bind(1, key).run();
      mark_slurm_resources(store, nullptr);
    });
}

std::vector<std::int64_t> slurm_scope_of_cluster(Store& store, const WorkspaceRef& ref, const std::string& name) {
  return store.read([&] {
    std::vector<std::int64_t> out;
    auto ws = find_workspace(store, ref);
    if (!ws) return out;
    auto st = store.prepare("SELECT id, private FROM clusters WHERE workspace_id = ? AND name_lc = ?");
    st.bind(1, ws->id).bind(2, to_lower(name));
    if (st.step() && slurm_partition(parse_doc(st.text(1)))) out.push_back(st.integer(0));
    return out;
  });
}

std::vector<std::int64_t> slurm_scope_of_workspace(Store& store, const WorkspaceRef& ref) {
  return store.read([&] {
    std::vector<std::int64_t> out;
    auto ws = find_workspace(store, ref);
    if (!ws) return out;
    auto st = store.prepare("SELECT id, private FROM clusters WHERE workspace_id = ? AND private LIKE '%\"slurm\":{%'");
    st.bind(1, ws->id);
    while (st.step())
      if (slurm_partition(parse_doc(st.text(1)))) out.push_back(st.integer(0));
    return out;
  });
}

std::vector<std::int64_t> slurm_scope_of_job(Store& store, const JobRef& ref) {
  return store.read([&] {
    std::vector<std::int64_t> out;
    auto job = jobs_detail::find_job(store, ref);
    if (job && job->cluster_id && jobs_detail::is_slurm_job(*job) &&
        (job->state == "queued" || job->state == "running" || job->state == "terminating"))
      out.push_back(*job->cluster_id);
    return out;
  });
}

std::vector<std::int64_t> slurm_scope_of_experiment(Store& store, const WorkspaceRef& where,
                                                    const std::string& experiment) {
  return store.read([&] {
    std::vector<std::int64_t> out;
    auto ws = find_workspace(store, where);
    if (!ws) return out;
    auto st = store.prepare(
        "SELECT DISTINCT j.cluster_id FROM jobs j JOIN experiments e ON e.id = j.experiment_id WHERE e.workspace_id = ? "
        "AND e.name_lc = ? AND j.state IN ('queued', 'running', 'terminating') AND j.cluster_id IS NOT NULL AND "
        "j.private LIKE '%\"slurm\":{%'");
    st.bind(1, ws->id).bind(2, to_lower(experiment));
    while (st.step()) out.push_back(st.integer(0));
    return out;
  });
}

}  // namespace batchai::control_plane::detail
