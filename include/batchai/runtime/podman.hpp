// Podman as jobs use it: which program (BATCHAI_PODMAN, else `podman` on PATH), the global
// options this machine kind needs (`--runtime runc` where runc is installed: crun refuses hybrid
// cgroup layouts), and running one podman command with a time bound, its output captured.
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "batchai/common/process.hpp"

namespace batchai::runtime {

struct PodmanResult {
  int exit_code = -1;
  bool timed_out = false;
  bool cancelled = false;
  std::string out;  // at most 64 KiB of each
  std::string err;
};

// The podman program: $BATCHAI_PODMAN when set (tests; a node with podman elsewhere), else "podman".
std::string podman_program();
// True when the podman program is found (a path, or a name on PATH).
bool podman_available();
// InvalidArgument saying to install the podman package when podman_available() is false; `what`
// names who needs it ("the job 'j1' runs in the container image 'x'").
void require_podman(const std::string& what);

// argv[0..]: the program and its global options (`--runtime runc` when runc is on PATH).
std::vector<std::string> podman_base();

// Runs `argv` with the node's base environment plus `env`, its output captured; kills it after
// `timeout` (timed_out set), or as soon as `cancelled` (asked every 100 ms) says so (cancelled set).
PodmanResult run_captured(ProcessLauncher& launcher, const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout, const std::map<std::string, std::string>& env = {},
                          const std::function<bool()>& cancelled = {});

// Runs `podman_base() + args` with the node's base environment plus `env` (values reach podman
// through its environment, never its argv); kills it after `timeout` (timed_out set).
PodmanResult run_podman(ProcessLauncher& launcher, const std::vector<std::string>& args,
                        std::chrono::milliseconds timeout, const std::map<std::string, std::string>& env = {},
                        const std::function<bool()>& cancelled = {});

// Where a podman command runs: this machine (no prefix), or another host through a prefix such as
// `srun --nodelist=NODE ...` with the variables that prefix needs.
struct PodmanRoute {
  std::vector<std::string> prefix;
  std::map<std::string, std::string> env;
  bool operator==(const PodmanRoute&) const = default;
};

// Runs `route.prefix + podman_base() + args` (see run_podman).
PodmanResult run_podman_on(ProcessLauncher& launcher, const PodmanRoute& route, const std::vector<std::string>& args,
                           std::chrono::milliseconds timeout, const std::function<bool()>& cancelled = {});

// Several podman commands at once ({route, args} each), all within one `timeout`; their results
// in the order given.
std::vector<PodmanResult> run_podman_all(ProcessLauncher& launcher,
                                         const std::vector<std::pair<PodmanRoute, std::vector<std::string>>>& commands,
                                         std::chrono::milliseconds timeout);

}  // namespace batchai::runtime
