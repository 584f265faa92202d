// MPI across a job's containers (docs/adr/0005-job-containers.md): mpirun runs in the master
// node's container with Open MPI's launch agent (plm_rsh_agent) set to `batchai _container-enter`;
// that agent asks the job's gateway, a thread of the job's runner outside the containers, over a
// Unix socket bound into every container, to run the daemon's command in the named node's
// container (`podman exec`). The agent's exit is the command's; the command dies with the agent.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "batchai/common/process.hpp"

namespace batchai::runtime {

inline constexpr const char* kContainerEnterCommand = "_container-enter";
// The variable that tells the agent where the gateway's socket is (inside the container).
inline constexpr const char* kGatewayVariable = "BATCHAI_CONTAINER_GATEWAY";
// Where the gateway's folder appears inside every container of the job.
inline constexpr const char* kGatewayContainerDir = "/.batchai/gateway";
// The MPI host name of node i of a container job (its hostfile line; the agent's first argument).
std::string container_host(std::size_t node);

// `batchai _container-enter <host> <command words...>`: the agent; returns the exit code.
int run_container_enter(const std::vector<std::string>& args);

struct GatewayOptions {
  std::filesystem::path dir;                        // host folder (0700) holding the socket
  std::map<std::string, std::string> containers;   // MPI host name -> container name
  std::vector<std::string> podman_base;            // podman and its global options
  // MPI host name -> what goes before podman where that node is another host (Slurm: srun).
  std::map<std::string, std::vector<std::string>> prefixes;
  std::map<std::string, std::string> env;          // podman's environment
  std::filesystem::path log;                       // the daemons' output (appended)
};

class ContainerGateway {
 public:
  // Listens on dir/socket and serves each agent on a thread of its own; SystemError when it cannot.
  ContainerGateway(ProcessLauncher& launcher, GatewayOptions options);
  ~ContainerGateway();  // stops serving, kills what it started and waits for its threads
  ContainerGateway(const ContainerGateway&) = delete;
  ContainerGateway& operator=(const ContainerGateway&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace batchai::runtime
