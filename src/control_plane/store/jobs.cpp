// The jobs table (store/jobs.hpp).
#include "store/jobs.hpp"

#include "batchai/common/ids.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane::jobs_detail {

using namespace detail;

namespace {

constexpr const char* kJobColumns =
    "SELECT id, job_key, experiment_id, cluster_id, name, state, priority, node_count, created_us, doc, private, "
    "sup_pid, engine, engine_job_id FROM jobs ";

JobState stored_job_state(const std::string& text) {
  if (auto state = parse_job_state(text)) return *state;
  throw std::runtime_error("The store holds a job in an unknown state: " + text.substr(0, 32));
}

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

std::vector<JobRow> read_jobs(Statement& st) {
  std::vector<JobRow> out;
  while (st.step()) out.push_back(read_job(st));
  return out;
}

}  // namespace

std::optional<JobRow> load_job_by_key(Store& store, const std::string& key) {
  auto st = store.prepare(std::string(kJobColumns) + "WHERE job_key = ?");
  st.bind(1, key);
  if (!st.step()) return std::nullopt;
  return read_job(st);
}

std::optional<JobRow> load_job_by_id(Store& store, std::int64_t id) {
  auto st = store.prepare(std::string(kJobColumns) + "WHERE id = ?");
  st.bind(1, id);
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

void insert_job(Store& store, const NewJob& job) {
  store
      .prepare(
          "INSERT INTO jobs(job_key, experiment_id, cluster_id, name_lc, name, state, priority, node_count, "
          "created_us, doc, private, engine) VALUES (?,?,?,?,?,'queued',?,?,?,?,?,?)")
      .bind(1, job.key).bind(2, job.experiment_id).bind(3, job.cluster_id).bind(4, to_lower(job.name))
      .bind(5, job.name).bind(6, job.priority).bind(7, job.node_count).bind(8, job.created_us)
      .bind(9, dump_doc(job.doc)).bind(10, dump_doc(job.private_data)).bind(11, engine_column(job.engine))
      .run();
}

void delete_job(Store& store, std::int64_t id) { store.prepare("DELETE FROM jobs WHERE id = ?").bind(1, id).run(); }

Json experiment_job_docs(Store& store, std::int64_t experiment_id, const std::vector<std::string>& fields) {
  std::string columns = fields.empty() ? "doc" : "";
  for (const auto& key : fields) {
    if (key.empty() || key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
                           std::string::npos)
      throw Error("job list: not a plain top-level key: '" + key + "'");
    columns += (columns.empty() ? "doc -> '$." : ", doc -> '$.") + key + "'";
  }
  // Each stored document (or projected value) parsed where it is read: no 16 MB concatenation
  // for 10,000 jobs.
  Json out = Json::array();
  auto st = store.prepare("SELECT " + columns + " FROM jobs WHERE experiment_id = ? ORDER BY id");
  st.bind(1, experiment_id);
  while (st.step()) {
    if (fields.empty()) {
      out.push_back(parse_doc(st.text(0)));
      continue;
    }
    Json doc = Json::object();
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (!st.is_null(static_cast<int>(i))) doc[fields[i]] = parse_doc(st.text(static_cast<int>(i)));
    out.push_back(std::move(doc));
  }
  return out;
}

std::vector<JobRow> jobs_under(Store& store, JobParent parent, std::int64_t row_id) {
  const char* where = parent == JobParent::kCluster      ? "WHERE cluster_id = ?"
                      : parent == JobParent::kExperiment ? "WHERE experiment_id = ?"
                                                         : "WHERE experiment_id IN (SELECT id FROM experiments WHERE "
                                                           "workspace_id = ?)";
  auto st = store.prepare(std::string(kJobColumns) + where);
  st.bind(1, row_id);
  return read_jobs(st);
}

std::optional<std::string> queue_head(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare(
      "SELECT job_key FROM jobs WHERE cluster_id = ? AND state = 'queued' ORDER BY priority DESC, created_us, id LIMIT 1");
  st.bind(1, cluster_id);
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

namespace {

// The engine's unfinished jobs of the cluster, with `and_where` added to the condition.
std::vector<JobRow> engine_jobs(Store& store, std::int64_t cluster_id, ClusterKind engine, const char* and_where) {
  auto st = store.prepare(std::string(kJobColumns) +
                          "WHERE cluster_id = ? AND engine = ? AND state IN ('queued', 'running', 'terminating') " +
                          and_where);
  st.bind(1, cluster_id).bind(2, engine_column(engine));
  return read_jobs(st);
}

}  // namespace

std::vector<JobRow> unfinished_engine_jobs(Store& store, std::int64_t cluster_id, ClusterKind engine) {
  return engine_jobs(store, cluster_id, engine, "ORDER BY priority DESC, created_us, id");
}

std::vector<JobRow> submitted_engine_jobs(Store& store, std::int64_t cluster_id, ClusterKind engine) {
  return engine_jobs(store, cluster_id, engine, "AND engine_job_id IS NOT NULL");
}

bool record_run_claim(Store& store, const std::string& job_key, const std::string& who) {
  store.prepare("UPDATE jobs SET run_claim = ? WHERE job_key = ? AND run_claim IS NULL")
      .bind(1, who.substr(0, 4000))
      .bind(2, job_key)
      .run();
  return store.changes() == 1;
}

std::optional<std::string> run_claim(Store& store, const std::string& job_key) { return task_started_by(store, job_key); }

}  // namespace batchai::control_plane::jobs_detail
