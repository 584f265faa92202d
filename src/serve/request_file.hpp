// A request body handed to a service that reads configuration files (cluster, file server and
// job create take ClusterCreateParameters / FileServerCreateParameters / JobCreateParameters as
// `--config-file` does): written 0600 to a fresh file in a folder of the server's own under
// $BATCHAI_HOME, removed when this goes out of scope.
#pragma once
#include <filesystem>

#include "batchai/common/json_util.hpp"

namespace batchai::serve {

class RequestFile {
 public:
  RequestFile(const std::filesystem::path& dir, const Json& body);
  ~RequestFile();
  RequestFile(const RequestFile&) = delete;
  RequestFile& operator=(const RequestFile&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// `message` with every mention of a file under `dir` replaced by "the request body".
std::string without_request_paths(std::string message, const std::filesystem::path& dir);

}  // namespace batchai::serve
