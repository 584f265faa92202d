// Job parameters: turns a job.json (JobCreateParameters inside "properties", REST wire names)
// into the Job document `job show` prints (docs/output.md §2.2.4): every key present (null when unset),
// the service's defaults filled in, toolType derived from the one *Settings object given, and
// secret values split off so they reach the processes but never the stored document.
#pragma once
#include <map>
#include <string>
#include <string_view>

#include "batchai/common/json_schema.hpp"
#include "batchai/common/json_util.hpp"
#include "batchai/runtime/job.hpp"

namespace batchai::runtime {

// "custom", "custommpi", "horovod", "cntk", "tensorflow", "caffe", "caffe2", "chainer", "pytorch".
std::string tool_type_name(ToolType type);
ToolType tool_type_from_name(std::string_view name);  // InvalidArgument when unknown
// The job.json key that selects the toolkit ("customToolkitSettings", "horovodSettings", ...).
std::string settings_key(ToolType type);

// Who the job is: names from the command line, the resolved cluster, and the output uuid.
struct JobIdentity {
  std::string subscription;
  std::string resource_group;
  std::string workspace;
  std::string experiment;
  std::string name;
  std::string cluster_id;     // the cluster's real ARM id (overrides properties.cluster.id)
  std::string uuid;           // empty: a new random one
  std::string creation_time;  // ISO-8601 text for creationTime and the transition times
};

struct JobSpecOptions {
  bool validate_schema = true;  // check against schemas/2018-05-01/job.json first
};

// The accepted job: the document to store and show, the same job typed, and its secret values.
// Mounts are taken as written; the control plane fills in storage placeholders and credentials
// (docs/behaviour.md §4.5, its rules) and then calls set_mount_volumes.
struct JobSpec {
  Json document;                               // the Job resource (secrets and keys shown as null)
  Job job;                                     // parse_job(document)
  ToolType tool_type = ToolType::kCustom;
  std::map<std::string, std::string> secrets;  // secrets[].name -> value, for the processes only
  std::string registry_password;               // containerSettings' credentials.password: the image pull's only
};

// Replaces the job's mounts with a wire-form mountVolumes object (the file's, patched by the
// control plane): the document's mountVolumes (credentials shown as null) and job.mount_volumes.
void set_mount_volumes(JobSpec& spec, const Json& wire_mount_volumes);

// The 2018-05-01 job.json schema (built into the library), with the requirements real files
// leave to the CLI relaxed: accountName and credentials of azureFileShares/azureBlobFileSystems
// (docs/behaviour.md §4.5 fills them in). Validation runs on the file as written, before mount patching.
const JsonSchema& job_schema();

// Builds the Job document (and the typed Job) from a parsed job.json. Throws InvalidArgument with a message naming
// the offending field: schema violations, a missing nodeCount/stdOutErrPathPrefix, zero or
// several *Settings objects, a toolkit without its required script/command, a bad duration.
JobSpec build_job_spec(const Json& job_file, const JobIdentity& identity, const JobSpecOptions& options = {});

// Where a job may write on its nodes (stdOutErrPathPrefix, outputDirectories[].pathPrefix):
// $AZ_BATCHAI_MOUNT_ROOT, $AZ_BATCHAI_JOB_MOUNT_ROOT or a job temporary folder variable, then a
// relative path without '..'. InvalidArgument naming `field` otherwise; returns the variable.
std::string check_job_output_prefix(const std::string& text, const std::string& field);

// "{sub}/{rg}/workspaces/{ws}/experiments/{exp}/jobs/{job}/{uuid}".
std::string job_output_path_segment(const JobIdentity& identity, const std::string& uuid);

// maxWallClockTime as given ("P7D", "PT2H30M", "7.00:00:00", "1 day, 2:00:00") to the
// service's timedelta text ("7 days, 0:00:00"). InvalidArgument when unreadable.
std::string normalize_wall_clock_time(const std::string& text);

}  // namespace batchai::runtime
