// Job rows and documents (job_rows.hpp).
#include "job_rows.hpp"

#include "batchai/common/ids.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane::jobs_detail {

using namespace detail;

namespace {

JobState stored_job_state(const std::string& text) {
  if (auto state = parse_job_state(text)) return *state;
  throw std::runtime_error("The store holds a job in an unknown state: " + text.substr(0, 32));
}

}  // namespace

JobRow read_job(const Statement& st) {
  JobRow j;
  j.id = st.integer(0);
  j.key = st.text(1);
  j.experiment_id = st.integer(2);
  j.cluster_id = st.optional_integer(3);
  j.name = st.text(4);
  j.state = stored_job_state(st.text(5));
  j.priority = static_cast<int>(st.integer(6));
  j.node_count = static_cast<int>(st.integer(7));
  j.created_us = st.integer(8);
  j.doc = parse_doc(st.text(9));
  j.private_data = parse_doc(st.text(10));
  j.sup_pid = st.optional_integer(11);
  j.kind = kind_of_engine_column(st.text(12));
  j.engine_job_id = st.optional_integer(13);
  return j;
}

std::optional<JobRow> load_job_by_key(Store& store, const std::string& key) {
  auto st = store.prepare(std::string(kJobColumns) + "WHERE job_key = ?");
  st.bind(1, key);
  if (!st.step()) return std::nullopt;
  return read_job(st);
}

std::int64_t require_experiment(Store& store, const WorkspaceRef& where, const std::string& experiment) {
  auto ws = require_workspace(store, where);
  auto st = store.prepare("SELECT id FROM experiments WHERE workspace_id = ? AND name_lc = ?");
  st.bind(1, ws.id).bind(2, to_lower(experiment));
  if (!st.step()) throw NotFound("The specified experiment " + experiment + " is not found", "ExperimentNotFound");
  return st.integer(0);
}

std::optional<JobRow> find_job(Store& store, const JobRef& ref) {
  const std::int64_t exp = require_experiment(store, ref.where, ref.experiment);
  auto st = store.prepare(std::string(kJobColumns) + "WHERE experiment_id = ? AND name_lc = ?");
  st.bind(1, exp).bind(2, to_lower(ref.name));
  if (!st.step()) return std::nullopt;
  return read_job(st);
}

JobRow require_job(Store& store, const JobRef& ref) {
  auto job = find_job(store, ref);
  if (!job) throw NotFound("The specified job " + ref.name + " is not found", "JobNotFound");
  return *job;
}

void save_job(Store& store, const JobRow& job) {
  store.prepare("UPDATE jobs SET state = ?, doc = ?, private = ?, sup_pid = ?, engine_job_id = ? WHERE id = ?")
      .bind(1, std::string(to_string(job.state)))
      .bind(2, dump_doc(job.doc))
      .bind(3, dump_doc(job.private_data))
      .bind(4, job.sup_pid)
      .bind(5, job.engine_job_id)
      .bind(6, job.id)
      .run();
}

void set_state(JobRow& job, JobState state, std::int64_t now_us) {
  if (job.state == state) return;
  job.state = state;
  job.doc["executionState"] = to_string(state);
  job.doc["executionStateTransitionTime"] = iso_us(now_us);
}

Json job_error(const std::string& code, const std::string& message) {
  return Json::array({{{"code", code}, {"details", nullptr}, {"message", message}}});
}

void finish_job(JobRow& job, bool succeeded, std::optional<int> exit_code, const Json& errors, std::int64_t now_us) {
  Json info = job.doc["executionInfo"].is_object() ? job.doc["executionInfo"] : Json::object();
  if (!info.contains("startTime") || info["startTime"].is_null()) info["startTime"] = iso_us(now_us);
  info["endTime"] = iso_us(now_us);
  info["exitCode"] = exit_code ? Json(*exit_code) : Json(nullptr);
  info["errors"] = errors.is_array() && !errors.empty() ? errors : Json(nullptr);
  job.doc["executionInfo"] = info;
  set_state(job, succeeded ? JobState::kSucceeded : JobState::kFailed, now_us);
}

TaskStart mark_task_started(Store& store, const std::string& job_key, const std::string& who) {
  // One statement: of two runners that both hold the row's old state, exactly one changes it.
  store
      .prepare("UPDATE jobs SET run_claim = ? WHERE job_key = ? AND run_claim IS NULL AND state IN ('running', "
               "'terminating')")
      .bind(1, who)
      .bind(2, job_key)
      .run();
  if (store.changes() == 1) return TaskStart::kMarked;
  auto st = store.prepare("SELECT state FROM jobs WHERE job_key = ?");
  st.bind(1, job_key);
  const auto state = st.step() ? parse_job_state(st.text(0)) : std::nullopt;
  const bool runs = state == JobState::kRunning || state == JobState::kTerminating;
  return runs ? TaskStart::kStartedBefore : TaskStart::kNotRunning;  // running: marked by another
}

std::optional<std::string> task_started_by(Store& store, const std::string& job_key) {
  auto st = store.prepare("SELECT run_claim FROM jobs WHERE job_key = ?");
  st.bind(1, job_key);
  return st.step() ? st.optional_text(0) : std::nullopt;
}

void forget_task_start(Store& store, const std::string& job_key) {
  store.prepare("UPDATE jobs SET run_claim = NULL WHERE job_key = ?").bind(1, job_key).run();
}

std::vector<std::string> never_supervised_running_jobs(Store& store, std::int64_t cluster) {
  std::vector<std::string> keys;
  auto st = store.prepare(
      "SELECT job_key FROM jobs WHERE cluster_id = ? AND state = 'running' AND sup_pid IS NULL AND run_claim IS NULL");
  st.bind(1, cluster);
  while (st.step()) keys.push_back(st.text(0));
  return keys;
}

Json supervisor_died_error(const std::string& which, JobState state) {
  return job_error("SupervisorDied", "The job's supervisor process" + (which.empty() ? "" : " (" + which + ")") +
                                         " ended unexpectedly while the job was " + std::string(to_string(state)) +
                                         "; its processes were stopped and its task is not started again. Submit "
                                         "the job again.");
}

std::vector<std::pair<std::string, int>> job_nodes(Store& store, const std::string& job_key) {
  std::vector<std::pair<std::string, int>> out;
  auto st = store.prepare("SELECT node_id, ordinal FROM nodes WHERE job_key = ? ORDER BY ordinal");
  st.bind(1, job_key);
  while (st.step()) out.emplace_back(st.text(0), static_cast<int>(st.integer(1)));
  return out;
}

}  // namespace batchai::control_plane::jobs_detail
