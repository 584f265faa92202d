// A launch plan run in containers (docs/adr/0005-job-containers.md): one container per node and
// job, named from both and labelled with the job's key, started idle (`podman run -d ... sleep
// infinity`); each task becomes `podman exec` into its node's container with its argv, folder and
// environment unchanged (values through podman's environment: `-e NAME`, never on argv).
// Pure: container_run.hpp starts and removes the containers.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "batchai/runtime/launch_plan.hpp"

namespace batchai::runtime {

inline constexpr const char* kContainerJobLabel = "batchai.job";
// Where the running batchai and the libraries it loaded appear inside a container (read-only).
inline constexpr const char* kContainerBundleDir = "/.batchai";

// "batchai-<job key>-<node id>", characters outside [A-Za-z0-9_.-] as '_'.
std::string container_name(const std::string& job_key, const std::string& node_id);

struct Bind {
  std::filesystem::path host;
  std::filesystem::path container;
  bool read_only = false;
};

struct ContainerOptions {
  std::string job_key;
  std::string image;                        // as found in, or pulled into, the local store
  std::optional<std::int64_t> shm_bytes;    // containerSettings.shmSize
  std::vector<std::pair<std::string, std::string>> ulimits;  // {"nofile", "1024:4096"}: at or below the machine's
  std::vector<Bind> common_binds;           // on every node (the batchai bundle, storage targets)
  // The nodes' containers share one machine's memory as the nodes' processes do on the host
  // (MPI jobs): node 0's container holds the IPC namespace (/dev/shm of shm_bytes, else Podman's
  // 64 MiB, per node) and the PID namespace that the others join, so the ranks see one host.
  bool share_host = false;
};

// Podman's /dev/shm size when a job gives no shmSize (Docker's too): 64 MiB.
inline constexpr std::int64_t kDefaultShmBytes = 64ll << 20;

// Variables a task does not take into its container: the image's own PATH and HOME rule there.
bool kept_out_of_container(const std::string& variable);

// Folders of node `node` the container sees at the same paths: the node folder, the master's
// shared job folder and the job's stdouterr folder.
std::vector<std::filesystem::path> node_bind_paths(const LaunchPlan& plan, std::size_t node);

// `run -d --name N --label batchai.job=K --network=host --hostname batchai-node-<i> --ulimit ...
// --shm-size ... -v ... --entrypoint sleep IMAGE infinity` for node `node` (podman_base() goes in
// front). Its own host name makes each container a host of its own for Open MPI. With
// share_host, node 0's adds --ipc=shareable and the others' --ipc/--pid=container:<node 0's>
// (so node 0's must be running before theirs start).
std::vector<std::string> container_start_args(const LaunchPlan& plan, std::size_t node, const ContainerOptions& options);

// Every task and preparation becomes `podman exec` into its node's container (podman_base()
// first); the plan's program requirements go (they hold inside the image, not on the host).
// mpirun reaches the other nodes' containers through `self_executable _container-enter`
// (container_gateway.hpp).
void containerize_plan(LaunchPlan& plan, const std::vector<std::string>& podman_base, const std::string& job_key,
                       const std::filesystem::path& self_executable);

}  // namespace batchai::runtime
