#include "ui/ui_api.hpp"

#include <algorithm>
#include <functional>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/control_plane/control_plane.hpp"
#include "batchai/control_plane/dashboard_reads.hpp"
#include "job_files/job_file_links.hpp"
#include "ui/ui_api_util.hpp"
#include "ui/ui_routes.hpp"

namespace batchai::serve {
namespace {

namespace cp = control_plane;

constexpr std::size_t kMaxClusters = 100;
constexpr std::size_t kMaxExperiments = 200;
constexpr std::int64_t kMaxPageJobs = 100;
constexpr std::size_t kMaxNodes = 1000;
constexpr std::size_t kMaxFiles = 200;
// A job's own text in its answer: the rest is `batchai job show`'s.
constexpr std::size_t kMaxCommandLine = 16 * 1024;
constexpr std::size_t kMaxErrors = 20;
constexpr std::size_t kMaxErrorText = 2048;
constexpr std::size_t kMaxEnvText = 4096;
// What the arrays of an answer may take together, leaving room for the rest of it.
constexpr std::size_t kArrayBudget = kUiMaxAnswerBytes - 4096;

const char* const kJobStates[] = {"queued", "running", "terminating", "succeeded", "failed"};

Json opt(const std::optional<std::string>& v) { return v ? Json(*v) : Json(nullptr); }
Json opt(const std::optional<std::int64_t>& v) { return v ? Json(*v) : Json(nullptr); }

// Appends while the budget lasts; false (and nothing appended) once it is spent.
bool append_within(Json& array, Json item, std::size_t& budget) {
  const std::size_t size = json_size(item) + 1;
  if (size > budget) return false;
  budget -= size;
  array.push_back(std::move(item));
  return true;
}

Json overview(const HttpRequest& req, HttpResponse& res, UiContext& ui, bool& not_modified) {
  auto lease = ui.pool.borrow();  // held while the reads use its control plane
  cp::DashboardReads reads(*lease);
  const cp::DashboardOverview o =
      reads.overview(kMaxClusters, kMaxExperiments, ui.overview_engines.take(std::chrono::steady_clock::now()));
  const std::string etag = "\"" + o.version + "\"";
  res.set_header("ETag", etag);
  res.set_header("Cache-Control", "no-cache");
  if (req.get_header_value("If-None-Match") == etag) {
    not_modified = true;
    return Json();
  }
  bool truncated = o.truncated;
  std::size_t budget = kArrayBudget;
  Json workspaces = Json::array(), clusters = Json::array(), experiments = Json::array();
  for (const auto& c : o.clusters) {
    Json item = {{"resourceGroup", c.resource_group},
                 {"workspace", c.workspace},
                 {"name", c.name},
                 {"engine", c.engine},
                 {"vmSize", c.vm_size},
                 {"allocationState", c.allocation_state},
                 {"currentNodeCount", c.current_nodes},
                 {"targetNodeCount", c.target_nodes},
                 {"nodeStateCounts",
                  {{"idleNodeCount", c.idle},
                   {"runningNodeCount", c.running},
                   {"preparingNodeCount", c.preparing},
                   {"unusableNodeCount", c.unusable},
                   {"leavingNodeCount", c.leaving}}},
                 {"cli", "batchai cluster show" + cli_where({c.resource_group, c.workspace}) + " -n " + shell_word(c.name)}};
    if (!append_within(clusters, std::move(item), budget)) truncated = true;
  }
  for (const auto& e : o.experiments) {
    Json counts = Json::object();
    for (const char* s : kJobStates) counts[s] = e.job_counts.count(s) ? e.job_counts.at(s) : 0;
    Json item = {{"resourceGroup", e.resource_group}, {"workspace", e.workspace}, {"name", e.name}, {"jobCounts", counts}};
    if (!append_within(experiments, std::move(item), budget)) truncated = true;
  }
  for (const auto& w : o.workspaces)
    if (!append_within(workspaces, {{"resourceGroup", w.resource_group}, {"name", w.workspace}}, budget)) truncated = true;
  return {{"version", o.version},
          {"workspaces", workspaces},
          {"clusters", clusters},
          {"experiments", experiments},
          {"truncated", truncated},
          {"cli", "batchai cluster list -o table"}};
}

Json jobs(const HttpRequest& req, UiContext& ui) {
  const cp::WorkspaceRef where = ui_workspace(req);
  const std::string experiment = ui_name(req, "experiment", "experiment_name");
  std::string state = req.get_param_value("state");
  if (!state.empty() && std::find(std::begin(kJobStates), std::end(kJobStates), state) == std::end(kJobStates))
    throw AnswerError(400, "InvalidParameter", "state must be one of queued, running, terminating, succeeded, failed.");
  const std::int64_t limit = ui_count(req, "limit", kMaxPageJobs).value_or(kMaxPageJobs);
  if (limit < 1) throw AnswerError(400, "InvalidParameter", "limit must be between 1 and 100.");
  const std::int64_t page = ui_count(req, "page", 1000000).value_or(0);
  auto lease = ui.pool.borrow();  // held while the reads use its control plane
  cp::DashboardReads reads(*lease);
  const cp::DashboardJobPage p =
      reads.jobs(where, experiment, state, page, limit, ui.jobs_engines.take(std::chrono::steady_clock::now()));
  Json rows = Json::array();
  for (const auto& j : p.jobs)
    rows.push_back({{"name", j.name},
                    {"state", j.state},
                    {"cluster", j.cluster},
                    {"nodeCount", j.node_count},
                    {"toolType", j.tool_type},
                    {"creationTime", opt(j.creation_time)},
                    {"startTime", opt(j.start_time)},
                    {"endTime", opt(j.end_time)},
                    {"exitCode", opt(j.exit_code)},
                    {"queuePosition", opt(j.queue_position)},
                    {"waitReason", opt(j.wait_reason)}});
  Json counts = Json::object();
  for (const char* s : kJobStates) counts[s] = p.counts.count(s) ? p.counts.at(s) : 0;
  return {{"total", p.total},
          {"countsByState", counts},
          {"page", page},
          {"limit", limit},
          {"jobs", rows},
          {"version", p.version},
          {"cli", "batchai job list" + cli_where(where) + " -e " + shell_word(experiment) + " -o table"}};
}

std::string last_segment(const std::string& id) {
  const auto slash = id.rfind('/');
  return slash == std::string::npos ? id : id.substr(slash + 1);
}

Json string_or_null(const Json& doc, const char* key) {
  return doc.is_object() && doc.contains(key) && doc[key].is_string() ? doc[key] : Json(nullptr);
}

// The job's command as its document holds it: the toolkit's commandLine, or its script and arguments.
Json command_line(const Json& doc) {
  for (const auto& [key, value] : doc.items()) {
    if (key.size() < 8 || key.compare(key.size() - 8, 8, "Settings") != 0 || !value.is_object()) continue;
    if (key == "containerSettings") continue;
    if (value.contains("commandLine") && value["commandLine"].is_string()) return value["commandLine"];
    std::string text;
    for (const char* part : {"pythonInterpreterPath", "pythonScriptFilePath", "configFilePath", "commandLineArgs",
                             "masterCommandLineArgs"})
      if (value.contains(part) && value[part].is_string()) text += (text.empty() ? "" : " ") + value[part].get<std::string>();
    if (!text.empty()) return text;
  }
  return nullptr;
}

Json job(const HttpRequest& req, UiContext& ui, std::int64_t now_s) {
  const cp::JobRef ref = ui_job(req);
  auto lease = ui.pool.borrow();
  cp::ControlPlane& plane = *lease;
  const Json doc = plane.jobs().show(ref);
  const Json info = doc.value("executionInfo", Json::object());
  const std::string state = doc.value("executionState", Json("")).is_string() ? doc["executionState"].get<std::string>() : "";
  Json errors = Json::array();
  if (info.is_object() && info.contains("errors") && info["errors"].is_array())
    for (const auto& e : info["errors"]) {
      if (errors.size() >= kMaxErrors) break;
      Json details = e.is_object() && e.contains("details") ? e["details"] : Json(nullptr);
      if (json_size(details) > kMaxErrorText) details = trim_text(details.dump(), kMaxErrorText);
      errors.push_back({{"code", trim_text(string_or_null(e, "code"), 256)},
                        {"message", trim_text(string_or_null(e, "message"), kMaxErrorText)},
                        {"details", std::move(details)}});
    }
  // The states the job went through, from the times its document keeps.
  Json history = Json::array();
  history.push_back({{"state", "queued"}, {"time", string_or_null(doc, "creationTime")}});
  if (info.is_object() && info.value("startTime", Json()).is_string())
    history.push_back({{"state", "running"}, {"time", info["startTime"]}});
  if (state == "terminating") history.push_back({{"state", state}, {"time", string_or_null(doc, "executionStateTransitionTime")}});
  if (state == "succeeded" || state == "failed")
    history.push_back({{"state", state}, {"time", info.is_object() && info.value("endTime", Json()).is_string()
                                                       ? info["endTime"]
                                                       : string_or_null(doc, "executionStateTransitionTime")}});
  Json env = Json::array();
  if (doc.value("environmentVariables", Json()).is_array())
    for (const auto& e : doc["environmentVariables"])
      env.push_back({{"name", trim_text(string_or_null(e, "name"), 256)},
                     {"value", trim_text(string_or_null(e, "value"), kMaxEnvText)}});
  Json secret_names = Json::array();  // names only: values never leave the store
  if (doc.value("secrets", Json()).is_array())
    for (const auto& e : doc["secrets"]) secret_names.push_back({{"name", string_or_null(e, "name")}});
  cp::DashboardReads reads(plane);
  const auto slurm_id = reads.engine_job_id(ref);
  Json nodes = Json::array();
  for (const auto& n : plane.jobs().node_list(ref)) {
    Json node = {{"nodeId", string_or_null(n, "nodeId")}, {"name", string_or_null(n, "nodeId")}};
    if (slurm_id) node["slurmJobId"] = *slurm_id;
    nodes.push_back(std::move(node));
  }
  const std::string cluster_id = doc.value("cluster", Json::object()).is_object()
                                     ? value_or<std::string>(doc["cluster"], "id", "")
                                     : std::string();
  bool command_trimmed = false;
  Json out_job = {{"name", ref.name},
                  {"experiment", ref.experiment},
                  {"cluster", last_segment(cluster_id)},
                  {"state", state},
                  {"toolType", string_or_null(doc, "toolType")},
                  {"nodeCount", doc.value("nodeCount", Json(nullptr))},
                  {"priority", string_or_null(doc, "schedulingPriority")},
                  {"creationTime", string_or_null(doc, "creationTime")},
                  {"startTime", string_or_null(info, "startTime")},
                  {"endTime", string_or_null(info, "endTime")},
                  {"exitCode", info.is_object() && info.contains("exitCode") ? info["exitCode"] : Json(nullptr)},
                  {"executionState", state},
                  {"errors", errors},
                  {"stateHistory", history},
                  {"environmentVariables", env},
                  {"secretEnvironmentVariables", secret_names},
                  {"commandLine", trim_text(command_line(doc), kMaxCommandLine, &command_trimmed)},
                  {"nodes", nodes}};
  out_job["commandLineTrimmed"] = command_trimmed;
  if (slurm_id) out_job["slurmJobId"] = *slurm_id;
  // The files at the top of each output directory, each with the same signed link as
  // listOutputFiles gives (relative: the page's origin, whichever name it was opened with).
  std::vector<std::string> directories = {"stdouterr"};
  if (doc.value("outputDirectories", Json()).is_array())
    for (const auto& d : doc["outputDirectories"])
      if (d.value("id", Json()).is_string()) directories.push_back(d["id"].get<std::string>());
  Json files = Json::array();
  const std::int64_t expires = now_s + 3600;
  for (const auto& dir : directories) {
    Json listed;
    try {
      listed = plane.jobs().file_list(ref, dir, ".", 60);
    } catch (const Error&) {
      continue;  // not there yet, or a directory its job cannot list
    }
    for (const auto& f : listed) {
      if (files.size() >= kMaxFiles) break;
      if (value_or<std::string>(f, "fileType", "") != "file" || !f.value("name", Json()).is_string()) continue;
      const std::string name = f["name"].get<std::string>();
      files.push_back({{"directory", dir},
                       {"path", "."},
                       {"name", name},
                       {"bytes", f.value("contentLength", Json(nullptr))},
                       {"url", job_file_url(ui.identity, "", {ref, dir, ".", name, expires})}});
    }
  }
  const std::string where = cli_where(ref.where) + " -e " + shell_word(ref.experiment);
  Json out = {{"job", out_job},
              {"files", files},
              {"model", ui_manifest_files(ui, plane, ref, now_s)},
              {"cli",
               {{"show", "batchai job show" + where + " -n " + shell_word(ref.name)},
                {"files", "batchai job file list" + where + " -j " + shell_word(ref.name) + " -d stdouterr"},
                {"stream", "batchai job file stream" + where + " -j " + shell_word(ref.name) + " -d stdouterr -f stdout.txt"}}}};
  // Environment values and file names are the user's: trimmed to fit rather than refused.
  while (json_size(out) > kArrayBudget && !out["files"].empty()) out["files"].erase(out["files"].size() - 1);
  while (json_size(out) > kArrayBudget && !out["job"]["environmentVariables"].empty())
    out["job"]["environmentVariables"].erase(out["job"]["environmentVariables"].size() - 1);
  while (json_size(out) > kArrayBudget && !out["job"]["errors"].empty())
    out["job"]["errors"].erase(out["job"]["errors"].size() - 1);
  if (json_size(out) > kArrayBudget) {
    bool cut = false;
    out["job"]["commandLine"] = trim_text(out["job"]["commandLine"], 1024, &cut);
    if (cut) out["job"]["commandLineTrimmed"] = true;
  }
  return out;
}

Json cluster_nodes(const HttpRequest& req, UiContext& ui) {
  const cp::WorkspaceRef where = ui_workspace(req);
  const std::string cluster = ui_name(req, "cluster", "cluster_name");
  auto lease = ui.pool.borrow();
  cp::ControlPlane& plane = *lease;
  const Json listed = plane.nodes().list(where, cluster);  // the engine's own listing (Slurm's node names)
  cp::DashboardReads reads(plane);
  const cp::DashboardClusterNodes rows = reads.cluster_nodes(where, cluster, kMaxNodes);
  std::map<std::string, const cp::DashboardNode*> by_id;
  for (const auto& n : rows.nodes) by_id[n.node_id] = &n;
  Json nodes = Json::array();
  bool truncated = false;
  std::size_t budget = kArrayBudget;
  for (const auto& n : listed) {
    if (nodes.size() >= kMaxNodes) {
      truncated = true;
      break;
    }
    const std::string id = value_or<std::string>(n, "nodeId", "");
    auto it = by_id.find(id);
    Json job = nullptr;
    Json state = n.is_object() && n.contains("state") ? n["state"] : Json(nullptr);
    if (it != by_id.end()) {
      state = it->second->state;
      if (it->second->job_name)
        job = {{"experiment", opt(it->second->job_experiment)}, {"name", *it->second->job_name},
               {"slurmJobId", opt(it->second->engine_job_id)}};
    }
    Json item = {{"nodeId", id}, {"name", id}, {"state", state}, {"ipAddress", string_or_null(n, "ipAddress")}, {"job", job}};
    if (!append_within(nodes, std::move(item), budget)) {
      truncated = true;
      break;
    }
  }
  return {{"cluster", cluster},
          {"engine", rows.engine},
          {"allocationState", rows.allocation_state},
          {"nodes", nodes},
          {"truncated", truncated},
          {"cli", "batchai cluster node list" + cli_where(where) + " -c " + shell_word(cluster)}};
}

void route(const HttpRequest& req, HttpResponse& res, UiContext& ui, std::int64_t now_s) {
  const std::string_view path = std::string_view(req.path).substr(std::string_view("/ui/api/").size());
  if (path == "overview") {
    bool not_modified = false;
    Json body = overview(req, res, ui, not_modified);
    if (not_modified) {
      res.status = 304;
      return;
    }
    return ui_answer(res, body);
  }
  if (path == "jobs") return ui_answer(res, jobs(req, ui));
  if (path == "job") return ui_answer(res, job(req, ui, now_s));
  if (path == "job/log") return ui_answer(res, ui_job_log(req, ui));
  if (path == "job/metrics") return ui_answer(res, ui_job_metrics(req, ui));
  if (path == "experiment") return ui_answer(res, ui_experiment(req, ui));
  if (path == "cluster/nodes") return ui_answer(res, cluster_nodes(req, ui));
  throw AnswerError(404, "NotFound", "No such dashboard API.");
}

}  // namespace

void answer_ui_api(const HttpRequest& req, HttpResponse& res, UiContext& ui, std::int64_t now_s) {
  route(req, res, ui, now_s);
}

}  // namespace batchai::serve
