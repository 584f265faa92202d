// A cleanup job for the containers a dead batch step left (container_cleanups.hpp).
#include "container_cleanups.hpp"

#include "batchai/common/log.hpp"
#include "batchai/common/process.hpp"
#include "batchai/runtime/container_plan.hpp"
#include "batchai/slurm/batch_script.hpp"
#include "run_claim.hpp"
#include "run_exchange.hpp"
#include "slurm_reconcile.hpp"
#include "store/jobs.hpp"
#include "store/slurm.hpp"

namespace batchai::control_plane::jobs_detail {

using namespace detail;
namespace fs = std::filesystem;

namespace {

bool holds_record(const RunExchange& exchange) {
  std::error_code ec;
  return fs::exists(exchange.dir() / "containers", ec);
}

slurm::BatchJob cleanup_batch_job(const SlurmEnv& env, const SlurmCleanupRow& c, const RunExchange& exchange) {
  slurm::BatchJob b;
  b.name = "batchai-cleanup-" + c.job_key;
  b.comment = "batchai cleanup of job " + c.job_key;
  b.partition = c.partition;
  b.node_count = static_cast<int>(slurm::expand_hostlist(c.node_list, 1000).size());
  b.node_list = c.node_list;
  // Sharing the nodes: it is not held up by a job that shares them too, and holds nothing long.
  b.exclusive = false;
  b.oversubscribe = true;
  b.time_limit_minutes = 2;
  b.work_dir = exchange.dir();
  b.stdout_path = exchange.dir() / "slurm-cleanup.log";
  b.stderr_path = b.stdout_path;
  b.environment["BATCHAI_SHARED_DIR"] = env.layout().shared().string();
  b.command_line = slurm::shell_quote(self_executable().string()) + " _slurm-cleanup --job-key " + c.job_key;
  return b;
}

}  // namespace

void queue_container_cleanups(const SlurmEnv& env, const std::vector<std::string>& keys) {
  std::vector<std::string> left;
  for (const auto& key : keys)
    if (holds_record(RunExchange(env.layout().job_exchange(key)))) left.push_back(key);
  if (left.empty()) return;
  Store& store = env.store();
  const std::int64_t now = to_us(env.clock().now());
  store.write([&] {
    for (const auto& key : left) {
      const auto job = load_job_by_key(store, key);
      const auto seen = job ? load_slurm_job(store, job->id) : std::nullopt;
      if (!seen || seen->node_list.empty()) continue;  // never allocated: no node holds anything of it
      queue_slurm_cleanup(store, env.controller_key(),
                          {key, seen->partition, seen->node_list, std::nullopt, now + kCleanupFirstDelayUs, 0});
    }
  });
}

void run_container_cleanups(const SlurmEnv& env, const SlurmBudget& budget) {
  Store& store = env.store();
  const std::string controller = env.controller_key();
  const std::int64_t now = to_us(env.clock().now());
  const auto due = store.read([&] { return due_slurm_cleanup(store, controller, now); });
  if (!due) return;
  const RunExchange exchange(env.layout().job_exchange(due->job_key));
  // Gone with the job's folder (a delete), or removed by the script's cleanup or by ours: done.
  if (!holds_record(exchange)) {
    store.write([&] { forget_slurm_cleanup(store, due->job_key); });
    return;
  }
  bool runner_gone = false;
  try {
    // A runner that still runs removes its own (and _slurm-cleanup would leave them to it).
    runner_gone = RunLock(exchange.lock_file()).try_take();
  } catch (const Error& e) {  // the folder went meanwhile (a delete): the next look forgets the row
    log::warning("job " + due->job_key + ": " + e.what());
  }
  if (!runner_gone) {
    store.write([&] {
      if (auto c = load_slurm_cleanup(store, due->job_key)) {
        c->next_try_us = now + kCleanupRetryUs;
        save_slurm_cleanup(store, controller, *c);
      }
    });
    return;
  }
  store.write([&] {
    auto c = load_slurm_cleanup(store, due->job_key);
    if (!c || c->next_try_us > now) return;  // another command took it meanwhile
    if (c->cleanup_job_id) {
      // Its time is up and the record is still there: pending behind a dead or busy node, or ended
      // without removing them. A cleanup job is cancelled only while the id still names it.
      try {
        env.client(budget).cancel(static_cast<slurm::JobId>(*c->cleanup_job_id), exchange.dir());
      } catch (const NotFound&) {
      } catch (const Error& e) {
        if (is_silent_controller(e)) throw;
        log::warning("Cannot cancel the cleanup job " + std::to_string(*c->cleanup_job_id) + ": " + e.what());
      }
      c->cleanup_job_id.reset();
    }
    if (c->attempts >= kCleanupMaxAttempts) {
      log::warning("job " + c->job_key + ": " + std::to_string(c->attempts) + " cleanup jobs did not remove its "
                   "containers on " + c->node_list + "; remove them there with `podman rm -f --filter label=" +
                   std::string(runtime::kContainerJobLabel) + "=" + c->job_key + "`.");
      forget_slurm_cleanup(store, c->job_key);
      return;
    }
    if (budget.spent()) {
      save_slurm_cleanup(store, controller, *c);
      return;
    }
    ++c->attempts;
    c->next_try_us = now + kCleanupRetryUs;
    try {
      c->cleanup_job_id = static_cast<std::int64_t>(env.client(budget).submit(cleanup_batch_job(env, *c, exchange)));
    } catch (const Error& e) {
      if (is_silent_controller(e)) throw;
      log::warning("job " + c->job_key + ": Slurm refused the cleanup job for its containers: " + e.what());
    }
    save_slurm_cleanup(store, controller, *c);
  });
}

}  // namespace batchai::control_plane::jobs_detail
