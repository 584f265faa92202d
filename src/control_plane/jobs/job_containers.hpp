// A job's containers (containerSettings) for one run: the image found in this machine's Podman
// store or pulled under a time bound, one container per node started before the first task and
// removed after the last; their names recorded in the job's state folder so that whoever ends
// the job's processes (terminate, delete, a dead supervisor, a deleted cluster) removes them too.
#pragma once
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/json_util.hpp"
#include "batchai/common/process.hpp"
#include "batchai/runtime/container_gateway.hpp"
#include "job_run.hpp"

namespace batchai::control_plane::jobs_detail {

// The file in the job's state folder that lists its containers, one name a line.
inline constexpr const char* kContainersFile = "containers";
// The folder of the job's gateway socket in its state folder (bound into every container).
inline constexpr const char* kGatewayDir = "gateway";

// How long finding or pulling the image may take (BATCHAI_IMAGE_PULL_TIMEOUT_S overrides).
std::chrono::seconds image_pull_timeout();

class JobContainers {
 public:
  // `shared_root`: the folder whose storage/ and fileservers/ mount links may lead into; a link
  // that leads elsewhere (one a job planted in a node folder) is never bound into a container.
  JobContainers(ProcessLauncher& launcher, std::filesystem::path state_dir, std::filesystem::path shared_root,
                std::string job_key, const PlacedRun& run, std::string registry_password);
  ~JobContainers() { remove(); }
  JobContainers(const JobContainers&) = delete;
  JobContainers& operator=(const JobContainers&) = delete;

  // Finds or pulls the image and starts every node's container; the job's errors when it cannot.
  std::optional<Json> start(std::ostream& log);
  // Stops and removes the containers (bounded); safe to call again.
  void remove() noexcept;
  // What the job's MPI gateway needs (container_gateway.hpp), once start() succeeded.
  runtime::GatewayOptions gateway_options() const;

 private:
  std::optional<Json> resolve_image(std::ostream& log);

  ProcessLauncher& launcher_;
  std::filesystem::path state_dir_;
  std::filesystem::path shared_root_;
  std::string job_key_;
  const PlacedRun& run_;
  std::string registry_password_;
  std::string image_;  // the reference the containers start from
  std::vector<std::string> names_;
};

// Removes the containers listed in `state_dir`'s containers file (bounded), then the file.
void remove_recorded_containers(const std::filesystem::path& state_dir);

}  // namespace batchai::control_plane::jobs_detail
