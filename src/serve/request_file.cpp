#include "request_file.hpp"

#include <system_error>

#include "batchai/common/ids.hpp"
#include "private_file.hpp"

namespace batchai::serve {

RequestFile::RequestFile(const std::filesystem::path& dir, const Json& body) : path_(dir / (new_uuid() + ".json")) {
  make_private_dir(dir);
  write_private_file(path_, body.dump());
}

RequestFile::~RequestFile() {
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

std::string without_request_paths(std::string message, const std::filesystem::path& dir) {
  const std::string prefix = dir.string() + "/";
  for (std::size_t at = message.find(prefix); at != std::string::npos; at = message.find(prefix, at)) {
    std::size_t end = message.find(".json", at);
    end = end == std::string::npos ? message.size() : end + 5;
    message.replace(at, end - at, "the request body");
  }
  return message;
}

}  // namespace batchai::serve
