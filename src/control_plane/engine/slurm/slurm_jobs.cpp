// Submission of queued jobs to Slurm, their states from Slurm, and cancellation
// (docs/slurm.md, "Jobs on Slurm clusters").
#include "slurm_jobs.hpp"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <thread>

#include "batchai/common/log.hpp"
#include "batchai/common/process.hpp"
#include "jobs/job_processes.hpp"
#include "batchai/runtime/job.hpp"
#include "batchai/slurm/batch_script.hpp"
#include "batchai/slurm/client.hpp"
#include "run_claim.hpp"
#include "run_exchange.hpp"
#include "runner_records.hpp"
#include "slurm_clusters.hpp"
#include "slurm_reconcile.hpp"

namespace batchai::control_plane::jobs_detail {

using namespace detail;

namespace {

// Slurm's whole-minute --time is a backstop one minute past maxWallClockTime: the runner in the
// allocation ends the job at the exact time and says so (Slurm would only say TIMEOUT).
constexpr int kTimeLimitMarginMinutes = 1;
// How long `job terminate` waits for Slurm to report a cancelled job ended (KillWait and the
// runner's own stop come within it on a healthy cluster).
constexpr auto kCancelWait = std::chrono::seconds(20);
// How long `job terminate` waits for the runner to stop the tasks and say so when Slurm cannot be
// asked (it reads `terminating` twice a second, then SIGTERM, SIGKILL a second later).
constexpr auto kRunnerStopWait = std::chrono::seconds(5);

// schedulingPriority -> sbatch --nice. Lowering a job's priority is every user's right; raising
// it (a negative nice) is a Slurm operator's, which root is (docs/slurm.md).
int nice_for(const std::string& priority) {
  if (priority == "low") return 10000;
  if (priority == "high") return ::geteuid() == 0 ? -10000 : 0;
  return 0;
}

// The node bound of a Slurm cluster: how many of its partition's nodes its jobs may hold at once.
int node_bound(const ClusterRow& cluster) { return cluster.scale_mode == "auto" ? cluster.max_nodes : cluster.target; }

// The batch job for `job` on `cluster`: it runs in the job's exchange folder on the shared folder,
// which holds Slurm's own output of the script; the runner gets the shared folder, never the home.
slurm::BatchJob batch_job_for(const SlurmEnv& env, const JobRow& job, const ClusterRow& cluster,
                              const SlurmClusterRow& stored) {
  const runtime::Job typed = runtime::parse_job(job.doc);
  const RunExchange exchange(env.layout().job_exchange(job.key));
  const std::filesystem::path dir = exchange.dir();
  slurm::BatchJob b;
  b.name = job.name;
  b.comment = "batchai job " + job.key + " " + value_or<std::string>(job.doc, "id", "");
  if (b.comment.size() > 1000) b.comment.resize(1000);
  b.partition = stored.partition;
  b.node_count = typed.node_count;
  b.exclusive = true;
  if (auto wall = parse_duration(typed.max_wall_clock_time))
    b.time_limit_minutes =
        slurm::minutes_for_seconds(std::chrono::duration_cast<std::chrono::seconds>(*wall).count()) +
        kTimeLimitMarginMinutes;
  b.nice = nice_for(typed.priority);
  b.gpus_per_node = slurm_gpus_per_node(value_or<std::string>(cluster.doc, "vmSize", ""), stored.nodes);
  b.work_dir = dir;
  b.stdout_path = exchange.batch_log();
  b.stderr_path = exchange.batch_log();
  b.environment["BATCHAI_SHARED_DIR"] = env.layout().shared().string();
  if (!env.settings().containment.empty()) b.environment["BATCHAI_CONTAINMENT"] = env.settings().containment;
  b.command_line = slurm::shell_quote(self_executable().string()) + " _slurm-run --job-key " + job.key;
  // A runner that was killed leaves the job's containers on the allocation's nodes: the script's
  // shell, which outlives it, removes them (slurm_runner.hpp). Container jobs only: a job without
  // them keeps the runner as the script's only process, which Slurm reaps at once when it aborts the
  // step (a restarted controller that relaunches the job finds the node free instead of draining it).
  if (typed.container_settings)
    b.cleanup_command_line = slurm::shell_quote(self_executable().string()) + " _slurm-cleanup --job-key " + job.key;
  return b;
}

// What the runner needs of the job and its cluster, written into the job's exchange folder before
// sbatch (read back by slurm_runner.cpp): the runner never opens the store.
Json run_inputs(const JobRow& job, const ClusterRow& cluster, int gpus_per_node) {
  Json j = {{"name", job.name}, {"nodeCount", job.node_count}, {"doc", job.doc}};
  if (job.private_data.contains("secrets")) j["secrets"] = job.private_data["secrets"];
  if (job.private_data.contains("registryPassword")) j["registryPassword"] = job.private_data["registryPassword"];
  return {{"version", 1},
          {"job", j},
          {"cluster", {{"resourceGroup", cluster.resource_group}, {"workspace", cluster.workspace},
                       {"name", cluster.name}, {"doc", cluster.doc}}},
          {"gpusPerNode", gpus_per_node}};
}

// Slurm's reason for a pending job as squeue gives it (a word such as Resources or Priority),
// stored for the dashboard when it changed (inside the write); false when it did not.
bool record_pending_reason(Store& store, const JobRow& job, const std::string& reason) {
  std::string word;
  for (char c : reason.substr(0, 64))
    if (c > 0x20 && c < 0x7f) word += c;
  SlurmJobRow seen = load_slurm_job(store, job.id).value_or(SlurmJobRow{});
  if (seen.pending_reason == word) return false;
  seen.pending_reason = word;
  save_slurm_job(store, job.id, seen);
  return true;
}

}  // namespace

bool is_slurm_job(const JobRow& job) { return job.kind == ClusterKind::kSlurm; }

std::optional<slurm::JobId> slurm_job_id(const JobRow& job) {
  if (!is_slurm_job(job) || !job.engine_job_id || *job.engine_job_id < 0) return std::nullopt;
  return static_cast<slurm::JobId>(*job.engine_job_id);
}

std::vector<EngineQueuePlace> slurm_queue_places(Store& store, const ClusterRow& cluster, const std::vector<JobRow>& jobs) {
  // As submit_slurm_jobs reads the queue: the nodes its submitted jobs hold, then the held jobs in
  // order; once for the cluster, whatever the number of jobs asked about.
  int in_use = 0;
  std::map<std::int64_t, std::int64_t> position;  // job row id -> its place among the held jobs
  for (const QueueSlot& slot : engine_queue_slots(store, cluster.id, ClusterKind::kSlurm)) {
    if (slot.submitted)
      in_use += slot.node_count;
    else if (slot.queued)
      position.emplace(slot.id, static_cast<std::int64_t>(position.size()) + 1);
  }
  const int bound = node_bound(cluster);
  std::vector<EngineQueuePlace> out;
  for (const JobRow& job : jobs) {
    if (const auto id = slurm_job_id(job)) {
      const std::string why = load_slurm_job(store, job.id).value_or(SlurmJobRow{}).pending_reason;
      out.push_back({std::nullopt, "In Slurm's queue as job " + std::to_string(*id) +
                                       (why.empty() || why == "None" ? "" : " (Slurm's reason: " + why + ")") +
                                       "; Slurm decides when it starts."});
      continue;
    }
    const auto it = position.find(job.id);
    const std::optional<std::int64_t> place = it == position.end() ? std::nullopt : std::optional(it->second);
    const std::string need = std::to_string(job.node_count) + (job.node_count == 1 ? " node" : " nodes");
    if (job.node_count > bound)
      out.push_back({place, "Needs " + need + " but " + cluster.name + " may use at most " + std::to_string(bound) +
                                " of the partition; it waits (without holding up the others) until the cluster grows."});
    else if (place == 1 && in_use + job.node_count <= bound)
      out.push_back({place, "There is room for it: batchai submits it to Slurm at its next reconcile."});
    else
      out.push_back({place, "Held by batchai until " + cluster.name + " has room for it in Slurm: needs " + need +
                                ", " + std::to_string(in_use) + " of its " + std::to_string(bound) +
                                " are taken by its jobs in Slurm; number " + std::to_string(place.value_or(0)) +
                                " of the jobs it holds, by priority then creation time."});
  }
  return out;
}

void submit_slurm_jobs(const SlurmEnv& env, const std::vector<std::int64_t>& scope, const SlurmBudget& budget) {
  Store& store = env.store();
  // Those of the clusters with a queued job not submitted yet: a cheap read, most calls find none.
  std::vector<std::int64_t> clusters = store.read([&] {
    std::vector<std::int64_t> out;
    for (std::int64_t id : scope)
      if (holds_unsubmitted_job(store, id, ClusterKind::kSlurm)) out.push_back(id);
    return out;
  });
  std::optional<std::string> silence;  // thrown after the commit: the jobs submitted before it keep their ids
  for (std::int64_t cluster_id : clusters) {
    if (budget.spent() || silence) break;  // the rest wait for the next command
    // sbatch runs under the store's write lock: a job is submitted once, whichever of several
    // reconciling commands gets there first, and its id is stored with the submission.
    store.write([&] {
      auto cluster = load_cluster(store, cluster_id);
      const auto stored = load_slurm_cluster(store, cluster_id);
      if (!cluster || !stored) return;
      int in_use = 0;
      std::vector<JobRow> queue;
      for (JobRow& j : unfinished_engine_jobs(store, cluster_id, ClusterKind::kSlurm)) {
        if (slurm_job_id(j))
          in_use += j.node_count;
        else if (j.state == JobState::kQueued)
          queue.push_back(std::move(j));
      }
      const int bound = node_bound(*cluster);
      for (JobRow& job : queue) {
        if (job.node_count > bound) continue;  // waits for a resize without blocking the others
        if (in_use + job.node_count > bound) break;  // in order: a later job does not overtake it
        if (budget.spent()) return;
        const std::int64_t now = to_us(env.clock().now());
        try {
          const slurm::BatchJob batch = batch_job_for(env, job, *cluster, *stored);
          const RunExchange exchange(env.layout().job_exchange(job.key));
          exchange.write_inputs(run_inputs(job, *cluster, batch.gpus_per_node));
          // Bounded by the budget: sbatch runs under the write lock, which every other writer waits for.
          const slurm::JobId id = env.client(budget).submit(batch);
          try {
            exchange.write_slurm_id(id);
          } catch (const Error&) {  // the runner will not start the run: Slurm must not hold nodes for it
            try {
              env.client(budget).cancel(id, exchange.dir());
            } catch (const Error& e) {
              log::warning("Cannot cancel Slurm job " + std::to_string(id) + ": " + e.what());
            }
            throw;
          }
          job.engine_job_id = static_cast<std::int64_t>(id);
          SlurmJobRow submitted = load_slurm_job(store, job.id).value_or(SlurmJobRow{});
          submitted.partition = batch.partition;
          submitted.submitted_us = now;
          submitted.gpus_per_node = batch.gpus_per_node;  // what the runner gives each node
          save_slurm_job(store, job.id, submitted);
          in_use += job.node_count;
        } catch (const Error& e) {
          if (is_silent_controller(e)) {  // the job stays queued; reconcile_slurm records the silence
            silence = e.what();
            return;
          }
          finish_job(job, false, std::nullopt,
                     e.code() == "SharedFolderFull"
                         ? job_error("SharedFolderFull", std::string("The job cannot be submitted: ") + e.what())
                         : job_error("SlurmSubmitFailed", std::string("Slurm refused the job: ") + e.what()),
                     now);
        }
        save_job(store, job);
      }
    });
  }
  if (silence) throw SystemError(*silence, "SlurmControllerUnreachable");
}

std::vector<JobRow> submitted_unfinished_jobs(Store& store, const std::vector<std::int64_t>& clusters) {
  std::vector<JobRow> out;
  for (std::int64_t cluster : clusters)
    for (JobRow& j : submitted_engine_jobs(store, cluster, ClusterKind::kSlurm)) out.push_back(std::move(j));
  return out;
}

namespace {

// The nodes of `node_list` that the cluster's last sinfo showed unusable (not responding, down).
std::vector<std::string> unusable_nodes(Store& store, const JobRow& job, const std::string& node_list) {
  std::vector<std::string> out;
  if (!job.cluster_id || node_list.empty()) return out;
  std::vector<std::string> names;
  try {
    names = slurm::expand_hostlist(node_list, 1000);
  } catch (const std::exception&) {
    return out;
  }
  for (const SlurmNodeRow& n : slurm_cluster_nodes(store, *job.cluster_id))
    if (n.state == "unusable" && std::find(names.begin(), names.end(), n.name) != names.end())
      out.push_back(n.name + " (Slurm: " + (n.slurm_state.empty() ? std::string("?") : n.slurm_state) + ")");
  return out;
}

// One submitted job brought up to date from what Slurm says of it (`info`, nullopt: Slurm does not
// know it) and what its runner recorded; inside the write transaction. False when nothing changed.
bool update_from_slurm(const SlurmEnv& env, JobRow& job, slurm::JobId id, const std::optional<slurm::JobInfo>& info,
                       const RunnerRecord& record, std::int64_t now) {
  Store& store = env.store();
  const bool final = info && slurm::is_final_job_state(info->slurm_state);
  // Slurm ended the job (a lost node, its time limit): its reason is the job's, not the runner's
  // "stopped by a signal", which waits for Slurm's final word.
  const bool slurm_ended_it = final && !ended_by_itself(info->slurm_state);
  const bool with_end = !slurm_ended_it && !(stopped_by_signal(record) && info && !final);
  bool changed = fold_runner_record(store, job, record, now, with_end);
  if (job.state == JobState::kSucceeded || job.state == JobState::kFailed) {  // the runner's word
    // Its run is over: a batch script Slurm requeued must not start again.
    if (info && slurm::map_job_state(info->slurm_state).state == slurm::JobState::queued)
      queue_slurm_cancel(env, id, job.key);
    return true;
  }
  if (!info) {
    // Slurm forgot the job (its record purged, or a controller restarted without its state). The
    // id may name another job by now, which jobs() passes over (it ran in another folder).
    finish_forgotten(job, id, record, now);
    return true;
  }
  if (final) {
    finish_from_slurm(job, *info, record, now, unusable_nodes(store, job, info->node_list));
  } else {
    const slurm::JobOutcome o = slurm::map_job_state(info->slurm_state);
    if (o.state == slurm::JobState::running && job.state == JobState::kQueued) {
      set_state(job, JobState::kRunning, now);
      job.doc["executionInfo"] = {{"endTime", nullptr}, {"errors", nullptr}, {"exitCode", nullptr}, {"startTime", iso_us(now)}};
    } else if (o.state == slurm::JobState::queued && job.state == JobState::kQueued) {
      if (!record_pending_reason(store, job, info->reason)) return changed;
    } else if (o.state == slurm::JobState::queued && job.state == JobState::kRunning) {
      // A restarted controller that lost the allocation says PENDING while the run goes on (or has
      // ended): a claimed run never goes back to queued, and is never started again (run_claim.hpp).
      if (record.claim || run_claim(store, job.key)) return changed;
      set_state(job, JobState::kQueued, now);  // requeued before its runner started
      job.doc["executionInfo"] = nullptr;
    } else {
      return changed;
    }
  }
  const bool final_now = slurm::is_final_job_state(info->slurm_state);
  if (!info->node_list.empty() || final_now) {
    SlurmJobRow seen = load_slurm_job(store, job.id).value_or(SlurmJobRow{});
    if (!info->node_list.empty()) seen.node_list = info->node_list;
    if (final_now) seen.final_state = info->slurm_state;
    save_slurm_job(store, job.id, seen);
  }
  return true;
}

}  // namespace

void refresh_slurm_jobs(const SlurmEnv& env, const std::vector<std::int64_t>& scope, const SlurmBudget& budget) {
  Store& store = env.store();
  const std::vector<JobRow> submitted = store.read([&] { return submitted_unfinished_jobs(store, scope); });
  if (submitted.empty()) return;
  std::vector<slurm::JobId> ids;
  std::map<slurm::JobId, std::filesystem::path> work_dirs;  // each job's own folder: its identity
  for (const JobRow& job : submitted) {
    const slurm::JobId id = *slurm_job_id(job);
    ids.push_back(id);
    work_dirs[id] = env.layout().job_exchange(job.key);
  }
  std::map<slurm::JobId, slurm::JobInfo> known;
  try {
    known = env.client(budget).jobs(ids, work_dirs);
  } catch (const Error& e) {
    if (is_silent_controller(e)) throw;  // reconcile_slurm records it for every process
    log::warning(std::string("Slurm did not report its jobs; their states are the last known ones: ") + e.what());
    fold_runner_records(env, scope);  // the runners' own word needs no Slurm
    return;
  }
  // Read after Slurm answered: a runner's outcome written before its batch script ended is seen.
  std::map<std::string, RunnerRecord> records;
  for (const JobRow& job : submitted) records.emplace(job.key, read_runner_record(env.layout(), job.key));
  std::vector<std::string> ended;
  store.write([&] {
    ended.clear();
    const std::int64_t now = to_us(env.clock().now());
    for (const JobRow& seen : submitted) {
      const slurm::JobId id = *slurm_job_id(seen);
      auto job = load_job_by_key(store, seen.key);
      if (!job || slurm_job_id(*job) != id) continue;
      if (job->state != JobState::kQueued && job->state != JobState::kRunning && job->state != JobState::kTerminating) continue;
      const auto it = known.find(id);
      const std::optional<slurm::JobInfo> info = it == known.end() ? std::nullopt : std::optional(it->second);
      if (!update_from_slurm(env, *job, id, info, records.at(seen.key), now)) continue;
      save_job(store, *job);
      if (job->state == JobState::kSucceeded || job->state == JobState::kFailed) ended.push_back(job->key);
    }
  });
  forget_inputs(env, ended);
}

std::optional<slurm::JobInfo> cancel_slurm_job(const SlurmEnv& env, const JobRow& job, bool wait) {
  const auto id = slurm_job_id(job);
  if (!id) return std::nullopt;
  const RunExchange exchange(env.layout().job_exchange(job.key));  // the Slurm job's identity
  try {
    exchange.request_stop();  // the runner stops the tasks within a second, whatever Slurm does
  } catch (const Error& e) {
    log::warning("Cannot ask the runner of job '" + job.name + "' to stop: " + e.what());
  }
  if (silent_controller_entry(env, to_us(env.clock().now()))) {
    queue_slurm_cancel(env, *id, job.key);  // scancel once the controller answers
    return std::nullopt;
  }
  try {
    env.client(SlurmBudget()).cancel(*id, exchange.dir());
    if (!wait) return std::nullopt;
    const auto deadline = std::chrono::steady_clock::now() + kCancelWait;
    for (;;) {
      // Each poll within its own budget: a controller that dies meanwhile costs one budget, not the wait.
      slurm::JobInfo info = env.client(SlurmBudget()).job(*id, exchange.dir());
      if (slurm::is_final_job_state(info.slurm_state) || std::chrono::steady_clock::now() >= deadline) return info;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  } catch (const Error& e) {
    if (is_silent_controller(e)) {
      record_silent_controller(env, e);
      queue_slurm_cancel(env, *id, job.key);
    } else {
      log::warning("Cannot cancel Slurm job " + std::to_string(*id) + " of job '" + job.name + "': " + e.what());
    }
    return std::nullopt;
  }
}

void terminate_slurm_job(const SlurmEnv& env, const JobRow& job) {
  // The runner stops the tasks on SIGTERM or on the stop request; Slurm ends the allocation.
  const auto info = cancel_slurm_job(env, job);
  const bool slurm_ended = info && slurm::is_final_job_state(info->slurm_state);
  // Slurm gave no final word (its controller is silent): the runner's own is awaited, bounded.
  RunnerRecord record = read_runner_record(env.layout(), job.key);
  for (const auto deadline = std::chrono::steady_clock::now() + kRunnerStopWait;
       !slurm_ended && record.claim && !record.outcome && std::chrono::steady_clock::now() < deadline;
       record = read_runner_record(env.layout(), job.key))
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Store& store = env.store();
  store.write([&] {
    auto j = load_job_by_key(store, job.key);
    if (!j || j->state != JobState::kTerminating) return;  // a reconcile recorded the end meanwhile
    const std::int64_t now = to_us(env.clock().now());
    fold_runner_record(store, *j, record, now);  // ends it terminated, with the runner's exit code
    if (j->state == JobState::kTerminating && slurm_ended) finish_from_slurm(*j, *info, record, now);
    if (j->state == JobState::kTerminating)
      finish_job(*j, false, std::nullopt, job_error("JobTerminated", "The job was terminated by the user."), now);
    save_job(store, *j);
  });
  forget_inputs(env, {job.key});
}

}  // namespace batchai::control_plane::jobs_detail
