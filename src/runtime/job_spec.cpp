// job.json -> Job document: key shapes, service defaults, toolType and secrets (docs/output.md §2.2.4, docs/behaviour.md §3.2).
#include "batchai/runtime/job_spec.hpp"

#include <array>
#include <functional>

#include "batchai/common/clock.hpp"
#include "batchai/common/confined_path.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/runtime/container_settings.hpp"

namespace batchai::runtime {

// The schema text, generated from schemas/2018-05-01/job.json at configure time.
extern const char* const kJobSchemaText;

namespace {

struct ToolkitInfo {
  ToolType type;
  const char* name;
  const char* key;
  const char* model;                  // SDK model name for "can not be None" messages
  std::vector<const char*> fields;    // every key the service returns, sorted
  bool process_count_defaults;        // processCount = nodeCount when omitted
};

const std::vector<ToolkitInfo>& toolkits() {
  static const std::vector<ToolkitInfo> kToolkits = {
      {ToolType::kCntk, "cntk", "cntkSettings", "CNTKsettings",
       {"commandLineArgs", "configFilePath", "languageType", "processCount", "pythonInterpreterPath", "pythonScriptFilePath"}, true},
      {ToolType::kPyTorch, "pytorch", "pyTorchSettings", "PyTorchSettings",
       {"commandLineArgs", "communicationBackend", "processCount", "pythonInterpreterPath", "pythonScriptFilePath"}, true},
      {ToolType::kTensorFlow, "tensorflow", "tensorFlowSettings", "TensorFlowSettings",
       {"masterCommandLineArgs", "parameterServerCommandLineArgs", "parameterServerCount", "pythonInterpreterPath",
        "pythonScriptFilePath", "workerCommandLineArgs", "workerCount"}, false},
      {ToolType::kCaffe, "caffe", "caffeSettings", "CaffeSettings",
       {"commandLineArgs", "configFilePath", "processCount", "pythonInterpreterPath", "pythonScriptFilePath"}, true},
      {ToolType::kCaffe2, "caffe2", "caffe2Settings", "Caffe2Settings",
       {"commandLineArgs", "pythonInterpreterPath", "pythonScriptFilePath"}, false},
      {ToolType::kChainer, "chainer", "chainerSettings", "ChainerSettings",
       {"commandLineArgs", "processCount", "pythonInterpreterPath", "pythonScriptFilePath"}, true},
      {ToolType::kCustom, "custom", "customToolkitSettings", "CustomToolkitSettings", {"commandLine"}, false},
      {ToolType::kCustomMpi, "custommpi", "customMpiSettings", "CustomMpiSettings", {"commandLine", "processCount"}, true},
      {ToolType::kHorovod, "horovod", "horovodSettings", "HorovodSettings",
       {"commandLineArgs", "processCount", "pythonInterpreterPath", "pythonScriptFilePath"}, true},
  };
  return kToolkits;
}

const ToolkitInfo& info(ToolType type) {
  for (const auto& t : toolkits()) {
    if (t.type == type) return t;
  }
  throw InvalidArgument("unknown toolkit");
}

std::string snake(const std::string& camel) {
  std::string out;
  for (char c : camel) {
    if (c >= 'A' && c <= 'Z') {
      out += '_';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

[[noreturn]] void missing(const std::string& model, const std::string& field) {
  throw InvalidArgument("validation error: Parameter '" + model + "." + snake(field) +
                        "' can not be None. Add \"" + field + "\" to the job configuration file.");
}

bool present(const Json& obj, const char* key) { return obj.is_object() && obj.contains(key) && !obj[key].is_null(); }

// Copies the listed keys (null when absent); unknown keys are dropped as the service did.
Json pick(const Json& source, std::initializer_list<const char*> keys) {
  Json out = Json::object();
  for (const char* k : keys) out[k] = present(source, k) ? source[k] : Json(nullptr);
  return out;
}

Json shape_list(const Json& source, const char* key, const std::function<Json(const Json&)>& shape) {
  if (!present(source, key)) return nullptr;
  Json out = Json::array();
  for (const auto& item : source[key]) out.push_back(shape(item));
  return out;
}

Json shape_credentials(const Json& c) {
  if (!c.is_object()) return nullptr;
  // Keys are sent to the service but never shown back.
  return {{"accountKey", nullptr}, {"accountKeySecretReference", present(c, "accountKeySecretReference") ? c["accountKeySecretReference"] : Json(nullptr)}};
}

Json shape_mount_volumes(const Json& mv) {
  if (!mv.is_object()) return nullptr;
  Json out = Json::object();
  out["azureFileShares"] = shape_list(mv, "azureFileShares", [](const Json& s) {
    Json o = pick(s, {"accountName", "azureFileUrl", "relativeMountPath"});
    o["credentials"] = shape_credentials(s.value("credentials", Json()));
    o["fileMode"] = present(s, "fileMode") ? s["fileMode"] : Json("0777");
    o["directoryMode"] = present(s, "directoryMode") ? s["directoryMode"] : Json("0777");
    return o;
  });
  out["azureBlobFileSystems"] = shape_list(mv, "azureBlobFileSystems", [](const Json& b) {
    Json o = pick(b, {"accountName", "containerName", "mountOptions", "relativeMountPath"});
    o["credentials"] = shape_credentials(b.value("credentials", Json()));
    return o;
  });
  out["fileServers"] = shape_list(mv, "fileServers", [](const Json& f) {
    Json o = pick(f, {"mountOptions", "relativeMountPath", "sourceDirectory"});
    o["fileServer"] = present(f, "fileServer") ? pick(f["fileServer"], {"id"}) : Json(nullptr);
    return o;
  });
  out["unmanagedFileSystems"] = shape_list(mv, "unmanagedFileSystems", [](const Json& u) {
    return pick(u, {"mountCommand", "relativeMountPath"});
  });
  return out;
}

Json shape_container(const Json& c) {
  if (!c.is_object()) return nullptr;
  Json out = {{"imageSourceRegistry", nullptr}, {"shmSize", present(c, "shmSize") ? c["shmSize"] : Json(nullptr)}};
  if (present(c, "imageSourceRegistry")) {
    const Json& r = c["imageSourceRegistry"];
    Json reg = pick(r, {"image", "serverUrl"});
    reg["credentials"] = nullptr;
    if (present(r, "credentials")) {
      const Json& cr = r["credentials"];
      reg["credentials"] = {{"password", nullptr},
                            {"passwordSecretReference", present(cr, "passwordSecretReference") ? cr["passwordSecretReference"] : Json(nullptr)},
                            {"username", present(cr, "username") ? cr["username"] : Json(nullptr)}};
    }
    out["imageSourceRegistry"] = reg;
  }
  return out;
}

void check_toolkit(const ToolkitInfo& t, const Json& s) {
  auto need = [&](const char* field) {
    if (!present(s, field)) missing(t.model, field);
  };
  switch (t.type) {
    case ToolType::kCustom:
    case ToolType::kCustomMpi: need("commandLine"); break;
    case ToolType::kCntk:
      if (!present(s, "pythonScriptFilePath") && !present(s, "configFilePath")) {
        throw InvalidArgument("cntkSettings needs \"configFilePath\" (BrainScript) or \"pythonScriptFilePath\" (Python); "
                              "add one of them to the job configuration file.");
      }
      break;
    case ToolType::kCaffe:
      if (present(s, "pythonScriptFilePath") == present(s, "configFilePath")) {
        throw InvalidArgument("caffeSettings needs exactly one of \"configFilePath\" and \"pythonScriptFilePath\" "
                              "(they are mutually exclusive).");
      }
      if (present(s, "pythonInterpreterPath") && !present(s, "pythonScriptFilePath")) {
        throw InvalidArgument("caffeSettings.pythonInterpreterPath is only allowed with pythonScriptFilePath.");
      }
      break;
    default: need("pythonScriptFilePath"); break;
  }
  // int32 and at least one process (zero parameter servers is allowed); the upper bounds that
  // depend on the cluster's VM size are checked by the job service.
  for (const char* count : {"processCount", "workerCount", "parameterServerCount"}) {
    if (present(s, count)) {
      checked_integer(s[count], std::string(t.key) + "." + count, std::string(count) == "parameterServerCount" ? 0 : 1);
    }
  }
}

}  // namespace

std::string tool_type_name(ToolType type) { return info(type).name; }
std::string settings_key(ToolType type) { return info(type).key; }

ToolType tool_type_from_name(std::string_view name) {
  for (const auto& t : toolkits()) {
    if (iequals(name, t.name)) return t.type;
  }
  throw InvalidArgument("unknown toolType '" + std::string(name) +
                        "'; expected one of cntk, tensorflow, caffe, caffe2, chainer, horovod, custommpi, custom, pytorch");
}

const JsonSchema& job_schema() {
  static const JsonSchema schema = [] {
    JsonSchema s(Json::parse(kJobSchemaText));
    for (const char* def : {"AzureFileShareReference", "AzureBlobFileSystemReference"}) {
      s.relax_required(def, "accountName");
      s.relax_required(def, "credentials");
    }
    return s;
  }();
  return schema;
}

std::string job_output_path_segment(const JobIdentity& id, const std::string& uuid) {
  return id.subscription + "/" + id.resource_group + "/workspaces/" + id.workspace + "/experiments/" +
         id.experiment + "/jobs/" + id.name + "/" + uuid;
}

std::string normalize_wall_clock_time(const std::string& text) {
  bool too_long = false;
  if (auto d = parse_duration(text, &too_long)) return format_timedelta(*d);
  if (too_long) {
    throw InvalidArgument("constraints.maxWallClockTime '" + text + "' is longer than the maximum of " +
                          std::to_string(std::chrono::duration_cast<std::chrono::hours>(kMaxDuration).count() / 24) +
                          " days; give a shorter duration such as \"P7D\" (the default).");
  }
  throw InvalidArgument("constraints.maxWallClockTime '" + (text.size() > 64 ? text.substr(0, 61) + "..." : text) +
                        "' is not a duration; use ISO-8601 such as \"P7D\" or \"PT2H30M\".");
}

std::string check_job_output_prefix(const std::string& text, const std::string& field) {
  // Longest names first: $AZ_BATCHAI_JOB_TEMP is a prefix of $AZ_BATCHAI_JOB_TEMP_DIR.
  for (const char* name : {"AZ_BATCHAI_JOB_MOUNT_ROOT", "AZ_BATCHAI_SHARED_JOB_TEMP", "AZ_BATCHAI_JOB_TEMP_DIR",
                           "AZ_BATCHAI_MOUNT_ROOT", "AZ_BATCHAI_JOB_TEMP"}) {
    for (const std::string& var : {std::string("$") + name, std::string("${") + name + "}"}) {
      if (text.rfind(var, 0) != 0 || (text.size() > var.size() && text[var.size()] != '/')) continue;
      const std::size_t rest = text.find_first_not_of('/', var.size());
      try {
        confine_relative(rest == std::string::npos ? std::string() : text.substr(rest), field, std::string("$") + name);
      } catch (const InvalidArgument&) {
        throw InvalidArgument(field + " '" + text + "' must not contain '..': it would leave $" + name + ".");
      }
      return std::string("$") + name;
    }
  }
  throw InvalidArgument(field + " '" + text +
                        "' must start with $AZ_BATCHAI_MOUNT_ROOT or $AZ_BATCHAI_JOB_MOUNT_ROOT (or a job temporary "
                        "folder such as $AZ_BATCHAI_JOB_TEMP_DIR): the job writes only inside its mounts and folders.");
}

JobSpec build_job_spec(const Json& job_file, const JobIdentity& id, const JobSpecOptions& options) {
  if (!job_file.is_object()) throw InvalidArgument("the job configuration file must contain a JSON object");
  if (options.validate_schema) job_schema().validate_or_throw(job_file, "The job configuration file");
  const Json p = job_file.value("properties", Json::object());
  if (!p.is_object()) throw InvalidArgument("\"properties\" in the job configuration file must be an object");

  if (!present(p, "nodeCount")) missing("JobCreateParameters", "nodeCount");
  if (!present(p, "stdOutErrPathPrefix")) missing("JobCreateParameters", "stdOutErrPathPrefix");
  const std::int64_t node_count = checked_integer(p["nodeCount"], "nodeCount", 1);
  if (!p["stdOutErrPathPrefix"].is_string()) throw InvalidArgument("stdOutErrPathPrefix must be a string.");
  check_job_output_prefix(p["stdOutErrPathPrefix"].get<std::string>(), "stdOutErrPathPrefix");
  if (present(p, "outputDirectories") && p["outputDirectories"].is_array()) {
    for (const auto& d : p["outputDirectories"]) {
      // The prefix follows the stdOutErrPathPrefix rule; the suffix names a folder inside
      // {prefix}/{segment}/outputs and may not leave it.
      const std::string where = "outputDirectories[id=" + value_or<std::string>(d, "id", "") + "]";
      check_job_output_prefix(value_or<std::string>(d, "pathPrefix", ""), where + ".pathPrefix");
      if (d.is_object() && d.contains("pathSuffix") && d["pathSuffix"].is_string())
        confine_relative(d["pathSuffix"].get<std::string>(), where + ".pathSuffix", "its output directory");
    }
  }

  // Exactly one toolkit.
  std::vector<const ToolkitInfo*> given;
  for (const auto& t : toolkits()) {
    if (present(p, t.key)) given.push_back(&t);
  }
  std::string all_keys;
  for (const auto& t : toolkits()) all_keys += (all_keys.empty() ? "" : ", ") + std::string(t.key);
  if (given.empty()) {
    throw InvalidArgument("The job configuration file sets no toolkit; add exactly one of " + all_keys + ".");
  }
  if (given.size() > 1) {
    throw InvalidArgument(std::string("The job configuration file sets several toolkits (") + given[0]->key + " and " +
                          given[1]->key + "); keep exactly one.");
  }
  const ToolkitInfo& tk = *given[0];
  check_toolkit(tk, p[tk.key]);

  JobSpec spec;
  spec.tool_type = tk.type;
  const std::string uuid = id.uuid.empty() ? new_uuid() : id.uuid;
  Json doc = Json::object();
  for (const auto& t : toolkits()) doc[t.key] = nullptr;
  Json settings = Json::object();
  for (const char* f : tk.fields) settings[f] = present(p[tk.key], f) ? p[tk.key][f] : Json(nullptr);
  if (tk.process_count_defaults && settings["processCount"].is_null()) settings["processCount"] = node_count;
  if (tk.type == ToolType::kCntk && settings["languageType"].is_null()) {
    settings["languageType"] = present(settings, "pythonScriptFilePath") ? "Python" : "BrainScript";
  }
  doc[tk.key] = settings;

  const std::string cluster_id = !id.cluster_id.empty() ? id.cluster_id
                                 : present(p, "cluster") ? p["cluster"].value("id", "") : "";
  if (cluster_id.empty()) throw InvalidArgument("Please provide cluster information via command line or configuration file.");
  Json cluster = {{"id", cluster_id}, {"resourceGroup", nullptr}};
  if (auto parsed = parse_arm_id(cluster_id)) cluster["resourceGroup"] = parsed->resource_group;
  doc["cluster"] = cluster;

  std::string wall = "7 days, 0:00:00";
  if (present(p, "constraints") && present(p["constraints"], "maxWallClockTime")) {
    const Json& wall_given = p["constraints"]["maxWallClockTime"];
    if (!wall_given.is_string())
      throw InvalidArgument("constraints.maxWallClockTime must be a duration text such as \"P7D\", got " + wall_given.dump() + ".");
    wall = normalize_wall_clock_time(wall_given.get<std::string>());
  }
  doc["constraints"] = {{"maxWallClockTime", wall}};
  if (present(p, "containerSettings")) {
    validate_container_settings(p["containerSettings"]);
    const Json& registry = p["containerSettings"]["imageSourceRegistry"];
    if (present(registry, "credentials") && present(registry["credentials"], "password"))
      spec.registry_password = registry["credentials"]["password"].get<std::string>();
  }
  doc["containerSettings"] = shape_container(p.value("containerSettings", Json()));
  doc["creationTime"] = id.creation_time.empty() ? Json(nullptr) : Json(id.creation_time);
  doc["environmentVariables"] = shape_list(p, "environmentVariables", [](const Json& e) { return pick(e, {"name", "value"}); });
  doc["executionInfo"] = nullptr;
  doc["executionState"] = "queued";
  doc["executionStateTransitionTime"] = doc["creationTime"];
  doc["id"] = arm_id(id.subscription, id.resource_group,
                     {{"workspaces", id.workspace}, {"experiments", id.experiment}, {"jobs", id.name}});
  doc["inputDirectories"] = shape_list(p, "inputDirectories", [](const Json& d) { return pick(d, {"id", "path"}); });
  doc["jobOutputDirectoryPathSegment"] = job_output_path_segment(id, uuid);
  doc["jobPreparation"] = present(p, "jobPreparation") ? pick(p["jobPreparation"], {"commandLine"}) : Json(nullptr);
  if (!doc["jobPreparation"].is_null() && doc["jobPreparation"]["commandLine"].is_null()) {
    missing("JobPreparation", "commandLine");
  }
  doc["mountVolumes"] = shape_mount_volumes(present(p, "mountVolumes") ? p["mountVolumes"] : Json(nullptr));
  doc["name"] = id.name;
  doc["nodeCount"] = node_count;
  doc["outputDirectories"] =
      shape_list(p, "outputDirectories", [](const Json& d) { return pick(d, {"id", "pathPrefix", "pathSuffix"}); });
  doc["provisioningState"] = "succeeded";
  doc["provisioningStateTransitionTime"] = doc["creationTime"];
  doc["resourceGroup"] = id.resource_group;
  doc["schedulingPriority"] = present(p, "schedulingPriority") ? p["schedulingPriority"] : Json("normal");
  if (doc["schedulingPriority"] != "low" && doc["schedulingPriority"] != "normal" && doc["schedulingPriority"] != "high")
    throw InvalidArgument("schedulingPriority must be one of low, normal, high, got " + doc["schedulingPriority"].dump() + ".");
  doc["secrets"] = shape_list(p, "secrets", [&spec](const Json& s) {
    if (present(s, "value")) spec.secrets[s.value("name", "")] = s["value"].get<std::string>();
    return Json{{"name", present(s, "name") ? s["name"] : Json(nullptr)},
                {"value", nullptr},
                {"valueSecretReference", present(s, "valueSecretReference") ? s["valueSecretReference"] : Json(nullptr)}};
  });
  doc["stdOutErrPathPrefix"] = p["stdOutErrPathPrefix"];
  doc["toolType"] = tk.name;
  doc["type"] = "Microsoft.BatchAI/workspaces/experiments/jobs";
  spec.document = std::move(doc);
  spec.job = parse_job(spec.document);
  return spec;
}

void set_mount_volumes(JobSpec& spec, const Json& wire_mount_volumes) {
  spec.document["mountVolumes"] = shape_mount_volumes(wire_mount_volumes);
  spec.job = parse_job(spec.document);
}

}  // namespace batchai::runtime
