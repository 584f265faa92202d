// Download links of a job's output files (docs/serve.md "Job output files"). listOutputFiles
// answers, for every file, an https URL on this server that carries its own expiry and signature
// (HMAC-SHA256 under the home's token key), as Azure answers a SAS URL: clients GET it without
// the bearer token (`az batchai job file stream` does, with python-requests and a Range header).
// A link names the job, the output directory, the path in it and the file; each GET looks the
// file up again through the control plane, confined to the job's output folder.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "http/http_message.hpp"

#include "batchai/control_plane/control_plane.hpp"
#include "batchai/serve/server.hpp"

namespace batchai::serve {

// Every link's path starts so; its signature is in the path (the access log leaves it out).
inline constexpr std::string_view kJobFileLinkPrefix = "/batchai-files/";

struct JobFileLink {
  control_plane::JobRef job;
  std::string directory_id;
  std::string path;  // in the output directory; "." for its top
  std::string file;
  std::int64_t expires_s = 0;  // Unix time
};

// A file the trainer's manifest names inside the job's (or its cluster's) mounted volumes
// (docs/serve.md "Dashboard"): resolved again at each GET through the control plane's
// DashboardReads::open_mount_file, confined to those volumes.
struct MountFileLink {
  control_plane::JobRef job;
  bool job_root = true;  // $AZ_BATCHAI_JOB_MOUNT_ROOT; false: the cluster's mount root
  std::string mount_path;
  std::int64_t expires_s = 0;
};

// base: the server's "https://HOST:PORT" ("" for a link relative to the server).
std::string job_file_url(const Identity& identity, const std::string& base, const JobFileLink& link);
std::string mount_file_url(const Identity& identity, const std::string& base, const MountFileLink& link);
// The request's path is a link's (/batchai-files/...).
bool is_job_file_request(const HttpRequest& req);

}  // namespace batchai::serve
