// A job's containers (containerSettings) for one run: the image found in this machine's Podman
// store or pulled under a time bound, one container per node started before the first task (all
// at once). A record in the home (containers/<job key>) says that the job may have containers, from
// before the first starts until they are gone: whoever ends the job's processes (terminate, delete,
// a dead supervisor, a deleted cluster), its runner once the outcome is stored, and the reconcile's
// sweep of ended jobs remove them by their label.
#pragma once
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/json_util.hpp"
#include "batchai/common/process.hpp"
#include "batchai/runtime/container_gateway.hpp"
#include "batchai/runtime/container_plan.hpp"
#include "batchai/runtime/podman.hpp"
#include "job_run.hpp"

namespace batchai::control_plane {
class NodeLayout;
}

namespace batchai::control_plane::jobs_detail {

// The folder of the job's gateway socket in its state folder (bound into every container).
inline constexpr const char* kGatewayDir = "gateway";

// How long finding or pulling the image may take (BATCHAI_IMAGE_PULL_TIMEOUT_S overrides).
std::chrono::seconds image_pull_timeout();

// The record of a simulated job's containers: <home>/containers/<job key>.
std::filesystem::path containers_record(const NodeLayout& layout, const std::string& job_key);

class JobContainers {
 public:
  // `shared_root`: the folder whose storage/ and fileservers/ mount links may lead into; a link
  // that leads elsewhere (one a job planted in a node folder) is never bound into a container.
  // `record`: the file that lists the containers while they may exist (RunHost::containers_record).
  // `routes`: where each node's podman commands run (RunHost::container_routes; none: here).
  JobContainers(ProcessLauncher& launcher, std::filesystem::path state_dir, std::filesystem::path shared_root,
                std::filesystem::path record, std::string job_key, const PlacedRun& run,
                std::string registry_password, std::vector<runtime::PodmanRoute> routes = {});
  JobContainers(const JobContainers&) = delete;
  JobContainers& operator=(const JobContainers&) = delete;

  // Starts every node's container, finding or pulling the image when the local store lacks it;
  // the job's errors when it cannot. A pull stops as soon as `stopped` says so.
  std::optional<Json> start(std::ostream& log, const std::function<bool()>& stopped);
  // What the job's MPI gateway needs (container_gateway.hpp), once start() succeeded.
  runtime::GatewayOptions gateway_options() const;

 private:
  runtime::PodmanRoute route(std::size_t node) const;
  std::string where(std::size_t node) const;  // "this machine" or "node <id>"
  std::string where_named(std::size_t node) const;  // "node <id>"
  // Finds the image in `node`'s machine's store, or pulls it there.
  std::optional<Json> resolve_image(std::size_t node, std::ostream& log, const std::function<bool()>& stopped);
  // Every node's container from options.image (node 0's first where the others join its
  // namespaces); the nodes whose container did not start, the first one's message in `why`.
  std::vector<std::size_t> start_all(const runtime::ContainerOptions& options, std::string& why);
  std::vector<std::size_t> one_per_machine(const std::vector<std::size_t>& nodes) const;

  ProcessLauncher& launcher_;
  std::filesystem::path state_dir_;
  std::filesystem::path shared_root_;
  std::filesystem::path record_;
  std::string job_key_;
  const PlacedRun& run_;
  std::string registry_password_;
  std::vector<runtime::PodmanRoute> routes_;
  std::string image_;  // the reference the containers start from
  std::vector<std::string> names_;
};

// Removes every container labelled with the job's key (bounded), on this machine or on each of
// `routes`' hosts, then `record`; nothing when `record` does not exist. False when Podman failed
// (the record stays for the next try).
bool remove_job_containers(const std::filesystem::path& record, const std::string& job_key,
                           const std::vector<runtime::PodmanRoute>& routes = {}) noexcept;

// The reconcile's sweep: containers of the home's jobs that are no longer running and whose
// supervisor is gone (it died between storing the outcome and removing them) are removed.
// `running(key)` says whether the job is queued, running or terminating (its runner removes them,
// or ending it does). At most one job's per call; one whose removal failed waits 5 minutes.
void sweep_ended_jobs_containers(const NodeLayout& layout, const std::function<bool(const std::string&)>& running);

}  // namespace batchai::control_plane::jobs_detail
