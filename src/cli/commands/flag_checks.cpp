#include "commands/flag_checks.hpp"

#include <string>
#include <vector>

#include "batchai/common/errors.hpp"

namespace batchai::cli {
namespace {

std::vector<std::string> split_colons(const std::string& text) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == ':')
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

}  // namespace

void check_node_count_flags(const Args& args) {
  for (const char* flag : {"target", "min", "max"}) {
    const std::optional<int> value = args.integer(flag);  // nullopt where the command has no such flag
    if (value && *value < 0)
      throw InvalidArgument("--" + std::string(flag) + " must be 0 or more nodes, got " + std::to_string(*value) + ".");
  }
}

void check_auto_scale_flags(const Args& args) {
  const int min = args.integer("min").value_or(0);
  const int max = args.integer("max").value_or(0);
  if (min < 0 || max < 0)
    throw InvalidArgument("--min and --max must be 0 or more nodes, got " + std::to_string(min) + " and " +
                          std::to_string(max) + ".");
}

void check_cluster_create_flags(const control_plane::ClusterCreateOptions& o) {
  if (o.custom_image && !o.image)
    throw InvalidArgument("You need to specify --image argument with information about the custom image");
  if (o.image && o.image->find(':') != std::string::npos) {
    const auto parts = split_colons(*o.image);
    if (parts.size() != 4)
      throw InvalidArgument(R"(--image must have format "publisher:offer:sku:version" or "publisher:offer:sku:")");
    if (parts[0].empty()) throw InvalidArgument("Image publisher must be provided in --image argument");
    if (parts[1].empty()) throw InvalidArgument("Image offer must be provided in --image argument");
    if (parts[2].empty()) throw InvalidArgument("Image sku must be provided in --image argument");
  }
  if (o.setup_task && !o.setup_task_output)
    throw InvalidArgument("--setup-task requires providing of --setup-task-output");
}

void check_job_file_expiry(const Args& args) {
  const int minutes = args.integer("expiry").value_or(60);
  if (minutes < 5 || minutes > 600)
    throw InvalidArgument("--expiry must be between 5 and 600 minutes, got " + std::to_string(minutes) + ".");
}

void check_cluster_file_expiry(const Args& args) {
  const int minutes = args.integer("expiry").value_or(60);
  if (minutes < 5 || minutes > 600)
    throw InvalidArgument("--expiry must be at least 5 and at most 600, got " + std::to_string(minutes) + ".");
}

}  // namespace batchai::cli
