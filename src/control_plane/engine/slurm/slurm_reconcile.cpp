// The Slurm part of a reconcile: scoped to the clusters a command touches, bounded by one budget,
// skipped while the controller backs off (a row of slurm_controllers, shared by every process).
#include "slurm_reconcile.hpp"

#include <algorithm>
#include <cstdlib>

#include "batchai/common/ids.hpp"
#include "batchai/common/log.hpp"
#include "container_cleanups.hpp"
#include "jobs/job_processes.hpp"
#include "store/jobs.hpp"
#include "runner_records.hpp"
#include "slurm_jobs.hpp"
#include "slurm_clusters.hpp"
#include "store/slurm.hpp"

namespace batchai::control_plane::detail {

namespace {

namespace fs = std::filesystem;

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
  for (auto& [id, doc] : cluster_docs_of_engine(store, ClusterKind::kSlurm)) {
    if (entry.is_null()) {
      const Json& errors = doc.value("errors", Json());
      if (!errors.is_array() || errors.empty() || value_or<std::string>(errors[0], "code", "") != kSilentCode)
        continue;
      doc["errors"] = nullptr;
    } else {
      Json e = entry;
      doc["errors"] = Json::array({e});
    }
    save_cluster_doc(store, id, doc);
  }
  using jobs_detail::DocsOf;
  for (auto& [id, doc] : jobs_detail::engine_job_docs(store, ClusterKind::kSlurm,
                                                      entry.is_null() ? DocsOf::kWithErrors : DocsOf::kUnfinished)) {
    // A job's own outcome is in executionInfo.errors; the top-level entry is the controller's silence.
    if (entry.is_null())
      doc.erase("errors");
    else
      doc["errors"] = Json::array({entry});
    jobs_detail::save_job_doc(store, id, doc);
  }
}

// Cancels the Slurm jobs a terminate or delete could not (the controller was silent then).
void run_queued_cancels(const SlurmEnv& env, const SlurmBudget& budget) {
  Store& store = env.store();
  const std::string key = env.controller_key();
  const std::vector<QueuedCancel> cancels = store.read([&] { return queued_cancels(store, key); });
  for (const auto& [id, job_key] : cancels) {
    if (budget.spent()) return;
    try {
      // a cancel queued before job keys were recorded is checked against nothing, as it was then
      env.client(budget).cancel(static_cast<slurm::JobId>(id),
                                job_key.empty() ? fs::path() : env.layout().job_exchange(job_key));
    } catch (const NotFound&) {
      // Slurm forgot it: nothing left to cancel
    } catch (const Error& e) {
      if (is_silent_controller(e)) throw;
      log::warning("Cannot cancel Slurm job " + std::to_string(id) + ": " + e.what());
    }
    store.write([&] { forget_cancel(store, key, id); });
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

slurm::SlurmClient SlurmEnv::client(const SlurmBudget& budget) const {
  slurm::ClientOptions options = budget.options();
  options.slurm_conf = slurm_conf_;
  return slurm::SlurmClient(cx_.launcher(), options);
}

bool SlurmBudget::spent() const { return deadline_ - std::chrono::steady_clock::now() < kMinCommand; }

bool is_silent_controller(const Error& e) { return e.code() == kSilentCode; }

std::optional<Json> silent_controller_entry(const SlurmEnv& env, std::int64_t now_us) {
  Store& store = env.store();
  const auto silence = store.read([&] { return controller_silence(store, env.controller_key()); });
  if (!silence || now_us >= silence->until_us) return std::nullopt;
  return silence->entry;
}

void refuse_while_silent(const SlurmEnv& env) {
  if (auto entry = silent_controller_entry(env, to_us(env.clock().now())))
    throw SystemError(value_or<std::string>(*entry, "message", "The Slurm controller does not answer."), kSilentCode);
}

void record_silent_controller(const SlurmEnv& env, const Error& e) {
  const std::int64_t now = to_us(env.clock().now());
  const std::int64_t until = now + kSilentControllerBackoffUs;
  const std::string key = env.controller_key();
  const Json entry = {{"code", kSilentCode},
                      {"details", Json::array({{{"name", "controller"}, {"value", controller_label(key)}},
                                               {{"name", "silentSince"}, {"value", iso_us(now)}},
                                               {{"name", "nextAttempt"}, {"value", iso_us(until)}}})},
                      {"message", "The Slurm controller did not answer at " + iso_us(now) +
                                      "; the state shown is the last known one, and Slurm is asked again after " +
                                      iso_us(until) + ". " + e.what()}};
  log::warning(entry["message"].get<std::string>());
  Store& store = env.store();
  store.write([&] {
    record_controller_silence(store, key, {until, entry});
    mark_slurm_resources(store, entry);
  });
}

void queue_slurm_cancel(const SlurmEnv& env, std::uint64_t slurm_job_id, const std::string& job_key) {
  Store& store = env.store();
  store.write([&] {
    queue_cancel(store, env.controller_key(), {static_cast<std::int64_t>(slurm_job_id), job_key},
                 to_us(env.clock().now()));
  });
}

void reconcile_slurm(const SlurmEnv& env, const std::vector<std::int64_t>& clusters) {
  if (clusters.empty()) return;
  Store& store = env.store();
  const std::int64_t now = to_us(env.clock().now());
  const std::string key = env.controller_key();
  const std::optional<ControllerSilence> silence = store.read([&] { return controller_silence(store, key); });
  const std::optional<std::int64_t> silent_until = silence ? std::optional(silence->until_us) : std::nullopt;
  // Backing off: the stored state and its errors entries are the answer, at once; what the jobs'
  // runners recorded needs no controller, so their outcomes land meanwhile.
  if (silent_until && now < *silent_until) {
    jobs_detail::fold_runner_records(env, clusters);
    return;
  }
  const bool was_silent = silent_until.has_value();
  SlurmBudget budget;
  try {
    refresh_slurm_clusters(env, clusters, budget);
    if (!budget.spent()) jobs_detail::refresh_slurm_jobs(env, clusters, budget);
    if (!budget.spent()) jobs_detail::submit_slurm_jobs(env, clusters, budget);
    if (!budget.spent()) run_queued_cancels(env, budget);
    if (!budget.spent()) jobs_detail::run_container_cleanups(env, budget);
  } catch (const Error& e) {
    if (!is_silent_controller(e)) throw;
    record_silent_controller(env, e);
    jobs_detail::fold_runner_records(env, clusters);  // refresh_slurm_jobs folds them when Slurm answers
    return;
  }
  if (was_silent)  // it answers again: the silence's entries go, everywhere
    store.write([&] {
      forget_controller_silence(store, key);
      mark_slurm_resources(store, nullptr);
    });
}

}  // namespace batchai::control_plane::detail
