// The login host folds what Slurm jobs' runners recorded into the store (runner_records.hpp).
#include "runner_records.hpp"

#include <algorithm>
#include <map>

#include "batchai/slurm/states.hpp"
#include "container_cleanups.hpp"
#include "run_claim.hpp"
#include "run_exchange.hpp"
#include "jobs/job_run.hpp"
#include "slurm_jobs.hpp"

namespace batchai::control_plane::jobs_detail {

using namespace detail;

namespace {

std::optional<int> exit_code_of(const Json& record) {
  const Json code = record.value("exitCode", Json());
  if (!code.is_number_integer()) return std::nullopt;
  return std::clamp(code.get<int>(), -1, 1 << 16);
}

std::int64_t time_of(const Json& record, const char* name, std::int64_t fallback) {
  const Json t = record.value(name, Json());
  return t.is_number_integer() && t.get<std::int64_t>() > 0 ? t.get<std::int64_t>() : fallback;
}

// The runner's start: a queued job becomes running when its run began; where `job file list` looks.
bool fold_start(Store& store, JobRow& job, const RunnerRecord& record, std::int64_t now_us) {
  bool changed = false;
  if (record.claim) changed |= record_run_claim(store, job.key, *record.claim);
  if (!record.started) return changed;
  const Json& started = *record.started;
  if (job.state == JobState::kQueued) {
    start_if_queued(job, std::min(time_of(started, "startUs", now_us), now_us));
    changed = true;
  }
  if (!job.private_data.contains("folders") && started.value("folders", Json()).is_object()) {
    job.private_data["folders"] = started["folders"];
    if (started.value("nodes", Json()).is_array()) job.private_data["nodes"] = started["nodes"];
    changed = true;
  }
  return changed;
}

std::string slurm_said(const slurm::JobInfo& info, std::optional<int> exit_code) {
  std::string said = "Slurm: " + info.slurm_state;
  if (exit_code) said += ", exit code " + std::to_string(*exit_code);
  if (!info.reason.empty() && info.reason != "None") said += ", reason " + info.reason;
  return said;
}

}  // namespace

RunnerRecord read_runner_record(const NodeLayout& layout, const std::string& job_key) {
  const RunExchange exchange(layout.job_exchange(job_key));
  RunnerRecord r;
  r.claim = exchange.claim();
  r.started = exchange.started();
  r.outcome = exchange.outcome();
  if (!r.outcome) r.batch_log_tail = exchange.batch_log_tail();
  return r;
}

bool stopped_by_signal(const RunnerRecord& record) {
  return record.outcome && record.outcome->value("stoppedBySignal", false) == true;
}

bool ended_by_itself(const std::string& slurm_state) {
  const slurm::JobOutcome o = slurm::map_job_state(slurm_state);
  return o.state == slurm::JobState::succeeded || o.error_code == "JobFailed";
}

bool fold_runner_record(Store& store, JobRow& job, const RunnerRecord& record, std::int64_t now_us, bool with_end) {
  bool changed = fold_start(store, job, record, now_us);
  if (!record.outcome || !with_end) return changed;
  const Json& outcome = *record.outcome;
  const std::optional<int> exit_code = exit_code_of(outcome);
  const std::int64_t end_us = std::min(time_of(outcome, "endUs", now_us), now_us);
  job.doc.erase("errors");  // a silent controller's "last known state" entry: this end is the runner's word
  if (job.state == JobState::kTerminating)
    finish_job(job, false, exit_code, job_error("JobTerminated", "The job was terminated by the user."), end_us);
  else if (outcome.value("succeeded", false) == true)
    finish_job(job, true, exit_code.value_or(0), nullptr, end_us);
  else
    finish_job(job, false, exit_code,
               outcome.value("errors", Json()).is_array() ? outcome["errors"]
                                                          : job_error("JobFailed", "The job failed."),
               end_us);
  return true;
}

void finish_from_slurm(JobRow& job, const slurm::JobInfo& info, const RunnerRecord& record, std::int64_t now_us,
                       const std::vector<std::string>& lost_nodes) {
  std::optional<int> exit_code;
  if (info.exit) exit_code = info.exit->batchai_exit_code();
  const slurm::JobOutcome slurm_word = slurm::map_job_state(info.slurm_state, exit_code);
  Json errors;
  if (job.state == JobState::kTerminating) {
    errors = job_error("JobTerminated", "The job was terminated by the user.");
  } else if (!ended_by_itself(info.slurm_state)) {
    std::string lost;
    for (const auto& n : lost_nodes) lost += (lost.empty() ? "" : ", ") + n;
    errors = job_error(slurm_word.error_code,
                       slurm_word.error_message + (lost.empty() ? "" : " Node " + lost + " of its allocation is not usable now.") +
                           " (" + slurm_said(info, exit_code) + "; nodes " +
                           (info.node_list.empty() ? std::string("?") : info.node_list) + ")");
  } else if (record.claim) {
    errors = job_error("JobRunLost", "The job's batch script ended (" + slurm_said(info, exit_code) +
                                         ") without its runner recording how the run ended: the runner was killed "
                                         "or could not write to the shared folder; batchai does not start a run twice.");
  } else {
    errors = job_error(
        "JobRunnerNotStarted",
        "Slurm could not start the job's runner on " + (info.node_list.empty() ? std::string("its node") : info.node_list) +
            " (" + slurm_said(info, exit_code) + ")" +
            (record.batch_log_tail.empty() ? std::string() : ": " + record.batch_log_tail) +
            ". Every node of the partition needs the shared folder (BATCHAI_SHARED_DIR) mounted at the same path "
            "and batchai installed at the same path as on this host (docs/slurm.md).");
  }
  finish_job(job, false, exit_code, errors, now_us);
}

void finish_forgotten(JobRow& job, std::uint64_t slurm_job_id, const RunnerRecord& record, std::int64_t now_us) {
  const std::string id = std::to_string(slurm_job_id);
  if (record.claim)
    finish_job(job, false, std::nullopt,
               job_error("JobRunLost", "Slurm no longer knows job " + id +
                                           " and its runner recorded no end of the run it started: it was killed; "
                                           "batchai does not start a run twice."),
               now_us);
  else
    finish_job(job, false, std::nullopt,
               job_error("SlurmJobLost", "Slurm no longer knows job " + id +
                                             " (its controller lost its state) and it never started; submit the job "
                                             "again."),
               now_us);
}

void forget_inputs(const SlurmEnv& env, const std::vector<std::string>& keys) {
  for (const auto& key : keys) RunExchange(env.layout().job_exchange(key)).forget_inputs();
  queue_container_cleanups(env, keys);
}

void fold_runner_records(const SlurmEnv& env, const std::vector<std::int64_t>& clusters) {
  Store& store = env.store();
  const std::vector<JobRow> jobs = store.read([&] { return submitted_unfinished_jobs(store, clusters); });
  std::map<std::string, RunnerRecord> records;  // read outside the write lock: files on the shared folder
  for (const JobRow& job : jobs) {
    RunnerRecord record = read_runner_record(env.layout(), job.key);
    if (record.claim || record.started || record.outcome) records.emplace(job.key, std::move(record));
  }
  if (records.empty()) return;
  std::vector<std::string> ended;
  store.write([&] {
    ended.clear();
    for (const auto& [key, record] : records) {
      auto job = load_job_by_key(store, key);
      if (!job || (job->state != JobState::kQueued && job->state != JobState::kRunning &&
                   job->state != JobState::kTerminating))
        continue;
      if (!fold_runner_record(store, *job, record, to_us(env.clock().now()), !stopped_by_signal(record))) continue;
      save_job(store, *job);
      if (job->state == JobState::kSucceeded || job->state == JobState::kFailed) ended.push_back(key);
    }
  });
  forget_inputs(env, ended);
}

}  // namespace batchai::control_plane::jobs_detail
