// Job rows and documents, node release (after kill-and-confirm), supervisor lock checks, ending
// a job's processes from outside its supervisor, and starting the supervisor in a clean env.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <csignal>
#include <fstream>

#include "batchai/common/ids.hpp"
#include "batchai/common/log.hpp"
#include "batchai/common/process.hpp"
#include "batchai/common/process_tree.hpp"
#include "jobs_internal.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane::jobs_detail {

using namespace detail;

JobRow read_job(const Statement& st) {
  JobRow j;
  j.id = st.integer(0);
  j.key = st.text(1);
  j.experiment_id = st.integer(2);
  j.cluster_id = st.optional_integer(3);
  j.name = st.text(4);
  j.state = st.text(5);
  j.priority = static_cast<int>(st.integer(6));
  j.node_count = static_cast<int>(st.integer(7));
  j.created_us = st.integer(8);
  j.doc = parse_doc(st.text(9));
  j.private_data = parse_doc(st.text(10));
  j.sup_pid = st.optional_integer(11);
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
  store.prepare("UPDATE jobs SET state = ?, doc = ?, private = ?, sup_pid = ? WHERE id = ?")
      .bind(1, job.state)
      .bind(2, dump_doc(job.doc))
      .bind(3, dump_doc(job.private_data))
      .bind(4, job.sup_pid)
      .bind(5, job.id)
      .run();
}

void set_state(JobRow& job, const std::string& state, std::int64_t now_us) {
  if (job.state == state) return;
  job.state = state;
  job.doc["executionState"] = state;
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
  set_state(job, succeeded ? "succeeded" : "failed", now_us);
}

std::vector<std::int64_t> release_nodes(Store& store, const std::string& job_key, std::chrono::milliseconds limit) {
  // A node never goes to the next job while a process of this one lives.
  const NodeLayout layout(store.path().parent_path());
  if (auto left = end_job_processes(layout, job_key, limit); !left.empty()) {
    log::warning("job " + job_key + ": " + std::to_string(left.size()) + " process(es) (first pid " +
                 std::to_string(left.front()) + ") survived SIGKILL; its nodes stay taken until they are gone");
    return {};
  }
  std::vector<std::int64_t> clusters;
  {
    auto st = store.prepare("SELECT DISTINCT cluster_id FROM nodes WHERE job_key = ?");
    st.bind(1, job_key);
    while (st.step()) clusters.push_back(st.integer(0));
  }
  // Leaving nodes stay leaving; only nodes still marked running become idle again.
  store.prepare("UPDATE nodes SET state = 'idle' WHERE job_key = ? AND state = 'running'").bind(1, job_key).run();
  store.prepare("UPDATE nodes SET job_key = NULL WHERE job_key = ?").bind(1, job_key).run();
  return clusters;
}

std::vector<std::pair<std::string, int>> job_nodes(Store& store, const std::string& job_key) {
  std::vector<std::pair<std::string, int>> out;
  auto st = store.prepare("SELECT node_id, ordinal FROM nodes WHERE job_key = ? ORDER BY ordinal");
  st.bind(1, job_key);
  while (st.step()) out.emplace_back(st.text(0), static_cast<int>(st.integer(1)));
  return out;
}

fs::path state_dir(const NodeLayout& layout, const std::string& job_key) { return layout.job_state(job_key); }

bool supervisor_alive(const NodeLayout& layout, const std::string& job_key) {
  const fs::path lock = state_dir(layout, job_key) / "supervisor.lock";
  int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // never created: no supervisor ever held it
  // flock conflicts between open file descriptions even inside one process, so this also
  // reports "held" when asked from within the supervisor itself.
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

std::vector<pid_t> end_job_processes(const NodeLayout& layout, const std::string& job_key,
                                     std::chrono::milliseconds limit) {
  std::string cgroup;
  std::ifstream in(state_dir(layout, job_key) / "cgroup");
  std::getline(in, cgroup);
  return JobProcesses(job_key, cgroup).kill_all(limit);
}

void kill_job_processes(ControlPlane& cp, const std::string& job_key, std::optional<std::int64_t> sup_pid) {
  if (sup_pid && *sup_pid > 1 && supervisor_alive(cp.layout(), job_key))
    cp.launcher().signal_group(static_cast<pid_t>(*sup_pid), SIGKILL);
  end_job_processes(cp.layout(), job_key, std::chrono::seconds(5));
}

void spawn_supervisor(ControlPlane& cp, const std::string& job_key) {
  const fs::path dir = state_dir(cp.layout(), job_key);
  fs::create_directories(dir);
  ProcessSpec spec;
  spec.argv = {self_executable().string(), "_supervise", "--job-key", job_key};
  // The node's environment, not the submitter's (AZURE_STORAGE_KEY, ...): jobs inherit from here.
  spec.clear_env = true;
  spec.env = node_base_environment();
  spec.env["BATCHAI_HOME"] = cp.settings().home.string();
  spec.cwd = dir;
  spec.stdout_file = dir / "supervisor.log";
  spec.stderr_file = dir / "supervisor.log";
  spec.append = true;
  // Run from inside a job (a job that submits jobs): the supervisor is born outside that job's
  // cgroup, so it does not end with it. spawn_detached returns once it has exec'd its clean env.
  leave_job_cgroup();
  cp.launcher().spawn_detached(spec);
}

}  // namespace batchai::control_plane::jobs_detail
